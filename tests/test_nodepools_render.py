"""Pure render of node pools: EKS launch template and node group, GKE node pool, synth documents, goldens."""

from __future__ import annotations

import re

import pytest

from gpu_platform.load import parse_spec
from gpu_platform.nodepools.eks import (
    CA_TEMPLATE_PREFIX,
    autoscaler_tags,
    render_eks_launch_template,
    render_eks_node_group,
)
from gpu_platform.nodepools.gke import gke_partition_count, render_gke_node_pool
from gpu_platform.nodepools.render import render_node_pool, render_nodepool_artifacts
from gpu_platform.synth import dump_documents
from helpers.specs import gke_data, pool, tier

# --- EKS -----------------------------------------------------------------------------------------------------


def test_eks_node_group_contract_labels_taints_and_scaling(dev_spec):
    pool = dev_spec.pools_by_name["gpu-infer"]
    ng = render_eks_node_group(dev_spec, pool)
    assert ng["clusterName"] == "ml-dev" and ng["nodeGroupNamePrefix"] == "gpu-infer-" and "nodeGroupName" not in ng
    assert ng["nodeRoleArn"] == "arn:aws:iam::111122223333:role/gpu-nodes"
    assert ng["amiType"] == "AL2023_x86_64_NVIDIA" and ng["capacityType"] == "ON_DEMAND"
    assert ng["instanceTypes"] == ["p4de.24xlarge"]
    assert ng["subnetIds"] == ["subnet-a", "subnet-b"]
    assert ng["labels"] == {
        "gpu.example.com/gpu-pool": "gpu-infer",
        "nvidia.com/device-plugin.config": "gpu-infer",
        "nvidia.com/mig.config": "gpu-infer-3g40-2g20-1g10x2",
    }
    assert ng["taints"] == [
        {"key": "gpu.example.com/gpu-pool", "value": "gpu-infer", "effect": "NO_SCHEDULE"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
    ]
    assert ng["scalingConfig"] == {"minSize": 1, "maxSize": 8, "desiredSize": 1}
    assert ng["updateConfig"] == {"maxUnavailablePercentage": 10}
    assert "remoteAccess" not in ng and "diskSize" not in ng  # no SSH; disk comes from the launch template


def test_eks_autoscaler_tags_for_mig_pool_count_slices_per_node(dev_spec):
    tags = autoscaler_tags(dev_spec, dev_spec.pools_by_name["gpu-infer"])
    res = f"{CA_TEMPLATE_PREFIX}/resources"
    # p4de: 8 GPUs x {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}
    assert tags[f"{res}/nvidia.com/mig-3g.40gb"] == "8"
    assert tags[f"{res}/nvidia.com/mig-2g.20gb"] == "8"
    assert tags[f"{res}/nvidia.com/mig-1g.10gb"] == "16"
    assert tags[f"{res}/nvidia.com/gpu"] == "0"
    assert tags[f"{CA_TEMPLATE_PREFIX}/taint/gpu.example.com/gpu-pool"] == "gpu-infer:NoSchedule"
    assert tags[f"{CA_TEMPLATE_PREFIX}/taint/nvidia.com/gpu"] == "present:NoSchedule"
    assert tags[f"{CA_TEMPLATE_PREFIX}/label/nvidia.com/mig.config"] == "gpu-infer-3g40-2g20-1g10x2"


@pytest.mark.parametrize(("pool", "gpus"), [("gpu-train", "8"), ("gpu-dev", "32"), ("gpu-ci", "64")])
def test_eks_autoscaler_gpu_count_is_gpus_times_replicas(dev_spec, pool, gpus):
    tags = autoscaler_tags(dev_spec, dev_spec.pools_by_name[pool])
    assert tags[f"{CA_TEMPLATE_PREFIX}/resources/nvidia.com/gpu"] == gpus
    assert not any("/resources/nvidia.com/mig-" in k for k in tags)


def test_eks_launch_template_security_defaults(dev_spec):
    lt = render_eks_launch_template(dev_spec, dev_spec.pools_by_name["gpu-train"])
    assert lt["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1,
        "instanceMetadataTags": "disabled",
    }
    (bdm,) = lt["blockDeviceMappings"]
    assert bdm["deviceName"] == "/dev/xvda"
    assert bdm["ebs"] == {
        "volumeSize": 500,
        "volumeType": "gp3",
        "iops": 6000,
        "throughput": 500,
        "encrypted": "true",
        "deleteOnTermination": "true",
    }
    assert "keyName" not in lt and "imageId" not in lt and "userData" not in lt
    assert "instanceMarketOptions" not in lt


def test_eks_options_bottlerocket_spot_kms_pool_subnets(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {
        "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
        "capacityType": "SPOT",
        "subnetIds": ["subnet-az1"],
        "rootVolumeGib": 1000,
        "kmsKeyId": "arn:aws:kms:us-east-1:111122223333:key/k",
        "imdsHopLimit": 2,
        "maxUnavailablePercentage": 25,
        "nodeRepair": False,
    }
    spec = parse_spec(dev_data)
    train = pool(spec, "gpu-train")
    ng, lt = render_eks_node_group(spec, train), render_eks_launch_template(spec, train)
    assert ng["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA" and ng["capacityType"] == "SPOT"
    assert ng["subnetIds"] == ["subnet-az1"]
    assert ng["updateConfig"] == {"maxUnavailablePercentage": 25}
    assert ng["nodeRepairConfig"] == {"enabled": False}
    # Bottlerocket keeps container images on its data volume; its OS volume keeps the AMI's size. Both encrypted.
    os_volume, data_volume = lt["blockDeviceMappings"]
    assert data_volume["deviceName"] == "/dev/xvdb"
    assert data_volume["ebs"]["volumeSize"] == 1000
    assert data_volume["ebs"]["kmsKeyId"].endswith(":key/k")
    assert os_volume["deviceName"] == "/dev/xvda" and "volumeSize" not in os_volume["ebs"]
    assert os_volume["ebs"]["encrypted"] == "true" and os_volume["ebs"]["kmsKeyId"].endswith(":key/k")
    assert lt["metadataOptions"]["httpPutResponseHopLimit"] == 2


def test_eks_capacity_block_moves_instance_type_into_launch_template(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"capacityType": "CAPACITY_BLOCK", "capacityReservationId": "cr-0123"}
    spec = parse_spec(dev_data)
    train = pool(spec, "gpu-train")
    ng, lt = render_eks_node_group(spec, train), render_eks_launch_template(spec, train)
    assert ng["capacityType"] == "CAPACITY_BLOCK" and "instanceTypes" not in ng
    assert lt["instanceType"] == "p4de.24xlarge"
    assert lt["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert lt["capacityReservationSpecification"] == {"capacityReservationTarget": {"capacityReservationId": "cr-0123"}}


def test_synth_document_holds_types_inputs_and_capacity(dev_spec):
    doc = render_node_pool(dev_spec, dev_spec.pools_by_name["gpu-dev"])
    assert doc["type"] == "aws:eks/nodeGroup:NodeGroup"
    assert [(r["role"], r["type"]) for r in doc["resources"]] == [
        ("lt", "aws:ec2/launchTemplate:LaunchTemplate"),
        ("asg-tags", "aws:autoscaling/tag:Tag"),
    ]
    assert doc["capacity"]["gpus"] == {"min": 0, "max": 32}
    assert doc["capacity"]["units"] == {"nvidia.com/gpu": {"min": 0, "max": 128}}
    assert {t["key"]: t["value"] for t in doc["resources"][1]["inputs"]} == autoscaler_tags(
        dev_spec, dev_spec.pools_by_name["gpu-dev"]
    )


def test_dev_stack_nodepools_golden(dev_spec, golden):
    for artifact in render_nodepool_artifacts(dev_spec):
        golden(f"nodepools/dev-{artifact.name}.yaml", dump_documents(artifact.documents))


# --- GKE -----------------------------------------------------------------------------------------------------


def test_gke_native_sharing_configs():
    spec = parse_spec(gke_data())
    np = {p.name: render_gke_node_pool(spec, p) for p in spec.node_pools}
    acc = {n: v["nodeConfig"]["guestAccelerators"][0] for n, v in np.items()}
    assert acc["gpu-train"] == {
        "type": "nvidia-a100-80gb",
        "count": 8,
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
    }
    assert acc["gpu-dev"]["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
    assert acc["gpu-ci"]["gpuSharingConfig"] == {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 8}
    assert acc["gpu-infer"]["type"] == "nvidia-tesla-a100" and acc["gpu-infer"]["count"] == 8
    assert acc["gpu-infer"]["gpuPartitionSize"] == "1g.5gb" and "gpuSharingConfig" not in acc["gpu-infer"]
    assert "gke-no-default-nvidia-gpu-device-plugin" not in np["gpu-dev"]["nodeConfig"]["labels"]


def test_gke_node_pool_inputs_labels_taints_scaling_locations():
    spec = parse_spec(gke_data())
    np = render_gke_node_pool(spec, spec.pools_by_name["gpu-infer"])
    assert (np["cluster"], np["project"], np["location"]) == ("ml-gke", "ml-project", "us-central1")
    assert re.fullmatch(r"gpu-infer-[0-9a-f]{8}", np["name"])
    cfg = np["nodeConfig"]
    assert cfg["machineType"] == "a2-highgpu-8g"
    assert cfg["labels"]["gpu.example.com/gpu-pool"] == "gpu-infer"
    assert cfg["labels"]["nvidia.com/mig.config"] == "gpu-infer-1g5x7"
    assert cfg["taints"] == [
        {"key": "gpu.example.com/gpu-pool", "value": "gpu-infer", "effect": "NO_SCHEDULE"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
    ]
    assert cfg["serviceAccount"] == "gpu-nodes@proj.iam.gserviceaccount.com"
    assert cfg["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert np["autoscaling"] == {"totalMinNodeCount": 1, "totalMaxNodeCount": 3, "locationPolicy": "ANY"}
    assert np["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert np["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}
    assert np["nodeLocations"] == ["us-central1-a", "us-central1-c"]
    assert render_gke_node_pool(spec, spec.pools_by_name["gpu-train"])["nodeLocations"] == ["us-central1-a"]


def test_gke_mig_with_replicas_time_shares_partitions():
    data = gke_data(**{"gpu-infer": {"sharing": {"mode": "mig", "migLayout": {"3g.20gb": 2}, "replicas": 2}}})
    spec = parse_spec(data)
    assert spec.resource_of(spec.tiers_by_name["infer"]) == "nvidia.com/gpu"
    acc = render_gke_node_pool(spec, spec.pools_by_name["gpu-infer"])["nodeConfig"]["guestAccelerators"][0]
    assert acc["gpuPartitionSize"] == "3g.20gb"
    assert acc["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 2}


def test_gke_gpu_operator_stack_disables_driver_and_device_plugin():
    data = gke_data(
        "gpu-operator", **{"gpu-infer": {"sharing": {"mode": "mig", "migLayout": {"3g.20gb": 1, "1g.5gb": 2}}}}
    )
    tier(data, "infer")["resource"] = "nvidia.com/mig-3g.20gb"
    spec = parse_spec(data)
    for p in spec.node_pools:
        cfg = render_gke_node_pool(spec, p)["nodeConfig"]
        (acc,) = cfg["guestAccelerators"]
        assert acc["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
        assert "gpuSharingConfig" not in acc and "gpuPartitionSize" not in acc
        assert cfg["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
    assert render_node_pool(spec, pool(spec, "gpu-train"))["gpuStack"] == "gpu-operator"


@pytest.mark.parametrize(
    ("model", "profile", "count"),
    [
        ("A100-SXM4-40GB", "1g.5gb", 7),
        ("A100-SXM4-40GB", "2g.10gb", 3),
        ("A100-SXM4-40GB", "3g.20gb", 2),
        ("A100-SXM4-40GB", "7g.40gb", 1),
        ("H100-80GB", "1g.10gb", 7),
        ("A100-SXM4-40GB", "9g.99gb", 0),
    ],
)
def test_gke_partition_count_is_as_many_as_fit(model, profile, count):
    assert gke_partition_count(model, profile) == count


def test_gke_synth_document_type_and_capacity():
    spec = parse_spec(gke_data())
    doc = render_node_pool(spec, spec.pools_by_name["gpu-dev"])
    assert doc["type"] == "gcp:container/nodePool:NodePool" and doc["cloud"] == "gcp"
    assert doc["capacity"]["units"] == {"nvidia.com/gpu": {"min": 0, "max": 8}}


def test_gke_native_golden(golden):
    spec = parse_spec(gke_data())
    for artifact in render_nodepool_artifacts(spec):
        golden(f"nodepools/gke-{artifact.name}.yaml", dump_documents(artifact.documents))
