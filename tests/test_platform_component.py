"""GpuPlatform under Pulumi mocks: validates first, registers nothing for a bad spec."""

from __future__ import annotations

import runpy

import pulumi
import pytest
from pulumi.runtime.rpc import _special_secret_sig, _special_sig_key

from conftest import ROOT
from helpers.specs import pool, team, tier


def test_platform_registers_component_with_type_token(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    comp = rec.named("plat")
    assert comp.type == "gpu-platform:index:GpuPlatform"
    assert comp.custom is False
    assert all(r.parent for r in rec.resources if r.name != "plat"), "every child is parented"


def test_platform_composes_every_domain_with_pinned_names(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    direct = {(r.type, r.name) for r in rec.resources if r.parent_name == "plat"}
    assert direct == {
        ("gpu-platform:index:EksGpuNodePool", "plat-gpu-train"),
        ("gpu-platform:index:EksGpuNodePool", "plat-gpu-infer"),
        ("gpu-platform:index:EksGpuNodePool", "plat-gpu-dev"),
        ("gpu-platform:index:EksGpuNodePool", "plat-gpu-ci"),
        ("gpu-platform:index:GpuNodeAddons", "plat-node-addons"),  # the EFA device plugin of gpu-train
        ("gpu-platform:index:GpuOperator", "plat-gpu-operator"),
        ("gpu-platform:index:GpuQueues", "plat-queues"),
        ("gpu-platform:index:GpuObservability", "plat-observability"),
        ("gpu-platform:index:GpuAdmission", "plat-admission"),
        ("gpu-platform:index:GpuAutoscaling", "plat-autoscaling"),
        ("gpu-platform:index:EksNodeHealth", "plat-node-health"),
    }
    names = [r.name for r in rec.resources]
    assert len(names) == len(set(names)), "child names are unique"
    assert rec.depends_on("plat-queues-kueue", "plat-observability-kube-prometheus-stack"), (
        "Kueue's ServiceMonitor needs the Prometheus Operator CRDs first"
    )
    assert rec.depends_on("plat-autoscaling-keda", "plat-observability-kube-prometheus-stack"), (
        "KEDA's ServiceMonitors need the Prometheus Operator CRDs first"
    )
    releases = {r.inputs["chart"] for r in rec.of_type("kubernetes:helm.sh/v3:Release")}
    assert {
        "gpu-operator",
        "oci://registry.k8s.io/kueue/charts/kueue",
        "kube-prometheus-stack",
        "opencost",
        "keda",
    } <= releases


def test_gke_native_platform_has_no_operator(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs, parse_spec

    dev_data.pop("aws")
    dev_data.update(cloud="gcp", gcp={"project": "ml-project", "location": "us-central1", "zones": ["us-central1-a"]})
    for p in dev_data["nodePools"]:
        p["instanceType"] = "a2-ultragpu-8g"
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 2}
    for t in dev_data["tiers"]:
        t.pop("resource", None)  # GKE advertises MIG partitions as nvidia.com/gpu
    spec = parse_spec(dev_data)
    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=spec)))
    assert len(rec.of_type("gpu-platform:index:GkeGpuNodePool")) == 4
    assert not rec.of_type("gpu-platform:index:GpuOperator")
    assert not rec.of_type("aws:eks/nodeGroup:NodeGroup")


def test_bad_spec_registers_nothing(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs, SpecError
    from gpu_platform.spec import PlatformSpec

    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 2, "1g.10gb": 1}
    spec = PlatformSpec.model_validate(dev_data)  # structurally fine, semantically wrong
    with pytest.raises(SpecError, match=r"nodePools\[1\]\.sharing\.migLayout"):
        pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=spec)))
    assert pulumi_mocks.resources == []


def test_a_missing_cloud_extra_stops_before_anything_is_registered(pulumi_mocks, dev_spec, monkeypatch):
    import sys

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    monkeypatch.setitem(sys.modules, "pulumi_aws", None)  # as if the aws extra were not installed
    monkeypatch.delitem(sys.modules, "gpu_platform.nodepools.aws", raising=False)
    monkeypatch.delattr(sys.modules["gpu_platform.nodepools"], "aws", raising=False)  # set by an earlier import
    with pytest.raises(pulumi.RunError, match=r"need pulumi_aws .*pip install 'gpu-platform\[aws\]'"):
        pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    assert pulumi_mocks.resources == []


def _run_stack_program(config: dict) -> None:
    pulumi.runtime.set_all_config({f"gpu-platform:{k}": v for k, v in config.items()})
    runpy.run_path(str(ROOT / "infra" / "__main__.py"), run_name="__main__")


def test_stack_program_stops_cleanly_on_bad_config(pulumi_mocks, dev_data):
    import json

    tier(dev_data, "train")["pool"] = "nope"
    team(dev_data, "research")["quotas"]["bogus"] = 1
    with pytest.raises(pulumi.RunError) as exc:
        pulumi_mocks.run(lambda: _run_stack_program({"platform": json.dumps(dev_data)}))
    msg = str(exc.value)
    assert "tiers[0].pool: 'nope' is not a pool" in msg
    assert "teams[0].quotas.bogus" in msg
    assert "Traceback" not in msg
    assert pulumi_mocks.resources == []


def test_stack_program_builds_platform_from_dev_config(pulumi_mocks, dev_data):
    import json

    rec = pulumi_mocks.run(lambda: _run_stack_program({"platform": json.dumps(dev_data)}))
    assert rec.named("gpu-platform").type == "gpu-platform:index:GpuPlatform"


