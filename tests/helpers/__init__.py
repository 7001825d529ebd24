"""Shared test helpers: exporter label sets and promtool plumbing."""
