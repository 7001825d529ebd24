"""The component provider driven as the engine drives it: GetSchema and Construct over gRPC against a stub resource
monitor, compared with the Python component under mocks on the same spec."""

from __future__ import annotations

import json

import pytest
from google.protobuf import json_format
from pulumi.runtime.proto import engine_pb2

from conftest import ROOT
from gpu_platform.errors import Severity
from helpers.provider_rpc import STACK_URN, ProviderProcess, property_errors, python_side
from helpers.specs import pool, team

TOKEN = "gpu-platform:index:GpuPlatform"
OUTPUT_VALUE = {"4dabf18193072939515e22adb298388d": "d0e6a833031e9bbcd3f4e8bde6ca49a4"}  # rpc output value sig
CLUSTER = "urn:pulumi:dev::gpu-platform::aws:eks/cluster:Cluster::ml-dev"


@pytest.fixture(scope="module")
def provider():
    with ProviderProcess() as p:
        yield p


@pytest.fixture
def fresh(provider):
    """The provider with an empty record of registrations and logs."""
    provider.monitor.registered.clear()
    provider.monitor.outputs.clear()
    provider.engine.logs.clear()
    return provider


def test_get_schema_returns_the_committed_schema(provider):
    assert json.loads(provider.schema()) == json.loads((ROOT / "schema.json").read_text())


@pytest.mark.parametrize("source", ["Pulumi.dev.yaml", "examples/gke-a2.yaml"])
def test_construct_registers_what_the_python_component_registers(fresh, source):
    from gpu_platform.load import read_spec_data

    data = read_spec_data(ROOT / source)
    expected, expected_outputs = python_side(data, "gpu-platform")
    response = fresh.construct(TOKEN, "gpu-platform", data, parent=STACK_URN)
    got = {r.urn: r for r in fresh.monitor.registered}
    assert len(got) == len(fresh.monitor.registered), "no URN registered twice"
    assert sorted(got) == sorted(r.urn for r in expected)
    for want in expected:  # type, name, parent, inputs, aliases, dependencies, protect, retainOnDelete
        assert got[want.urn] == want, want.urn
    platform = f"urn:pulumi:dev::gpu-platform::pulumi:pulumi:Stack${TOKEN}::gpu-platform"
    assert response.urn == platform
    expected_outputs.pop(STACK_URN, None)
    assert fresh.monitor.outputs == expected_outputs
    assert json_format.MessageToDict(response.state) == expected_outputs[platform]


@pytest.mark.parametrize("source", ["Pulumi.dev.yaml", "examples/gke-a2.yaml"])
def test_outputs_match_their_schema_types(fresh, source):
    import jsonschema

    from gpu_platform.load import read_spec_data
    from helpers.pulumi_schema import resource_outputs_schema

    data = read_spec_data(ROOT / source)
    response = fresh.construct(TOKEN, "gpu-platform", data, parent=STACK_URN)
    state = json_format.MessageToDict(response.state)
    validator = jsonschema.Draft202012Validator(
        resource_outputs_schema(json.loads((ROOT / "schema.json").read_text()), TOKEN)
    )
    assert [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(state)] == []
    assert state["nodeGroups"].keys() == set(state["nodePoolNames"])
    for tier in state["tiers"].values():
        assert tier["nodeSelector"] == {f"{data['labelDomain']}/gpu-pool": tier["pool"]}


def test_validation_warnings_reach_the_engine_log(fresh):
    from gpu_platform import parse_spec
    from gpu_platform.load import read_spec_data
    from gpu_platform.validation import check_spec

    data = read_spec_data(ROOT / "Pulumi.dev.yaml")
    fresh.construct(TOKEN, "gpu-platform", data, parent=STACK_URN)
    warnings = {m for sev, m, _ in fresh.engine.logs if sev == engine_pb2.WARNING}
    expected = {str(f) for f in check_spec(parse_spec(data)) if f.severity is Severity.WARNING}
    assert expected and expected <= warnings


def _python_error(data) -> str:
    from gpu_platform import SpecError, parse_spec

    with pytest.raises(SpecError) as e:
        parse_spec(data)
    return str(e.value)


