"""Shared test helpers: exporter label sets, promtool plumbing, strict CRD validation, planner demands and a
brute-force optimum."""
