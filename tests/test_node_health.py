"""XID to remediation: on EKS the node monitoring agent add-on lets node auto repair act on GPU faults; the
alerts say what repair does on each cloud and page when it does not act."""

from __future__ import annotations

import json

import pytest

from gpu_platform.catalog.xid import EKS_AGENT_XIDS, HARDWARE_XIDS
from gpu_platform.contract import pool_taints
from gpu_platform.load import load_spec, parse_spec
from gpu_platform.nodepools.health import render_node_monitoring_addon
from gpu_platform.observability.rules import rule_groups


def _alerts(spec) -> dict[str, dict]:
    return {r["alert"]: r for g in rule_groups(spec) for r in g["rules"] if "alert" in r}


def test_eks_gets_the_node_monitoring_agent_with_the_pools_tolerations(dev_spec):
    addon = render_node_monitoring_addon(dev_spec)
    assert addon["addonName"] == "eks-node-monitoring-agent" and addon["clusterName"] == "ml-dev"
    tolerations = json.loads(addon["configurationValues"])["dcgmAgent"]["tolerations"]
    for pool in dev_spec.node_pools:
        for taint in pool_taints(dev_spec, pool):
            assert {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]} in tolerations, taint
    assert "addonVersion" not in addon


def test_agent_version_pin_and_opt_out(dev_data):
    dev_data["aws"]["nodeMonitoringAgentVersion"] = "v1.7.0-eksbuild.1"
    assert render_node_monitoring_addon(parse_spec(dev_data))["addonVersion"] == "v1.7.0-eksbuild.1"
    dev_data["aws"]["nodeMonitoringAgent"] = False
    assert render_node_monitoring_addon(parse_spec(dev_data)) is None


def test_no_agent_when_no_pool_repairs(dev_data):
    for pool in dev_data["nodePools"]:
        pool.setdefault("aws", {})["nodeRepair"] = False
    assert render_node_monitoring_addon(parse_spec(dev_data)) is None


def test_gke_has_no_eks_addon():
    assert render_node_monitoring_addon(load_spec("examples/gke-a2.yaml")) is None


def test_every_xid_repair_acts_on_pages(dev_spec):
    """What the agent hands to node repair is a subset of what the platform pages on as hardware."""
    assert set(EKS_AGENT_XIDS) <= {x.code for x in HARDWARE_XIDS}
    assert set(EKS_AGENT_XIDS) <= set(dev_spec.monitoring.thresholds.xid_hardware_codes)
    assert not {13, 31, 43, 45} & {x.code for x in HARDWARE_XIDS}  # application XIDs


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("Pulumi.dev.yaml", "AcceleratedHardwareReady"),
        ("examples/gke-a2.yaml", "cordon and drain"),
    ],
)
def test_runbooks_name_the_clouds_repair_path(path, words):
    alerts = _alerts(load_spec(path))
    for name in ("GpuXidHardwareError", "GpuXidHardwareNotRemediated"):
        assert words in alerts[name]["annotations"]["runbook"], name


def test_remediation_wait_must_be_shorter_than_the_window(dev_data):
    from gpu_platform.errors import RenderError, SpecError
    from gpu_platform.validation import ensure_valid

    dev_data["monitoring"]["thresholds"] = {"xidHardwareWindow": "30m", "xidRemediationFor": "30m"}
    from gpu_platform.spec import PlatformSpec

    spec = PlatformSpec.model_validate(dev_data)  # structure only: `validate` runs the cross-field checks
    with pytest.raises(SpecError, match=r"xidRemediationFor: '30m' must be shorter than xidHardwareWindow"):
        ensure_valid(spec)
    with pytest.raises(RenderError, match=r"xidRemediationFor: '30m' must be shorter than xidHardwareWindow"):
        rule_groups(spec)


def test_node_health_component_registers_the_addon(pulumi_mocks, dev_spec):
    from gpu_platform.nodepools.aws import EksNodeHealth, EksNodeHealthArgs

    rec = pulumi_mocks.run(lambda: EksNodeHealth("nh", EksNodeHealthArgs(spec=dev_spec)))
    assert rec.named("nh").type == "gpu-platform:index:EksNodeHealth"
    addon = rec.named("nh-node-monitoring-agent")
    assert addon.type == "aws:eks/addon:Addon" and addon.parent_name == "nh"
    assert addon.inputs["addonName"] == "eks-node-monitoring-agent"
    assert "dcgmAgent" in json.loads(addon.inputs["configurationValues"])
