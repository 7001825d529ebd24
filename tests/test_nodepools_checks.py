"""Node pool validation checks: GKE MIG limits, capacity blocks, EKS limits, warnings; each names its field path."""

from __future__ import annotations

import pytest

from gpu_platform.errors import Severity, SpecError
from gpu_platform.load import parse_spec
from gpu_platform.nodepools.checks import check_node_pools
from gpu_platform.spec import PlatformSpec
from gpu_platform.validation import DOMAIN_CHECKS, check_spec
from helpers.specs import finding_lines, findings, gke_data, pool, pool_path, tier, tier_path


def _errors(data: dict) -> list[str]:
    return [str(f) for f in check_spec(PlatformSpec.model_validate(data)) if f.severity is Severity.ERROR]


def _warnings(data: dict) -> list[str]:
    return [str(f) for f in check_spec(PlatformSpec.model_validate(data)) if f.severity is Severity.WARNING]


def test_check_is_registered():
    assert check_node_pools in DOMAIN_CHECKS


def test_dev_spec_node_pool_findings(dev_spec):
    # EFA is on only by default on the training pool (so adding it to an existing node group would roll it), and
    # the pool spans two subnets, so it gets no placement group
    assert [(f.path, f.severity) for f in check_node_pools(dev_spec)] == [
        ("nodePools[0].aws.efa", "warning"),
        ("nodePools[0].aws.subnetIds", "info"),
    ]


def test_gke_native_rejects_mixed_mig_layout_and_points_to_gpu_operator():
    data = gke_data(**{"gpu-infer": {"sharing": {"mode": "mig", "migLayout": {"3g.20gb": 1, "1g.5gb": 2}}}})
    (err,) = _errors(data)
    assert err.startswith(f"{pool_path(data, 'gpu-infer')}.sharing.migLayout:")
    assert "gcp.gpuStack: gpu-operator" in err and "mixes MIG profiles" in err
    data["gcp"]["gpuStack"] = "gpu-operator"
    tier(data, "infer")["resource"] = "nvidia.com/mig-3g.20gb"
    assert _errors(data) == []
    parse_spec(data)  # valid on the operator stack


def test_gke_native_rejects_partition_count_gke_cannot_make():
    data = gke_data(**{"gpu-infer": {"sharing": {"mode": "mig", "migLayout": {"1g.5gb": 3}}}})
    (err,) = _errors(data)
    assert err.startswith("nodePools[3].sharing.migLayout.1g.5gb: 3 per GPU")
    assert "always makes 7" in err and "gpu-operator" in err


def test_gke_native_warns_sharing_replaces_pool_and_mig_resource_names():
    warnings = findings(gke_data(), "warning")
    replace = [f for f in warnings if "replaces the pool" in f.message and f.path.endswith(".sharing")]
    assert [f.path for f in replace] == [f"nodePools[{i}].sharing" for i in range(4)]
    infos = [str(f) for f in check_node_pools(parse_spec(gke_data())) if f.severity is Severity.INFO]
    mig = [i for i in infos if "advertises the 1g.5gb partitions as nvidia.com/gpu" in i]
    assert len(mig) == 1 and mig[0].startswith("nodePools[3].sharing.migLayout")
    assert not [w for w in _warnings(gke_data("gpu-operator")) if "replaces the pool" in w and ".sharing:" in w]


def test_gke_native_limits_shared_clients_and_driver_version():
    data = gke_data(
        **{
            "gpu-dev": {
                "sharing": {"mode": "time-slicing", "replicas": 64},
                "gcp": {"gpuDriverVersion": "INSTALLATION_DISABLED"},
            }
        }
    )
    errs = _errors(data)
    assert any(e.startswith("nodePools[1].sharing.replicas: 64 exceeds GKE's") for e in errs)
    assert any(e.startswith("nodePools[1].gcp.gpuDriverVersion: 'INSTALLATION_DISABLED'") for e in errs)


def test_gke_machine_without_accelerator_name_is_rejected():
    data = gke_data()
    data["catalog"] = {
        "instanceTypes": [{"name": "g2-custom-a10g", "gpuModel": "A10G", "gpuCount": 1, "hourlyPrice": 1.0}]
    }
    pool(data, "gpu-dev")["instanceType"] = "g2-custom-a10g"
    (err,) = _errors(data)
    assert err.startswith(f"{pool_path(data, 'gpu-dev')}.instanceType: 'g2-custom-a10g' has GPU A10G")


def test_capacity_block_needs_reservation_id(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"capacityType": "CAPACITY_BLOCK"}
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    assert [f.path for f in exc.value.findings] == ["nodePools[0].aws.capacityReservationId"]
    pool(dev_data, "gpu-train")["aws"]["capacityReservationId"] = "cr-0abc"
    parse_spec(dev_data)


