"""Fields that name existing objects take Pulumi Inputs in Python-built specs; a cluster or a provider can be given."""

from __future__ import annotations

import types

import pulumi
import pytest
from pulumi.runtime.rpc import _special_secret_sig, _special_sig_key

from gpu_platform.errors import Severity
from helpers.specs import pool, tier

SECRET = {_special_sig_key: _special_secret_sig}


def _secret_value(wrapped):
    assert isinstance(wrapped, dict) and wrapped.get(_special_sig_key) == _special_secret_sig, wrapped
    return wrapped["value"]


def _spec(data, **fields):
    from gpu_platform.load import parse_spec

    return parse_spec({**data, **fields})


def _karpenter(data):
    """The dev spec with its training pool on Karpenter (its EC2NodeClass embeds the node role name)."""
    pool(data, "gpu-train").setdefault("aws", {})["provisioner"] = "karpenter"
    return data


def test_inputs_are_deferred_and_say_so(pulumi_mocks, dev_data):
    from gpu_platform.deferred import Deferred
    from gpu_platform.validation import check_spec

    seen = {}

    def program():
        dev_data["aws"]["nodeRoleArn"] = pulumi.Output.secret("arn:aws:iam::111122223333:role/gpu-nodes")
        dev_data["aws"]["subnetIds"] = [pulumi.Output.from_input("subnet-a"), "subnet-b"]
        spec = _spec(dev_data, clusterName=pulumi.Output.from_input("ml-dev"))
        seen["spec"], seen["findings"] = spec, check_spec(spec)

    pulumi_mocks.run(program)
    spec = seen["spec"]
    assert isinstance(spec.cluster_name, Deferred) and isinstance(spec.aws.node_role_arn, Deferred)
    assert spec.aws.subnet_ids[1] == "subnet-b" and not isinstance(spec.aws.subnet_ids[1], Deferred)
    notes = {f.path: f for f in seen["findings"] if "Pulumi Input" in f.message}
    assert set(notes) == {"clusterName", "aws.nodeRoleArn", "aws.subnetIds[0]"}
    assert all(f.severity is Severity.INFO and "checked when it resolves" in f.message for f in notes.values())


def test_what_shapes_the_platform_stays_plain(pulumi_mocks, dev_data):
    from gpu_platform.errors import SpecError

    def program():
        pool(dev_data, "gpu-train")["maxSize"] = pulumi.Output.from_input(4)
        tier(dev_data, "train")["pool"] = pulumi.Output.from_input("gpu-train")
        _spec(dev_data)

    with pytest.raises(SpecError) as info:
        pulumi_mocks.run(program)
    assert {f.path for f in info.value.findings} == {"nodePools[0].maxSize", "tiers[0].pool"}
    assert all(
        f.message.startswith("a Pulumi Input; allowed: a plain value. Only fields that name existing objects")
        for f in info.value.findings
    )
    assert pulumi_mocks.resources == []


