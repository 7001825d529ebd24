"""Spec values given as Pulumi Inputs, used the ways a consumer program can get wrong or abuse."""

from __future__ import annotations

import pulumi
import pytest

from helpers.specs import tier, tier_path


def _spec(data, **fields):
    from gpu_platform.load import parse_spec

    return parse_spec({**data, **fields})


def _leaves(rec, *besides):
    return [r for r in rec.resources if r.custom and r.name not in besides]


@pytest.mark.parametrize(
    "text", ["<input#1:clusterName>", "<input#99999:clusterName>", "<input#2:nodeRoleArn|roleName>"]
)
def test_a_plain_value_that_looks_like_a_token_stays_literal(pulumi_mocks, dev_data, text):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        dev_data["monitoring"] = {"prometheus": {"valuesOverrides": {"note": text}}}
        spec = _spec(dev_data, clusterName=pulumi.Output.from_input("ml-dev"))
        GpuPlatform("plat", GpuPlatformArgs(spec=spec))

    rec = pulumi_mocks.run(program)
    assert rec.named("plat-observability-kube-prometheus-stack").inputs["values"]["note"] == text
    assert rec.named("plat-gpu-train-ng").inputs["clusterName"] == "ml-dev"  # the real token was still swapped


def test_a_resolved_value_that_looks_like_a_token_is_not_substituted_again(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        spec = _spec(dev_data, clusterName=pulumi.Output.from_input("ml-dev"))
        dev_data["aws"]["subnetIds"] = [pulumi.Output.from_input(f"subnet-{spec.cluster_name}")]
        GpuPlatform("plat", GpuPlatformArgs(spec=_spec(dev_data, clusterName=spec.cluster_name)))

    rec = pulumi_mocks.run(program)
    [subnet] = rec.named("plat-gpu-train-ng").inputs["subnetIds"]
    assert subnet.startswith("subnet-<input#") and "ml-dev" not in subnet


def test_depends_on_given_as_an_output_reaches_every_resource(pulumi_mocks, dev_spec):
    import pulumi_aws as aws

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        role = aws.iam.Role("gate", assume_role_policy="{}")  # Input[Sequence[Input[Resource]]] allows an Output
        GpuPlatform(
            "plat", GpuPlatformArgs(spec=dev_spec), pulumi.ResourceOptions(depends_on=pulumi.Output.from_input([role]))
        )

    rec = pulumi_mocks.run(program)
    leaves = _leaves(rec, "gate")
    assert leaves and [r.name for r in leaves if not rec.depends_on(r.name, "gate")] == []
    assert rec.depends_on("plat-queues-kueue", "plat-observability-kube-prometheus-stack")  # its own order stays


def test_an_output_set_by_model_copy_is_wired_like_one_given_to_the_model(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        spec = dev_spec.model_copy(update={"cluster_name": pulumi.Output.from_input("ml-copy")})  # not validated
        GpuPlatform("plat", GpuPlatformArgs(spec=spec))

    rec = pulumi_mocks.run(program)
    assert rec.named("plat-gpu-train-ng").inputs["clusterName"] == "ml-copy"
    assert rec.named("plat-gpu-train-ng").inputs["tags"]["gpu-platform/cluster"] == "ml-copy"
    opencost = rec.named("plat-observability-opencost").inputs["values"]
    assert opencost["opencost"]["exporter"]["defaultClusterId"] == "ml-copy"
    assert not any("Output" in repr(r.inputs) for r in rec.resources)  # no "Calling __str__ on an Output" text


@pytest.mark.parametrize(
    ("update", "path"),
    [
        ({"cluster_name": "ml dev!"}, "clusterName"),
        ({"label_domain": "Not A Domain"}, "labelDomain"),
    ],
)
def test_a_bad_value_set_by_model_copy_fails_before_anything_registers(pulumi_mocks, dev_spec, update, path):
    from gpu_platform import GpuPlatform, GpuPlatformArgs, SpecError

    def program():
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec.model_copy(update=update)))

    with pytest.raises(SpecError) as info:
        pulumi_mocks.run(program)
    assert isinstance(info.value, pulumi.RunError)  # shown by the engine as its message, without a traceback
    assert [f.path for f in info.value.findings] == [path]
    assert pulumi_mocks.resources == []


