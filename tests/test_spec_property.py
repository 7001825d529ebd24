"""Property: whatever a mutated spec holds, the library answers with a validated spec or a SpecError, never a crash."""

from __future__ import annotations

import copy

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DEV_STACK
from gpu_platform.errors import Severity, SpecError
from gpu_platform.load import parse_spec
from gpu_platform.synth import render_all
from gpu_platform.validation import check_spec
from helpers.paths import value_paths

BASE = yaml.safe_load(DEV_STACK.read_text())["config"]["gpu-platform:platform"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 100),
    st.floats(allow_nan=False, width=16),
    st.sampled_from(
        [
            "",
            "gpu-train",
            "mig",
            "exclusive",
            "time-slicing",
            "mps",
            "nvidia.com/gpu",
            "nvidia.com/mig-1g.10gb",
            "3g.40gb",
            "p4d.24xlarge",
            "a2-highgpu-8g",
            "research",
            "x" * 70,
        ]
    ),
    st.text(max_size=8),
)
_keys = st.one_of(st.text(max_size=6), st.integers(0, 3), st.none())  # YAML allows non-string keys
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=6,
)


ALL_PATHS = [p for p in value_paths(BASE) if p]


@st.composite
def mutated(draw):
    data = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent = data
        try:
            for part in path[:-1]:
                parent = parent[part]
            action = draw(st.sampled_from(["set", "delete", "add"]))
            if action == "set":
                parent[path[-1]] = draw(values)
            elif action == "delete" and isinstance(parent, dict):
                del parent[path[-1]]
            elif isinstance(parent, dict):
                parent[draw(st.one_of(st.text(min_size=1, max_size=6), st.integers(0, 3)))] = draw(values)
        except (KeyError, IndexError, TypeError):
            continue
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_give_a_spec_or_a_spec_error(data):
    try:
        spec = parse_spec(data)
    except SpecError as e:
        assert e.findings, "a SpecError always carries at least one finding"
        assert all(isinstance(f.path, str) and f.message for f in e.findings)
        return
    assert not [f for f in check_spec(spec) if f.severity is Severity.ERROR]
    render_all(spec)
