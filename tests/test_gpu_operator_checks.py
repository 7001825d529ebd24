"""GPU Operator validation rules: Bottlerocket limits, the default-key collision, MIG drain and strategy notes."""

from __future__ import annotations

import re

import pytest

from gpu_platform.errors import SpecError
from gpu_platform.load import parse_spec
from helpers.specs import dev_fleet_on_gke, findings, pool, pool_path, tier


@pytest.mark.parametrize("name", ["gpu-infer", "gpu-dev", "gpu-ci"])  # mig, time-slicing, mps
def test_bottlerocket_rejects_sharing_through_the_operator(dev_data, name):
    pool(dev_data, name)["aws"] = {"amiType": "BOTTLEROCKET_x86_64_NVIDIA"}
    errors = findings(dev_data, "error")
    assert [f.path for f in errors] == [f"{pool_path(dev_data, name)}.sharing.mode"]
    assert "allowed: exclusive, or amiType AL2023_x86_64_NVIDIA" in errors[0].message
    with pytest.raises(SpecError, match=re.escape(f"{pool_path(dev_data, name)}.sharing.mode")):
        parse_spec(dev_data)


def test_bottlerocket_exclusive_is_valid_with_a_metrics_warning(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"amiType": "BOTTLEROCKET_x86_64_NVIDIA", "efa": True}
    assert findings(dev_data, "error") == []
    (warning,) = [f for f in findings(dev_data, "warning") if not f.path.startswith("autoscaling")]
    assert warning.path == "nodePools[0].aws.amiType" and "no DCGM metrics" in warning.message


def test_pool_named_default_with_sharing_is_rejected(dev_data):
    pool(dev_data, "gpu-dev")["name"] = "default"
    tier(dev_data, "dev")["pool"] = "default"
    errors = findings(dev_data, "error")
    assert [f.path for f in errors] == ["nodePools[2].name"] and "collides" in errors[0].message


def test_exclusive_pool_named_default_is_fine(dev_data):
    pool(dev_data, "gpu-train")["name"] = "default"
    tier(dev_data, "train")["pool"] = "default"
    assert findings(dev_data, "error") == []


def test_dev_stack_notes_mig_drain_and_per_node_strategy(dev_data):
    infos = {f.path: f.message for f in findings(dev_data, "info")}
    assert "evicts the GPU pods" in infos["nodePools[1].sharing.migLayout"]
    assert "gpu-infer-3g40-2g20-1g10x2" in infos["nodePools[1].sharing.migLayout"]
    assert "MPS refuses mixed" in infos["gpuOperator"]


def test_gke_native_notes_that_the_operator_is_not_installed(dev_data):
    data = dev_fleet_on_gke(dev_data, stack="gke-native")
    pool(data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 2}
    for t in data["tiers"]:
        if t["pool"] == "gpu-infer":
            t.pop("resource")  # GKE advertises the partitions as nvidia.com/gpu
    infos = {f.path: f.message for f in findings(data, "info")}
    assert "GPU Operator is not installed" in infos["gcp.gpuStack"]
    assert not any("MIG manager" in m for m in infos.values())  # no operator, so no mig-manager drains


@pytest.mark.parametrize(
    ("name", "sharing"),
    [
        ("gpu-dev", {"mode": "time-slicing", "replicas": 4, "renameByDefault": True}),
        ("gpu-ci", {"mode": "mps", "replicas": 8, "renameByDefault": True}),
        (
            "gpu-infer",
            {
                "mode": "mig",
                "migLayout": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2},
                "replicas": 2,
                "renameByDefault": True,
            },
        ),
    ],
)
def test_rename_by_default_is_rejected_because_tiers_request_the_plain_name(dev_data, name, sharing):
    pool(dev_data, name)["sharing"] = sharing
    errors = findings(dev_data, "error")
    assert [f.path for f in errors] == [f"{pool_path(dev_data, name)}.sharing.renameByDefault"]
    assert ".shared" in errors[0].message and errors[0].message.endswith("allowed: false")


def test_rename_by_default_without_shared_units_is_harmless(dev_data):
    pool(dev_data, "gpu-infer")["sharing"]["renameByDefault"] = True  # MIG without time-slicing: nothing is renamed
    assert findings(dev_data, "error") == []