def test_depends_on_given_to_the_platform_reaches_every_resource(pulumi_mocks, dev_spec):
    """A platform created with depends_on=[cluster] must not register a node group before the cluster exists:
    Pulumi does not pass a component's depends_on to its children, so each component does."""
    import pulumi_kubernetes as k8s

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    def program():
        cluster = k8s.core.v1.ConfigMap("cluster")  # stands for the eks.Cluster the platform waits for
        GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec), pulumi.ResourceOptions(depends_on=[cluster]))

    rec = pulumi_mocks.run(program)
    leaves = [r for r in rec.resources if r.custom and r.name != "cluster"]
    assert leaves and [r.name for r in leaves if not rec.depends_on(r.name, "cluster")] == []
    assert rec.depends_on("plat-gpu-train-ng", "cluster")


def test_validation_warnings_reach_the_pulumi_log(pulumi_mocks, dev_data, monkeypatch):
    from gpu_platform import GpuPlatform, GpuPlatformArgs
    from gpu_platform.load import parse_spec

    logged = []
    monkeypatch.setattr(pulumi.log, "warn", lambda msg, resource=None, *a, **k: logged.append(("warn", msg)))
    monkeypatch.setattr(pulumi.log, "info", lambda msg, resource=None, *a, **k: logged.append(("info", msg)))
    dev_data["scheduling"]["kueue"] = {"integrations": ["batch/job", "kubeflow.org/tfjob"]}
    spec = parse_spec(dev_data)
    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=spec)))
    assert rec.named("plat")
    assert any(level == "warn" and "scheduling.kueue.integrations[1]" in msg for level, msg in logged), logged


def test_outputs_tell_a_consumer_what_its_workloads_must_carry(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    seen = {}

    def program():
        plat = GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec))
        pulumi.Output.all(plat.teams, plat.tiers, plat.node_groups, plat.prometheus_url, plat.opencost_url).apply(
            lambda v: seen.update(teams=v[0], tiers=v[1], groups=v[2], prom=v[3], opencost=v[4])
        )

    pulumi_mocks.run(program)
    assert seen["teams"]["production"] == {
        "namespaces": ["prod-inference"],
        "localQueue": "production",
        "clusterQueue": "production",
        "tiers": ["inference", "finetune"],
        "namespaceLabels": {"gpu.example.com/team": "production"},
    }
    inference = seen["tiers"]["inference"]
    assert inference["resource"] == "nvidia.com/mig-3g.40gb"
    assert inference["nodeSelector"] == {"gpu.example.com/gpu-pool": "gpu-infer"}
    assert inference["labels"] == {"gpu.example.com/gpu-tier": "inference"}
    assert inference["priorityClassName"] == "gpu-inference"
    assert set(seen["groups"]) == {p.name for p in dev_spec.node_pools}
    assert seen["prom"].startswith("http://") and seen["opencost"] == "http://opencost.opencost.svc:9003"


def test_a_secret_in_values_overrides_reaches_the_release(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs
    from gpu_platform.load import parse_spec

    def program():
        dev_data["monitoring"] = {
            "prometheus": {"valuesOverrides": {"grafana": {"adminPassword": pulumi.Output.secret("s3cret")}}}
        }
        GpuPlatform("plat", GpuPlatformArgs(spec=parse_spec(dev_data)))

    rec = pulumi_mocks.run(program)
    wrapped = rec.named("plat-observability-kube-prometheus-stack").inputs["values"]
    assert wrapped[_special_sig_key] == _special_secret_sig, "the values stay secret in the state"
    values = wrapped["value"]
    assert values["grafana"]["adminPassword"] == "s3cret"
    assert values["grafana"]["sidecar"]["dashboards"]["enabled"] is True  # merged with the platform's values


def test_a_component_used_alone_reports_field_paths(pulumi_mocks, dev_data):
    """A sub-component given a bad spec raises SpecError naming the field, as GpuPlatform does, before registering."""
    from gpu_platform.errors import SpecError
    from gpu_platform.queues import GpuQueues, GpuQueuesArgs
    from gpu_platform.spec import PlatformSpec

    tier(dev_data, "train")["pool"] = "gpu-missing"
    spec = PlatformSpec.model_validate(dev_data)  # structurally valid; the cross-field rules have not run
    with pytest.raises(SpecError) as e:
        pulumi_mocks.run(lambda: GpuQueues("q", GpuQueuesArgs(spec=spec)))
    assert isinstance(e.value, pulumi.RunError)  # shown by `pulumi up` without a traceback, as GpuPlatform's
    assert any(f.path == "tiers[0].pool" and "gpu-missing" in f.message for f in e.value.findings)
    assert pulumi_mocks.resources == []


def test_a_node_pool_component_rejects_a_pool_the_spec_lacks(pulumi_mocks, dev_spec):
    from gpu_platform.errors import SpecError
    from gpu_platform.nodepools import EksGpuNodePool, EksGpuNodePoolArgs

    with pytest.raises(SpecError) as e:
        EksGpuNodePoolArgs(spec=dev_spec, pool="gpu-trian")
    [finding] = e.value.findings
    assert finding.path == "pool" and "'gpu-trian'" in finding.message and "gpu-train" in finding.message
    rec = pulumi_mocks.run(lambda: EksGpuNodePool("train", EksGpuNodePoolArgs(spec=dev_spec, pool="gpu-train")))
    assert rec.named("train").type == "gpu-platform:index:EksGpuNodePool"