def test_outputs_and_secrets_reach_cloud_and_kubernetes_resources(pulumi_mocks, dev_data):
    import pulumi_aws as aws

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        role = aws.iam.Role("gpu-nodes", name="gpu-nodes", assume_role_policy="{}")
        subnet = aws.ec2.Subnet("a", vpc_id="vpc-1", cidr_block="10.0.0.0/24")
        dev_data["aws"] |= {
            "nodeRoleArn": role.arn,  # the mock gives arn:aws:iam::111122223333:role/gpu-nodes
            "subnetIds": [subnet.id],
        }
        pool(dev_data, "gpu-infer").setdefault("aws", {})["kmsKeyId"] = pulumi.Output.secret("kms-key-1")
        dev_data["clusterAutoscaler"] = {
            "enabled": True,
            "roleArn": pulumi.Output.secret("arn:aws:iam::111122223333:role/ca"),
        }
        spec = _spec(_karpenter(dev_data), clusterName=pulumi.Output.from_input("ml-dev"))
        GpuPlatform("plat", GpuPlatformArgs(spec=spec))

    rec = pulumi_mocks.run(program)
    ng = rec.named("plat-gpu-infer-ng").inputs
    assert ng["clusterName"] == "ml-dev" and ng["subnetIds"] == ["a-id"]
    assert ng["nodeRoleArn"] == "arn:aws:iam::111122223333:role/gpu-nodes"
    assert rec.depends_on("plat-gpu-infer-ng", "gpu-nodes") and rec.depends_on("plat-gpu-infer-ng", "a")
    assert ng["tags"]["gpu-platform/cluster"] == "ml-dev"
    lt = rec.named("plat-gpu-infer-lt").inputs
    mappings = _secret_value(lt["blockDeviceMappings"])  # the KMS key is secret, so is what embeds it
    assert mappings[0]["ebs"]["kmsKeyId"] == "kms-key-1"
    assert lt["description"] == "gpu-platform GPU nodes of ml-dev/gpu-infer"
    node_class = next(r for r in rec.resources if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert node_class.inputs["spec"]["role"] == "gpu-nodes"  # the role name, derived once the ARN resolves
    assert {"tags": {"aws:eks:cluster-name": "ml-dev"}} in node_class.inputs["spec"]["securityGroupSelectorTerms"]
    ca = _secret_value(rec.named("plat-node-addons-cluster-autoscaler").inputs["values"])
    assert ca["autoDiscovery"]["clusterName"] == "ml-dev"
    assert ca["rbac"]["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"].endswith(":role/ca")
    opencost = rec.named("plat-observability-opencost").inputs["values"]
    assert opencost["opencost"]["exporter"]["defaultClusterId"] == "ml-dev"
    assert not any("<input#" in repr(r.inputs) or "<input#" in r.name for r in rec.resources)


def test_a_secret_cluster_name_stays_secret(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        GpuPlatform("plat", GpuPlatformArgs(spec=_spec(dev_data, clusterName=pulumi.Output.secret("ml-dev"))))

    rec = pulumi_mocks.run(program)
    assert _secret_value(rec.named("plat-gpu-train-ng").inputs["clusterName"]) == "ml-dev"
    assert _secret_value(rec.named("plat-gpu-train-ng").inputs["tags"])["gpu-platform/cluster"] == "ml-dev"
    assert _secret_value(rec.named("plat-node-health-node-monitoring-agent").inputs["clusterName"]) == "ml-dev"


def test_a_bad_resolved_value_fails_with_the_fields_message(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs
    from gpu_platform.names import cluster_name_problem

    def program():
        GpuPlatform("plat", GpuPlatformArgs(spec=_spec(dev_data, clusterName=pulumi.Output.from_input("ml dev!"))))

    with pytest.raises(pulumi.RunError) as info:  # shown by the engine as its message, without a traceback
        pulumi_mocks.run(program)
    assert str(info.value) == f"clusterName: {cluster_name_problem('ml dev!')}"


def test_an_eks_cluster_passed_in_names_the_platforms_cluster_and_is_waited_for(pulumi_mocks, dev_spec):
    import pulumi_aws as aws

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        cluster = aws.eks.Cluster(
            "eks", name="ml-dev", role_arn="arn:aws:iam::111122223333:role/eks", vpc_config={"subnet_ids": ["subnet-a"]}
        )
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec, cluster=cluster))

    rec = pulumi_mocks.run(program)
    leaves = [r for r in rec.resources if r.custom and r.name != "eks"]
    assert [r.name for r in leaves if not rec.depends_on(r.name, "eks")] == []
    assert rec.named("plat-gpu-train-ng").inputs["clusterName"] == "ml-dev"


def test_a_cluster_whose_name_differs_from_the_spec_fails_clearly(pulumi_mocks, dev_spec):
    import pulumi_aws as aws

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        cluster = aws.eks.Cluster(
            "eks", name="other", role_arn="arn:aws:iam::111122223333:role/eks", vpc_config={"subnet_ids": ["subnet-a"]}
        )
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec, cluster=cluster))

    with pytest.raises(pulumi.RunError) as info:
        pulumi_mocks.run(program)
    assert "clusterName: the cluster passed in is named 'other', the spec's clusterName is 'ml-dev'" in str(info.value)


