"""Shared test helpers: spec parts found by name and spec variants, admission requests, exporter label sets,
promtool plumbing, strict CRD validation, Pulumi mock answers, planner demands and a brute-force optimum."""