@pytest.mark.parametrize(
    "break_it",
    [
        lambda d: pool(d, "gpu-infer")["sharing"].update(migLayout={"3g.40gb": 2, "1g.10gb": 1}),  # does not fit a GPU
        lambda d: pool(d, "gpu-train")["sharing"].update(mode="shared"),  # not an enum value
        lambda d: (pool(d, "gpu-dev").update(minSize=9, maxSize=4), team(d, "research")["quotas"].update(nope=1)),
        lambda d: pool(d, "gpu-ci").update(maxSize=2.5),  # a fraction for an integer
        lambda d: pool(d, "gpu-ci")["sharing"].update(replicas=True),
    ],
    ids=["mig-layout", "enum", "two-errors", "fraction", "bool-for-int"],
)
def test_bad_spec_fails_with_the_python_apis_errors_and_registers_nothing(fresh, dev_data, break_it):
    import grpc

    break_it(dev_data)
    # a map's keys arrive in the wire's order (protobuf Struct), not the program's: messages quote them so
    expected = _python_error(json.loads(json.dumps(dev_data, sort_keys=True)))
    with pytest.raises(grpc.RpcError) as e:
        fresh.construct(TOKEN, "gpu-platform", dev_data, parent=STACK_URN)
    message = e.value.details()
    assert expected in message, f"{message}\n--- expected ---\n{expected}"
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "File " not in message, "no traceback"
    # each finding also as the engine's input property error, which the CLI prints per property
    assert [f"  - {path}: {reason}" for path, reason in property_errors(e.value)] == expected.splitlines()[1:]
    assert fresh.monitor.registered == []


def test_a_known_output_is_used_and_its_resource_waited_for(fresh, dev_data):
    dev_data["clusterName"] = {**OUTPUT_VALUE, "value": "ml-dev", "dependencies": [CLUSTER]}
    dev_data["aws"]["nodeRoleArn"] = {
        **OUTPUT_VALUE,
        "value": "arn:aws:iam::111122223333:role/gpu-nodes",
        "dependencies": [CLUSTER],
    }
    fresh.construct(TOKEN, "gpu-platform", dev_data, parent=STACK_URN)
    groups = [r for r in fresh.monitor.registered if r.type == "aws:eks/nodeGroup:NodeGroup"]
    assert groups and all(r.inputs["clusterName"] == "ml-dev" for r in groups)
    assert all(r.inputs["nodeRoleArn"] == "arn:aws:iam::111122223333:role/gpu-nodes" for r in groups)
    assert all(CLUSTER in r.dependencies for r in groups), "what uses the value waits for its resource"


def test_depends_on_reaches_every_child(fresh, dev_data):
    fresh.construct(TOKEN, "gpu-platform", dev_data, parent=STACK_URN, depends_on=(CLUSTER,))
    children = [r for r in fresh.monitor.registered if r.parent != STACK_URN]
    assert len(children) > 90 and all(CLUSTER in r.dependencies for r in children)


UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # rpc's unknown value


def test_an_unknown_output_is_deferred_in_a_preview(fresh, dev_data):
    dev_data["clusterName"] = {**OUTPUT_VALUE, "dependencies": [CLUSTER]}  # the cluster is not created yet
    fresh.construct(TOKEN, "gpu-platform", dev_data, parent=STACK_URN, preview=True)
    groups = [r for r in fresh.monitor.registered if r.type == "aws:eks/nodeGroup:NodeGroup"]
    assert len(groups) == 4 and all(r.inputs["clusterName"] == UNKNOWN for r in groups)
    assert all(CLUSTER in r.dependencies for r in groups)


def test_a_secret_output_stays_secret(fresh, dev_data):
    dev_data["aws"]["nodeRoleArn"] = {
        **OUTPUT_VALUE,
        "value": "arn:aws:iam::111122223333:role/gpu-nodes",
        "secret": True,
    }
    fresh.construct(TOKEN, "gpu-platform", dev_data, parent=STACK_URN)
    groups = [r for r in fresh.monitor.registered if r.type == "aws:eks/nodeGroup:NodeGroup"]
    sig = "4dabf18193072939515e22adb298388d"
    assert groups and all(r.inputs["nodeRoleArn"][sig] == "1b47061264138c4ac30d75fd1eb44270" for r in groups)
    assert all(r.inputs["nodeRoleArn"]["value"] == "arn:aws:iam::111122223333:role/gpu-nodes" for r in groups)


def test_an_output_that_resolves_to_a_bad_value_fails_naming_the_field(dev_data):
    import grpc

    dev_data["clusterName"] = {**OUTPUT_VALUE, "value": "ml dev!", "dependencies": [CLUSTER]}
    # its own process: what registers before the value resolves may still be in flight when Construct fails
    with ProviderProcess() as provider, pytest.raises(grpc.RpcError) as e:
        provider.construct(TOKEN, "gpu-platform", dev_data, parent=STACK_URN)
    assert "clusterName: 'ml dev!' is not a cluster name" in e.value.details()


def test_an_output_where_the_spec_needs_a_plain_value_names_the_fields_that_take_outputs(fresh, dev_data):
    import grpc

    dev_data["labelDomain"] = {**OUTPUT_VALUE, "value": "gpu.example.com", "dependencies": [CLUSTER]}
    with pytest.raises(grpc.RpcError) as e:
        fresh.construct(TOKEN, "gpu-platform", dev_data, parent=STACK_URN)
    assert (
        "labelDomain: a Pulumi Input; allowed: a plain value. Only fields that name existing objects take"
        in e.value.details()
    )
    assert fresh.monitor.registered == []