def test_spot_with_reservation_is_rejected(dev_data):
    pool(dev_data, "gpu-dev")["aws"] = {"capacityType": "SPOT", "capacityReservationId": "cr-0abc"}
    (err,) = _errors(dev_data)
    assert err.startswith("nodePools[2].aws.capacityReservationId: 'cr-0abc' cannot be used with SPOT")


def test_missing_role_and_subnets(dev_data):
    dev_data["aws"] = {"region": "us-east-1"}
    pool(dev_data, "gpu-infer")["aws"] = {"subnetIds": ["subnet-x"]}
    found = findings(dev_data, "error")
    assert any(str(f).startswith("aws.nodeRoleArn: missing") for f in found)
    assert sorted(f.path for f in found if "no subnets" in f.message) == [
        "nodePools[0].aws.subnetIds",
        "nodePools[2].aws.subnetIds",
        "nodePools[3].aws.subnetIds",
    ]


def test_eks_label_length_limits(dev_data):
    dev_data["labelDomain"] = "gpu." + "a" * 40 + ".example.com"  # pool label key > 63 characters
    errs = _errors(dev_data)
    assert any(e.startswith("labelDomain: node label key") and "EKS allows 1-63" in e for e in errs)
    pool(dev_data, "gpu-train")["labels"] = {"team": "x" * 64}  # label values are checked when the model is built
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    assert any(str(f).startswith("nodePools[0].labels.team: label value") for f in exc.value.findings)


def test_eks_tag_limit(dev_data):
    pool(dev_data, "gpu-train")["labels"] = {f"l{i}": "v" for i in range(45)}
    errs = _errors(dev_data)
    assert any(e.startswith("nodePools[0].labels: 45 extra labels make") for e in errs)


def test_capacity_block_on_account_wide_subnets_warns_to_pin_one_zone(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"capacityType": "CAPACITY_BLOCK", "capacityReservationId": "cr-0abc"}
    (warn,) = [w for w in _warnings(dev_data) if "one availability zone" in w]
    assert warn.startswith("nodePools[0].aws.subnetIds: unset") and "['subnet-a', 'subnet-b']" in warn
    pool(dev_data, "gpu-train")["aws"]["subnetIds"] = ["subnet-a"]
    assert not [w for w in _warnings(dev_data) if "one availability zone" in w]


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_mig_layout_name_longer_than_a_label_value_names_the_pool(dev_data, cloud):
    long = "gpu-infer-" + "x" * 50  # a valid 60-character pool name; "<pool>-<profiles>" is over 63
    data = gke_data("gpu-operator") if cloud == "gcp" else dev_data
    mig = next(p for p in data["nodePools"] if p["sharing"]["mode"] == "mig")
    for t in data["tiers"]:
        if t["pool"] == mig["name"]:
            t["pool"] = long
    mig["name"] = long
    i = data["nodePools"].index(mig)
    errs = [e for e in _errors(data) if "MIG layout name" in e]
    assert len(errs) == 1 and errs[0].startswith(f"nodePools[{i}].name: the MIG layout name '{long}-")
    assert "shorten the pool name" in errs[0]


def test_gke_zone_listed_twice_is_refused_and_counts_once():
    # GKE takes node locations as a set: two entries of one zone do not lift the 1,000 nodes per zone to 2,000.
    data = gke_data(**{"gpu-train": {"maxSize": 1500, "gcp": {"zones": ["us-central1-a", "us-central1-a"]}}})
    data["gcp"]["zones"] = ["us-central1-a", "us-central1-c", "us-central1-a"]
    errors = {f.path: f.message for f in findings(data, "error")}
    path = pool_path(data, "gpu-train")
    assert "'us-central1-a' is listed twice" in errors[f"{path}.gcp.zones[1]"]
    assert "'us-central1-a' is listed twice" in errors["gcp.zones[2]"]
    assert "1500 nodes over 1 zone(s)" in errors[f"{path}.maxSize"]


def test_a_mig_resource_on_a_gke_native_pool_points_at_the_gpu_operator():
    data = gke_data()
    tier(data, "infer")["resource"] = "nvidia.com/mig-1g.10gb"
    [line] = [e for e in finding_lines(data) if e.startswith(tier_path(data, "infer") + ".resource")]
    assert "allowed: nvidia.com/gpu (GKE's own device plugin advertises MIG partitions as nvidia.com/gpu" in line
    assert "set gcp.gpuStack: gpu-operator" in line


def test_pools_beyond_a_cluster_together_are_a_warning(dev_data):
    for p in dev_data["nodePools"]:
        p["maxSize"] = 1500
    [warning] = [f for f in findings(dev_data, "warning") if f.path == "nodePools"]
    assert "reach 6,000 nodes at maxSize together, more than the 5,000" in warning.message
    for p in dev_data["nodePools"]:
        p["maxSize"] = 1000
    assert not [f for f in findings(dev_data, "warning") if f.path == "nodePools"]
