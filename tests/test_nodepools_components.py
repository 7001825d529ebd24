"""EksGpuNodePool and GkeGpuNodePool under Pulumi mocks: type tokens, names, parents, options and inputs."""

from __future__ import annotations

from gpu_platform.load import parse_spec
from gpu_platform.nodepools.eks import CA_TEMPLATE_PREFIX
from helpers.specs import gke_data, pool

LT, NG, TAG = "aws:ec2/launchTemplate:LaunchTemplate", "aws:eks/nodeGroup:NodeGroup", "aws:autoscaling/tag:Tag"
NP = "gcp:container/nodePool:NodePool"


def _eks(rec, spec, pool):
    from gpu_platform.nodepools.aws import EksGpuNodePool, EksGpuNodePoolArgs

    return rec.run(lambda: EksGpuNodePool(pool, EksGpuNodePoolArgs(spec=spec, pool=pool)))


def test_eks_pool_children_types_names_parents(pulumi_mocks, dev_spec):
    rec = _eks(pulumi_mocks, dev_spec, "gpu-infer")
    comp = rec.named("gpu-infer")
    assert comp.type == "gpu-platform:index:EksGpuNodePool" and comp.custom is False
    assert rec.named("gpu-infer-lt").type == LT and rec.named("gpu-infer-ng").type == NG
    children = [r for r in rec.resources if r.name != "gpu-infer"]
    assert children and all(r.parent_name == "gpu-infer" for r in children)
    tags = rec.of_type(TAG)
    assert len(tags) == 9  # 3 labels + 2 taints + 3 MIG profiles + nvidia.com/gpu=0
    by_key = {t.inputs["tag"]["key"]: t for t in tags}
    mig = by_key[f"{CA_TEMPLATE_PREFIX}/resources/nvidia.com/mig-1g.10gb"]
    assert mig.name == "gpu-infer-asg-resources/nvidia.com/mig-1g.10gb"
    assert mig.inputs["tag"] == {
        "key": f"{CA_TEMPLATE_PREFIX}/resources/nvidia.com/mig-1g.10gb",
        "value": "16",
        "propagateAtLaunch": False,
    }


def test_eks_node_group_inputs_and_options(pulumi_mocks, dev_spec):
    rec = _eks(pulumi_mocks, dev_spec, "gpu-infer")
    ng = rec.named("gpu-infer-ng")
    i = ng.inputs
    assert i["amiType"] == "AL2023_x86_64_NVIDIA" and i["capacityType"] == "ON_DEMAND"
    assert i["labels"]["nvidia.com/mig.config"] == "gpu-infer-3g40-2g20-1g10x2"
    assert {"key": "gpu.example.com/gpu-pool", "value": "gpu-infer", "effect": "NO_SCHEDULE"} in i["taints"]
    assert i["scalingConfig"] == {"minSize": 1, "maxSize": 8, "desiredSize": 1}
    assert i["updateConfig"] == {"maxUnavailablePercentage": 10}
    assert i["tags"][f"{CA_TEMPLATE_PREFIX}/resources/nvidia.com/mig-3g.40gb"] == "8"
    # The launch template reference is the real resource's id, not the synth placeholder.
    assert i["launchTemplate"]["id"] == "gpu-infer-lt-id"
    assert "remoteAccess" not in i
    assert ng.ignore_changes == ["scalingConfig.desiredSize"]
    # A generated name, so a replacement creates the new group before deleting the old (GPUs never drop to 0).
    assert ng.delete_before_replace is False and i["nodeGroupNamePrefix"] == "gpu-infer-"
    assert ng.protect is False


def test_eks_launch_template_inputs(pulumi_mocks, dev_spec):
    rec = _eks(pulumi_mocks, dev_spec, "gpu-train")
    lt = rec.named("gpu-train-lt").inputs
    assert lt["metadataOptions"]["httpTokens"] == "required"
    assert lt["metadataOptions"]["httpPutResponseHopLimit"] == 1
    ebs = lt["blockDeviceMappings"][0]["ebs"]
    assert ebs["encrypted"] == "true" and ebs["volumeType"] == "gp3" and ebs["volumeSize"] == 500
    assert "keyName" not in lt


def test_eks_protected_pool_protects_component_and_children(pulumi_mocks, dev_data):
    pool(dev_data, "gpu-train")["protect"] = True
    spec = parse_spec(dev_data)
    rec = _eks(pulumi_mocks, spec, "gpu-train")
    assert rec.named("gpu-train").protect is True
    assert rec.named("gpu-train-ng").protect is True and rec.named("gpu-train-lt").protect is True


