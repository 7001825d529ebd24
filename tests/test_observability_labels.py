"""Every label a rule, alert annotation or dashboard query names exists on the series the exporters emit.

The label sets come from `tests/helpers/exporters.py` (one fixture, with the upstream source of each set);
labels the rules create themselves (static labels of the catalog series, `label_replace` targets) count too.
"""

from __future__ import annotations

import json
import re

import pytest

from gpu_platform.load import load_spec
from gpu_platform.observability.dashboard import DASHBOARD_KEY, panel_queries, render_dashboard_configmap
from gpu_platform.observability.rules import rule_groups
from helpers.exporters import label_sets

SPECS = ["Pulumi.dev.yaml", "examples/aws-1000-a100.yaml", "examples/gke-a2.yaml"]
_GROUPING = re.compile(r"\b(?:by|on|without|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_MATCHER = re.compile(r"\{([^}]*)\}")
# The tail of label_replace(v, "dst", "replacement", "src", "regex"): no other PromQL call ends like this.
_LABEL_REPLACE = re.compile(r',\s*"([^"]+)",\s*"[^"]*",\s*"([^"]+)",\s*"[^"]*"\)')
_TEMPLATE = re.compile(r"\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)")


def used_labels(expr: str) -> set[str]:
    """Label names an expression reads: groupings, matchers and label_replace sources."""
    names = {n.strip() for g in _GROUPING.findall(expr) for n in g.split(",") if n.strip()}
    for body in _MATCHER.findall(re.sub(r'"[^"]*"', '""', expr)):
        names |= set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", body))
    names |= {src for _, src in _LABEL_REPLACE.findall(expr)}
    return names


def created_labels(rules: list[dict]) -> set[str]:
    """Labels the rules put on series themselves."""
    out: set[str] = set()
    for r in rules:
        out |= set(r.get("labels", {})) if "record" in r else set()
        out |= {dst for dst, _ in _LABEL_REPLACE.findall(r["expr"])}
    return out


def _rules(spec) -> list[dict]:
    return [r for g in rule_groups(spec) for r in g["rules"]]


def test_parser_finds_labels_in_every_position():
    expr = (
        'max by (gpu) (label_replace(x{xid=~"4|8",a!=""} * on (node) group_left (l) y, '
        '"node", "$1", "hostname", "(.+)")) > 0'
    )
    assert used_labels(expr) == {"hostname", "gpu", "xid", "a", "node", "l"}
    assert created_labels([{"alert": "A", "expr": expr}]) == {"node"}


@pytest.mark.parametrize("path", SPECS)
def test_every_label_a_rule_reads_is_emitted(path):
    spec = load_spec(path)
    rules = _rules(spec)
    known = set().union(*label_sets(spec).values()) | created_labels(rules)
    for r in rules:
        missing = used_labels(r["expr"]) - known
        missing |= {n for a in r.get("annotations", {}).values() for n in _TEMPLATE.findall(a)} - known
        assert not missing, f"{r.get('record') or r.get('alert')}: labels no exporter emits: {sorted(missing)}"


@pytest.mark.parametrize("path", SPECS)
def test_every_label_a_dashboard_query_reads_is_emitted(path):
    spec = load_spec(path)
    known = set().union(*label_sets(spec).values()) | created_labels(_rules(spec))
    dashboard = json.loads(render_dashboard_configmap(spec)["data"][DASHBOARD_KEY])
    for q in panel_queries(dashboard):
        assert not used_labels(q) - known, q


def test_the_old_dcgm_node_label_is_not_emitted(dev_spec):
    """dcgm-exporter 4.6.0-4.8.3 renamed `Hostname` to `hostname`: the fixture must not offer the old one."""
    labels = label_sets(dev_spec)["DCGM_FI_PROF_SM_ACTIVE"]
    assert "hostname" in labels and "Hostname" not in labels