def test_a_pulumi_eks_style_cluster_gives_name_node_role_and_provider(pulumi_mocks, dev_data):
    import pulumi_kubernetes as k8s

    from gpu_platform import GpuPlatform, GpuPlatformArgs
    from gpu_platform.spec import PlatformSpec

    dev_data["aws"].pop("nodeRoleArn")

    def program():
        provider = k8s.Provider("eks-k8s", kubeconfig="{}")
        role = types.SimpleNamespace(arn=pulumi.Output.from_input("arn:aws:iam::111122223333:role/eks-nodes"))
        cluster = types.SimpleNamespace(  # the attributes of a pulumi_eks.Cluster the platform reads
            eks_cluster=types.SimpleNamespace(name=pulumi.Output.from_input("ml-dev")),
            instance_roles=pulumi.Output.from_input([role]),
            provider=provider,
        )
        spec = PlatformSpec.model_validate(dev_data)  # no role yet: the platform validates it with the cluster's
        GpuPlatform("plat", GpuPlatformArgs(spec=spec, cluster=cluster))

    rec = pulumi_mocks.run(program)
    ng = rec.named("plat-gpu-train-ng")
    assert ng.inputs["nodeRoleArn"] == "arn:aws:iam::111122223333:role/eks-nodes"
    assert ng.provider == "", "AWS resources keep the default AWS provider"
    provider_ref = f"{rec.named('eks-k8s').urn}::eks-k8s-id"
    k8s_leaves = [r for r in rec.resources if r.custom and r.type.startswith("kubernetes:") and r.name != "eks-k8s"]
    assert k8s_leaves and {r.provider for r in k8s_leaves} == {provider_ref}


def test_a_provider_and_protect_in_opts_reach_grandchildren(pulumi_mocks, dev_spec):
    import pulumi_kubernetes as k8s

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec), pulumi.ResourceOptions(providers=[provider], protect=True))

    rec = pulumi_mocks.run(program)
    kueue = rec.named("plat-queues-kueue")  # a grandchild: platform -> queues component -> release
    assert kueue.parent_name == "plat-queues" and kueue.protect
    assert kueue.provider == f"{rec.named('k8s').urn}::k8s-id"
    assert rec.named("plat-gpu-train-ng").protect


def test_k8s_provider_argument_goes_to_the_kubernetes_children(pulumi_mocks, dev_spec):
    import pulumi_kubernetes as k8s

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec, k8s_provider=provider))

    rec = pulumi_mocks.run(program)
    ref = f"{rec.named('k8s').urn}::k8s-id"
    assert rec.named("plat-queues-kueue").provider == ref
    assert {r.provider for r in rec.resources if r.parent_name == "plat-gpu-operator" and r.custom} == {ref}
    assert rec.named("plat-gpu-train-ng").provider == ""


def test_an_object_without_a_name_is_not_a_cluster(dev_spec):
    from gpu_platform.attach import ClusterInputError, spec_with_cluster

    with pytest.raises(ClusterInputError, match="has no 'name' and no 'eks_cluster.name'"):
        spec_with_cluster(dev_spec, object())


def test_gcp_project_and_service_account_take_inputs(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    dev_data.pop("aws")
    for p in dev_data["nodePools"]:
        p["instanceType"] = "a2-ultragpu-8g"
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 2}
    for t in dev_data["tiers"]:
        t.pop("resource", None)  # GKE advertises MIG partitions as nvidia.com/gpu

    def program():
        gcp = {
            "project": pulumi.Output.from_input("ml-project"),
            "location": "us-central1",
            "zones": ["us-central1-a"],
            "serviceAccount": pulumi.Output.secret("gpu@ml-project.iam.gserviceaccount.com"),
        }
        GpuPlatform("plat", GpuPlatformArgs(spec=_spec(dev_data, cloud="gcp", gcp=gcp)))

    rec = pulumi_mocks.run(program)
    node_pool = rec.named("plat-gpu-train-np").inputs
    assert node_pool["project"] == "ml-project" and node_pool["cluster"] == "ml-dev"
    assert _secret_value(node_pool["nodeConfig"])["serviceAccount"] == "gpu@ml-project.iam.gserviceaccount.com"


def test_the_platform_registers_its_outputs(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    outputs = rec.outputs[rec.named("plat").urn]
    assert set(outputs) == {
        "nodePoolNames",
        "tierNames",
        "teams",
        "tiers",
        "nodeGroups",
        "prometheusUrl",
        "opencostUrl",
    }
    assert outputs["teams"]["research"]["localQueue"] == "research"
    assert outputs["nodeGroups"]["gpu-train"] == "gpu-train-2026113000000000000000000a"
    assert set(outputs["nodeGroups"]) == {p.name for p in dev_spec.node_pools}
