"""Property suite: whatever the input, only clean errors, bounded time and memory, no write outside the output dir.

Example counts are modest (the suite runs on 2 shared cores); benchmarks/bench_hostile.py measures at scale.
"""

from __future__ import annotations

import contextlib
import copy
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_platform.artifacts import Artifact
from gpu_platform.errors import GpuPlatformError, SpecError
from gpu_platform.inputs import InputLimitError, load_json, load_yaml
from gpu_platform.load import parse_spec
from gpu_platform.policy import PolicyConfig
from gpu_platform.policy.resources import UnsupportedDocumentError, from_document
from gpu_platform.policy.runner import run_policies
from gpu_platform.synth import render_all, write_artifacts
from helpers.paths import value_paths

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
DEV = yaml.safe_load((Path(__file__).resolve().parents[1] / "Pulumi.dev.yaml").read_text())["config"][
    "gpu-platform:platform"
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["../../x", "a\x00b", "/etc", "x" * 300, "1e30", ".nan", "", "CUSTOM"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)


DEV_PATHS = [p for p in value_paths(DEV) if p]


def _set(data, path, value):
    target = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


# A hang guard, not a speed test (speed is measured in benchmarks/bench_hostile.py): an unbounded
# expansion runs for minutes; a bounded one finishes far inside this on any machine.
HANG_S = 30


@SETTINGS
@given(mutations=st.lists(st.tuples(st.sampled_from(DEV_PATHS), values), min_size=1, max_size=3))
def test_any_mutated_spec_validates_and_renders_or_fails_cleanly(mutations):
    data = copy.deepcopy(DEV)
    for path, value in mutations:
        try:
            _set(data, path, value)
        except (KeyError, IndexError, TypeError):
            continue
    start = time.perf_counter()
    try:
        spec = parse_spec(data)
    except SpecError as e:
        assert e.findings and all(f.message for f in e.findings)
        assert len(str(e)) < 200_000  # the error names values, it never formats a whole expansion
    else:
        with contextlib.suppress(GpuPlatformError):
            render_all(spec)
    assert time.perf_counter() - start < HANG_S


@SETTINGS
@given(
    parts=st.lists(st.sampled_from(list("ab: -[]{}&*!,'\"\n#|>?%@`\\0.") + ["&a ", "*a", "<<: ", "\n  "]), max_size=150)
)
def test_any_yaml_text_parses_or_fails_cleanly(parts):
    text = "".join(parts)
    tracemalloc.start()
    try:
        load_yaml(text)
    except (InputLimitError, yaml.YAMLError):
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024


@SETTINGS
@given(width=st.integers(min_value=2, max_value=12), levels=st.integers(min_value=2, max_value=12))
def test_alias_bombs_of_any_shape_stop_at_the_limit(width, levels):
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    start = time.perf_counter()
    try:
        data = load_yaml("\n".join(lines))
    except InputLimitError as e:
        assert "aliases" in str(e)
    else:
        assert width**levels <= 100_000 * width and isinstance(data, dict)
    assert time.perf_counter() - start < HANG_S


@SETTINGS
@given(doc=values)
def test_any_document_is_audited_or_rejected_with_a_reason(doc):
    try:
        resources = from_document(doc)
    except UnsupportedDocumentError as e:
        assert str(e)
        return
    run_policies(resources, PolicyConfig())


state = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "aws:eks/nodeGroup:NodeGroup",
                "aws:autoscaling/group:Group",
                "gcp:container/cluster:Cluster",
                "kubernetes:karpenter.sh/v1:NodePool",
                "kubernetes:core/v1:Pod",
                "kubernetes:x.io/v1:Thing",
                "aws:ec2/launchTemplate:LaunchTemplate",
                "kubernetes:helm.sh/v3:Release",
            ]
        ),
        "urn": st.text(min_size=1, max_size=20),
    },
    optional={
        "inputs": st.dictionaries(
            st.sampled_from(
                [
                    "instanceTypes",
                    "launchTemplate",
                    "labels",
                    "taints",
                    "nodePools",
                    "spec",
                    "metadata",
                    "amiType",
                    "values",
                    "mixedInstancesPolicy",
                    "nodeConfig",
                    "userData",
                ]
            ),
            values,
            max_size=4,
        )
    },
)


@SETTINGS
@given(states=st.lists(state, max_size=6))
def test_any_shaped_export_runs_every_policy_without_crashing(states):
    resources = from_document({"deployment": {"manifest": {}, "resources": states}})
    run_policies(resources, PolicyConfig(pools={"gpu-train": "gpu-train"}))


@SETTINGS
@given(names=st.lists(st.text(min_size=0, max_size=30), min_size=1, max_size=4))
def test_synth_never_writes_outside_its_output_directory(tmp_path_factory, names):
    root = tmp_path_factory.mktemp("synth")
    out = root / "out"
    artifacts = [Artifact("nodepools", n, ({"name": n},)) for n in names]
    with contextlib.suppress(GpuPlatformError, OSError, ValueError):
        write_artifacts(artifacts, out)
    assert {p.name for p in root.iterdir()} <= {"out"}
    if out.exists():
        for p in out.rglob("*"):
            assert p.resolve().is_relative_to(out.resolve())


@SETTINGS
@given(text=st.binary(max_size=200))
def test_any_bytes_as_json_parse_or_fail_cleanly(text):
    with contextlib.suppress(ValueError):
        load_json(text)


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_deep_json_is_rejected(depth):
    with pytest.raises(ValueError, match="nested deeper"):
        load_json("[" * depth + "]" * depth)
