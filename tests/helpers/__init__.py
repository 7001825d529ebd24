"""Shared test helpers: exporter label sets, promtool plumbing, strict CRD validation."""