def test_gke_pool_component(pulumi_mocks):
    from gpu_platform.nodepools.gcp import GkeGpuNodePool, GkeGpuNodePoolArgs

    data = gke_data()
    pool(data, "gpu-dev")["protect"] = True
    spec = parse_spec(data)
    rec = pulumi_mocks.run(lambda: GkeGpuNodePool("gpu-dev", GkeGpuNodePoolArgs(spec=spec, pool="gpu-dev")))
    comp, np = rec.named("gpu-dev"), rec.named("gpu-dev-np")
    assert comp.type == "gpu-platform:index:GkeGpuNodePool" and comp.protect is True
    assert np.type == NP and np.parent_name == "gpu-dev" and np.protect is True
    assert not np.delete_before_replace  # create-before-delete: a replacement gets a new name (gke.node_pool_name)
    cfg = np.inputs["nodeConfig"]
    (acc,) = cfg["guestAccelerators"]
    assert acc["type"] == "nvidia-tesla-a100" and acc["count"] == 1
    assert acc["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
    assert cfg["labels"]["gpu.example.com/gpu-pool"] == "gpu-dev"
    assert cfg["taints"][0] == {"key": "gpu.example.com/gpu-pool", "value": "gpu-dev", "effect": "NO_SCHEDULE"}
    assert np.inputs["autoscaling"]["totalMaxNodeCount"] == 2


def test_gke_operator_stack_component_inputs(pulumi_mocks):
    from gpu_platform.nodepools.gcp import GkeGpuNodePool, GkeGpuNodePoolArgs

    spec = parse_spec(gke_data("gpu-operator"))
    rec = pulumi_mocks.run(lambda: GkeGpuNodePool("gpu-ci", GkeGpuNodePoolArgs(spec=spec, pool="gpu-ci")))
    cfg = rec.named("gpu-ci-np").inputs["nodeConfig"]
    assert cfg["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert "gpuSharingConfig" not in cfg["guestAccelerators"][0]
    assert cfg["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"


def _platform_pools(spec):
    """The whole GpuPlatform (its node pools are what these tests look at)."""
    from gpu_platform.platform import GpuPlatform, GpuPlatformArgs

    return GpuPlatform("plat", GpuPlatformArgs(spec=spec))


def test_platform_builds_one_pool_component_per_pool(pulumi_mocks, dev_spec):
    rec = pulumi_mocks.run(lambda: _platform_pools(dev_spec))
    pools = rec.of_type("gpu-platform:index:EksGpuNodePool")
    assert sorted(p.name for p in pools) == ["plat-gpu-ci", "plat-gpu-dev", "plat-gpu-infer", "plat-gpu-train"]
    assert all(p.parent_name == "plat" for p in pools)
    assert len(rec.of_type(NG)) == 4 and len(rec.of_type(LT)) == 4
    assert rec.named("plat-gpu-infer-ng").parent_name == "plat-gpu-infer"


def test_platform_on_gke_builds_gke_pools(pulumi_mocks):
    spec = parse_spec(gke_data("gpu-operator"))
    rec = pulumi_mocks.run(lambda: _platform_pools(spec))
    assert len(rec.of_type("gpu-platform:index:GkeGpuNodePool")) == 4
    assert len(rec.of_type(NP)) == 4 and not rec.of_type(NG)


def test_unprotected_pool_inherits_protect_from_the_platform(pulumi_mocks, dev_spec):
    import pulumi

    from gpu_platform.platform import GpuPlatform, GpuPlatformArgs

    rec = pulumi_mocks.run(
        lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec), pulumi.ResourceOptions(protect=True))
    )
    assert rec.named("plat-gpu-dev-ng").protect and rec.named("plat-gpu-dev-lt").protect


# --- EFA, placement, Karpenter and the pools' add-ons ----------------------------------------------------------------

PG, SG = "aws:ec2/placementGroup:PlacementGroup", "aws:ec2/securityGroup:SecurityGroup"
KNP, KNC = "kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
RELEASE = "kubernetes:helm.sh/v3:Release"


def test_eks_efa_pool_creates_security_group_and_placement_group(pulumi_mocks, dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"subnetIds": ["subnet-a"]}  # one zone, so a placement group
    rec = _eks(pulumi_mocks, parse_spec(dev_data), "gpu-train")
    pg, sg = rec.named("gpu-train-pg"), rec.named("gpu-train-efa-sg")
    assert (pg.type, sg.type) == (PG, SG) and pg.parent_name == sg.parent_name == "gpu-train"
    assert pg.inputs["strategy"] == "cluster" and pg.inputs["name"] == "ml-dev-gpu-train"
    assert sg.inputs["vpcId"] == "vpc-0mock"  # the cluster's VPC, looked up
    assert sg.inputs["ingress"][0]["self"] is True and sg.inputs["egress"][0]["self"] is True
    lt = rec.named("gpu-train-lt")
    nics = lt.inputs["networkInterfaces"]
    assert len(nics) == 4 and all(n["securityGroups"] == ["sg-0cluster", "gpu-train-efa-sg-id"] for n in nics)
    assert lt.inputs["placement"] == {"groupName": "ml-dev-gpu-train"}
    assert rec.depends_on("gpu-train-lt", "gpu-train-pg") and rec.depends_on("gpu-train-lt", "gpu-train-efa-sg")


def test_eks_shared_pool_has_no_efa_resources(pulumi_mocks, dev_spec):
    rec = _eks(pulumi_mocks, dev_spec, "gpu-dev")
    assert not rec.of_type(PG) and not rec.of_type(SG)
    assert "networkInterfaces" not in rec.named("gpu-dev-lt").inputs


def _karpenter_spec(dev_data):
    for p in dev_data["nodePools"]:
        if p["sharing"]["mode"] != "mig":  # Karpenter cannot serve MIG pools
            p["aws"] = {"provisioner": "karpenter"}
    return parse_spec(dev_data)


def test_karpenter_pool_component(pulumi_mocks, dev_data):
    from gpu_platform.nodepools.aws import KarpenterGpuNodePool, KarpenterGpuNodePoolArgs

    spec = _karpenter_spec(dev_data)
    rec = pulumi_mocks.run(
        lambda: KarpenterGpuNodePool("gpu-train", KarpenterGpuNodePoolArgs(spec=spec, pool="gpu-train"))
    )
    comp = rec.named("gpu-train")
    assert comp.type == "gpu-platform:index:KarpenterGpuNodePool" and comp.custom is False
    nc, np = rec.named("gpu-train-ec2nodeclass-gpu-train"), rec.named("gpu-train-nodepool-gpu-train")
    assert (nc.type, np.type) == (KNC, KNP)
    assert all(r.parent_name == "gpu-train" for r in rec.resources if r.name != "gpu-train")
    assert np.inputs["spec"]["template"]["metadata"]["labels"]["gpu.example.com/gpu-pool"] == "gpu-train"
    assert nc.inputs["spec"]["placementGroupSelector"] == {"name": "ml-dev-gpu-train"}
    assert rec.depends_on("gpu-train-nodepool-gpu-train", "gpu-train-ec2nodeclass-gpu-train")
    assert rec.depends_on("gpu-train-ec2nodeclass-gpu-train", "gpu-train-efa-sg")
    assert rec.depends_on("gpu-train-ec2nodeclass-gpu-train", "gpu-train-pg")
    assert not rec.of_type(NG) and not rec.of_type(LT)


def test_platform_builds_karpenter_pools_and_node_groups_only_for_mig(pulumi_mocks, dev_data):
    spec = _karpenter_spec(dev_data)
    rec = pulumi_mocks.run(lambda: _platform_pools(spec))
    assert len(rec.of_type("gpu-platform:index:KarpenterGpuNodePool")) == 3
    assert len(rec.of_type(KNP)) == 3 and len(rec.of_type(KNC)) == 3
    assert [r.name for r in rec.of_type(NG)] == ["plat-gpu-infer-ng"]


def test_node_addons_component_installs_autoscaler_and_efa_plugin(pulumi_mocks, dev_data):
    dev_data["clusterAutoscaler"] = {"enabled": True}
    spec = parse_spec(dev_data)
    rec = pulumi_mocks.run(lambda: _platform_pools(spec))
    addons = rec.named("plat-node-addons")
    assert addons.type == "gpu-platform:index:GpuNodeAddons" and addons.parent_name == "plat"
    ca, efa = rec.named("plat-node-addons-cluster-autoscaler"), rec.named("plat-node-addons-aws-efa-k8s-device-plugin")
    assert ca.type == efa.type == RELEASE and ca.parent_name == efa.parent_name == "plat-node-addons"
    assert ca.inputs["chart"] == "cluster-autoscaler" and ca.inputs["version"] == "9.59.0"
    assert ca.inputs["values"]["extraArgs"]["expander"] == "least-waste"
    assert efa.inputs["chart"] == "aws-efa-k8s-device-plugin" and efa.inputs["version"] == "v0.5.30"


def test_gke_operator_platform_installs_the_driver_installer(pulumi_mocks):
    spec = parse_spec(gke_data("gpu-operator"))
    rec = pulumi_mocks.run(lambda: _platform_pools(spec))
    ds = rec.named("plat-node-addons-daemonset-kube-system-nvidia-driver-installer")
    assert ds.type == "kubernetes:apps/v1:DaemonSet" and ds.parent_name == "plat-node-addons"
    train = rec.named("plat-gpu-train-np")
    assert train.inputs["placementPolicy"] == {"type": "COMPACT"}