def test_an_output_set_by_model_copy_where_a_plain_value_belongs_names_the_field(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs, SpecError

    def program():
        pool = dev_spec.node_pools[0].model_copy(update={"max_size": pulumi.Output.from_input(4)})
        spec = dev_spec.model_copy(update={"node_pools": [pool, *dev_spec.node_pools[1:]]})
        GpuPlatform("plat", GpuPlatformArgs(spec=spec))

    with pytest.raises(SpecError) as info:
        pulumi_mocks.run(program)
    [finding] = info.value.findings
    assert finding.path == "nodePools[0].maxSize" and finding.message.startswith("a Pulumi Input; allowed: a plain")


def test_an_invalid_spec_given_to_the_platform_is_a_run_error(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs, SpecError
    from gpu_platform.spec import PlatformSpec

    tier(dev_data, "train")["pool"] = "no-such-pool"
    spec = PlatformSpec.model_validate(dev_data)  # structure only: the cross-field rules run in the platform

    def program():
        GpuPlatform("plat", GpuPlatformArgs(spec=spec))

    with pytest.raises(SpecError) as info:
        pulumi_mocks.run(program)
    assert isinstance(info.value, pulumi.RunError)
    assert any(f.path.startswith(tier_path(dev_data, "train")) for f in info.value.findings)
    assert pulumi_mocks.resources == []


@pytest.mark.parametrize("kind", ["aws-provider", "not-a-provider"])
def test_a_k8s_provider_that_is_not_one_is_refused(pulumi_mocks, dev_spec, kind):
    import pulumi_aws as aws

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        provider = aws.Provider("awsp", region="us-east-1") if kind == "aws-provider" else "kubeconfig.yaml"
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec, k8s_provider=provider))

    with pytest.raises(pulumi.RunError) as info:  # Pulumi would drop it and use the ambient kubeconfig
        pulumi_mocks.run(program)
    expected = "a provider of package 'aws'" if kind == "aws-provider" else "a str"
    assert str(info.value).startswith(f"k8s_provider: {expected}; allowed: a pulumi_kubernetes.Provider")
    assert [r.name for r in pulumi_mocks.resources if r.name.startswith("plat")] == []


def test_a_cluster_without_a_name_is_a_run_error(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs
    from gpu_platform.attach import ClusterInputError

    def program():
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec, cluster=object()))

    with pytest.raises(ClusterInputError) as info:
        pulumi_mocks.run(program)
    assert isinstance(info.value, pulumi.RunError) and str(info.value).startswith("cluster: object has no 'name'")


def test_a_deferred_value_moved_to_another_field_gets_that_fields_checks(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs
    from gpu_platform.names import role_arn_problem

    def program():
        first = _spec(dev_data, clusterName=pulumi.Output.from_input("ml-dev"))
        dev_data["clusterAutoscaler"] = {"enabled": True, "roleArn": first.cluster_name}  # a cluster name, not an ARN
        GpuPlatform("plat", GpuPlatformArgs(spec=_spec(dev_data, clusterName=first.cluster_name)))

    with pytest.raises(pulumi.RunError) as info:
        pulumi_mocks.run(program)
    assert str(info.value) == f"clusterAutoscaler.roleArn: {role_arn_problem('ml-dev')}"


def test_messages_quote_an_input_as_one_not_as_its_token(dev_data):
    from gpu_platform.validation import check_spec

    class _Input:  # any awaitable is an Input
        def __await__(self):
            yield from ()

    dev_data["aws"]["subnetIds"] = [_Input(), "subnet-b"]
    findings = check_spec(_spec(dev_data))
    [efa] = [f for f in findings if f.path == "nodePools[0].aws.subnetIds"]  # the subnets quoted in a note
    assert efa.message.startswith("['<Input subnetIds>', 'subnet-b']: EFA pool 'gpu-train'")
    assert not any("<input#" in f.message for f in findings)
