"""The component provider under hostile Construct requests, as a program in another language (or a raw request)
can send them: every bad input fails with the Python API's finding for that field, as the engine's input property
errors, nothing is registered, and the same provider process serves the next request."""

from __future__ import annotations

import copy

import grpc
import pytest
import yaml

from conftest import DEV_STACK
from helpers.provider_rpc import STACK_URN, ProviderProcess, property_errors

TOKEN = "gpu-platform:index:GpuPlatform"
SIG = "4dabf18193072939515e22adb298388d"
SECRET = {SIG: "1b47061264138c4ac30d75fd1eb44270"}
OUTPUT = {SIG: "d0e6a833031e9bbcd3f4e8bde6ca49a4"}
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # rpc's unknown value
CLUSTER = "urn:pulumi:dev::gpu-platform::aws:eks/cluster:Cluster::ml-dev"
DEV = yaml.safe_load(DEV_STACK.read_text())["config"]["gpu-platform:platform"]
PLAIN = "a Pulumi Input; allowed: a plain value"


@pytest.fixture(scope="module")
def provider():
    with ProviderProcess() as p:
        yield p


def _deep(levels: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(levels):
        value = {"a": value}
    return value


def _pool(d, i):
    return d["nodePools"][i]


# (id, change to the dev spec, property path, what the reason says)
CASES = [
    ("object-as-string", lambda d: d.update(scheduling="x"), "scheduling", "not a mapping; allowed: a mapping"),
    ("object-as-list", lambda d: d.update(monitoring=[1]), "monitoring", "not a mapping; allowed: a mapping"),
    ("list-item-as-number", lambda d: d.update(nodePools=[1]), "nodePools[0]", "not a mapping; allowed: a mapping"),
    (
        "object-as-number",
        lambda d: _pool(d, 0).update(sharing=3),
        "nodePools[0].sharing",
        "not a mapping; allowed: a mapping",
    ),
    ("int-as-list", lambda d: _pool(d, 0).update(maxSize=[1]), "nodePools[0].maxSize", "valid integer"),
    ("int-as-word", lambda d: _pool(d, 0).update(maxSize="x"), "nodePools[0].maxSize", "valid integer"),
    ("int-infinite", lambda d: _pool(d, 0).update(maxSize=float("inf")), "nodePools[0].maxSize", "finite number"),
    ("int-nan", lambda d: _pool(d, 0).update(maxSize=float("nan")), "nodePools[0].maxSize", "finite number"),
    (
        "map-value-as-word",
        lambda d: _pool(d, 1)["sharing"].update(migLayout={"3g.40gb": "x"}),
        "nodePools[1].sharing.migLayout.3g.40gb",
        "valid integer",
    ),
    ("null-required", lambda d: d.update(cloud=None), "cloud", "missing; this field is required"),
    (
        "null-required-nested",
        lambda d: _pool(d, 0)["sharing"].update(mode=None),
        "nodePools[0].sharing.mode",
        "missing; this field is required",
    ),
    ("unknown-key-top", lambda d: d.update(bogus=1), "bogus", "unknown key"),
    (
        "unknown-key-nested",
        lambda d: _pool(d, 1).update(minsize=3),
        "nodePools[1].minsize",
        "unknown key (did you mean 'minSize'?)",
    ),
    (
        "unknown-key-deep",
        lambda d: d["scheduling"]["kueue"].update(enabeld=False),
        "scheduling.kueue.enabeld",
        "did you mean 'enabled'?",
    ),
    (
        "enum-as-list",
        lambda d: _pool(d, 0)["sharing"].update(mode=["mig"]),
        "nodePools[0].sharing.mode",
        "'exclusive', 'mig', 'time-slicing' or 'mps'",
    ),
    (
        "nan-in-values",
        lambda d: d.update(gpuOperator={"valuesOverrides": {"a": [float("nan")]}}),
        "gpuOperator.valuesOverrides.a[0]",
        "nan: not a finite number",
    ),
    (
        "inf-in-values",
        lambda d: d.update(gpuOperator={"valuesOverrides": {"b": float("-inf")}}),
        "gpuOperator.valuesOverrides.b",
        "-inf: not a finite number",
    ),
    (
        "too-many-values",
        lambda d: d.update(gpuOperator={"valuesOverrides": {f"k{i}": i for i in range(150_000)}}),
        "",
        "more than 100,000 values",
    ),
    ("too-deep", lambda d: d.update(gpuOperator={"valuesOverrides": _deep(80)}), "", "nesting depth over 64"),
    (
        "enforcement-level",
        lambda d: d.update(policy={"enforcement": {"gpu-budget": "sometimes"}}),
        "policy.enforcement.gpu-budget",
        "'sometimes' is not an enforcement level of gpu-budget; allowed: advisory, mandatory",
    ),
    (
        "enforcement-policy-name",
        lambda d: d.update(policy={"enforcement": {"gpu-pool-classified": "advisory"}}),
        "policy.enforcement.gpu-pool-classified",
        "not a policy of the pack; allowed: gpu-budget",
    ),
    ("unknown-shaping-field", lambda d: _pool(d, 0).update(maxSize=UNKNOWN), "nodePools[0].maxSize", PLAIN),
    (
        "unknown-output-shaping-field",
        lambda d: _pool(d, 0).update(maxSize={**OUTPUT, "dependencies": [CLUSTER]}),
        "nodePools[0].maxSize",
        PLAIN,
    ),
    (
        "secret-shaping-field",
        lambda d: d.update(labelDomain={**SECRET, "value": "gpu.example.com"}),
        "labelDomain",
        PLAIN,
    ),
    (
        "secret-output-shaping-field",
        lambda d: _pool(d, 0).update(maxSize={**OUTPUT, "value": 16, "secret": True}),
        "nodePools[0].maxSize",
        PLAIN,
    ),
]


@pytest.mark.parametrize("change,path,reason", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_input_fails_naming_the_field_and_registers_nothing(provider, change, path, reason):
    data = copy.deepcopy(DEV)
    change(data)
    provider.monitor.registered.clear()
    with pytest.raises(grpc.RpcError) as e:
        provider.construct(TOKEN, "hostile", data, parent=STACK_URN, preview=True)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "File " not in e.value.details()
    errors = property_errors(e.value)
    assert any(p == path and reason in r for p, r in errors), errors
    assert provider.monitor.registered == []


def test_the_provider_serves_the_next_request_after_every_hostile_one(provider):
    provider.monitor.registered.clear()
    provider.construct(TOKEN, "after", copy.deepcopy(DEV), parent=STACK_URN)
    assert len(provider.monitor.registered) > 90


def test_an_unknown_in_a_field_that_takes_inputs_is_deferred_in_a_preview(provider):
    data = copy.deepcopy(DEV)
    data["aws"]["subnetIds"] = [UNKNOWN, "subnet-b"]
    provider.monitor.registered.clear()
    provider.construct(TOKEN, "deferred", data, parent=STACK_URN, preview=True)
    groups = [r for r in provider.monitor.registered if r.type == "aws:eks/nodeGroup:NodeGroup"]
    assert len(groups) == 4 and all(r.inputs["subnetIds"] == UNKNOWN for r in groups), "a list with an unknown item"


def test_every_error_is_reported_at_once(provider):
    data = copy.deepcopy(DEV)
    data.update(scheduling="x", bogus=1)
    _pool(data, 0).update(maxSize=[1])
    with pytest.raises(grpc.RpcError) as e:
        provider.construct(TOKEN, "hostile", data, parent=STACK_URN)
    paths = {p for p, _ in property_errors(e.value)}
    assert {"scheduling", "bogus", "nodePools[0].maxSize"} <= paths


def test_the_python_api_refuses_nan_in_free_form_values_too():
    from gpu_platform import SpecError, parse_spec

    data = copy.deepcopy(DEV)
    data["monitoring"]["prometheus"] = {"valuesOverrides": {"grafana": {"ratio": float("nan")}}}
    with pytest.raises(SpecError) as e:
        parse_spec(data)
    assert [str(f) for f in e.value.findings] == [
        "monitoring.prometheus.valuesOverrides.grafana.ratio: nan: not a finite number; allowed: a finite number"
    ]


def test_a_secret_inside_values_overrides_stays_secret_in_the_release(provider):
    data = copy.deepcopy(DEV)
    data["gpuOperator"] = {
        "valuesOverrides": {"dcgmExporter": {"token": {**OUTPUT, "value": "s3cret", "secret": True}}}
    }
    provider.monitor.registered.clear()
    provider.construct(TOKEN, "secret", data, parent=STACK_URN)
    [release] = [r for r in provider.monitor.registered if r.name == "secret-gpu-operator-release"]
    assert release.inputs["values"]["dcgmExporter"]["token"] == {**SECRET, "value": "s3cret"}
