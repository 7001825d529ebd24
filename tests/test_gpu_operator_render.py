"""GPU Operator render: per-pool device-plugin entries, mig-parted layouts, Helm values, restart hash, goldens."""

from __future__ import annotations

import copy

import pytest
import yaml

from gpu_platform.contract import mig_layout_name
from gpu_platform.errors import OverrideConflictError, RenderError
from gpu_platform.gpu_operator.device_plugin import (
    check_entry,
    render_device_plugin_configs,
)
from gpu_platform.gpu_operator.mig import render_mig_parted_config
from gpu_platform.gpu_operator.render import (
    operator_node_labels,
    render_gpu_operator,
    render_gpu_operator_artifacts,
)
from gpu_platform.load import parse_spec
from gpu_platform.spec import PlatformSpec
from gpu_platform.synth import dump_documents
from gpu_platform.validation import check_spec
from helpers.specs import dev_fleet_on_gke, pool, team, without_mig, without_mps


def _release_values(spec) -> dict:
    return render_gpu_operator(spec).release["values"]


def test_dev_device_plugin_entries_per_mode(dev_spec):
    configs = render_device_plugin_configs(dev_spec)
    assert list(configs) == ["default", "gpu-train", "gpu-infer", "gpu-dev", "gpu-ci"]
    assert configs["default"] == {"version": "v1", "flags": {"migStrategy": "none"}}
    assert configs["gpu-train"] == configs["default"]
    assert configs["gpu-infer"] == {"version": "v1", "flags": {"migStrategy": "mixed"}}
    ts = configs["gpu-dev"]["sharing"]["timeSlicing"]
    assert ts == {
        "renameByDefault": False,
        "failRequestsGreaterThanOne": False,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
    }
    mps = configs["gpu-ci"]
    assert mps["flags"] == {"migStrategy": "none", "mpsRoot": "/run/nvidia/mps"}
    assert mps["sharing"]["mps"]["failRequestsGreaterThanOne"] is True  # upstream MPS default, explicit
    assert mps["sharing"]["mps"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 8}]


def test_mig_pool_with_replicas_time_slices_each_slice(dev_data):
    pool(dev_data, "gpu-infer")["sharing"]["replicas"] = 3
    entry = render_device_plugin_configs(parse_spec(dev_data))["gpu-infer"]
    assert entry["flags"]["migStrategy"] == "mixed"
    assert entry["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/mig-1g.10gb", "replicas": 3},
        {"name": "nvidia.com/mig-2g.20gb", "replicas": 3},
        {"name": "nvidia.com/mig-3g.40gb", "replicas": 3},
    ]


def test_user_fail_requests_and_rename_are_kept(dev_data):
    pool(dev_data, "gpu-dev")["sharing"] |= {"renameByDefault": True, "failRequestsGreaterThanOne": True}
    # The validator rejects renameByDefault (tiers request the plain name); the renderer still passes it through.
    ts = render_device_plugin_configs(PlatformSpec.model_validate(dev_data))["gpu-dev"]["sharing"]["timeSlicing"]
    assert ts["renameByDefault"] is True and ts["failRequestsGreaterThanOne"] is True


@pytest.mark.parametrize(
    ("pool", "sharing", "match"),
    [
        (2, {"mode": "time-slicing", "replicas": 1}, r"replicas 1 .*allowed: >= 2"),
        (3, {"mode": "mps", "replicas": 1}, r"replicas 1 .*allowed: >= 2"),
        (3, {"mode": "mps", "replicas": 60}, r"MPS replicas 60 exceed .*2\.\.48"),
        (1, {"mode": "mig", "migLayout": {"3g.40gb": 1}, "replicas": 1}, r"replicas 1 for nvidia.com/mig-3g.40gb"),
    ],
)
def test_renderer_refuses_what_the_device_plugin_rejects(dev_data, pool, sharing, match):
    dev_data["nodePools"][pool]["sharing"] = sharing
    spec = PlatformSpec.model_validate(dev_data)  # structurally valid; the validator would reject it
    with pytest.raises(RenderError, match=match):
        render_gpu_operator(spec)


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        (
            {
                "flags": {"migStrategy": "mixed"},
                "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
            },
            "MPS with migStrategy 'mixed'",
        ),
        (
            {
                "flags": {"migStrategy": "mixed"},
                "sharing": {"mps": {"resources": [{"name": "nvidia.com/mig-1g.10gb", "replicas": 4}]}},
            },
            "MPS on MIG device",
        ),
        ({"flags": {"migStrategy": "none"}, "sharing": {"mps": {"resources": []}}}, "no resources"),
        (
            {
                "flags": {},
                "sharing": {
                    "mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]},
                    "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]},
                },
            },
            "mutually exclusive",
        ),
    ],
)
def test_check_entry_rejects_impossible_combinations(entry, match):
    with pytest.raises(RenderError, match=match):
        check_entry("nodePools[x]", entry)


def test_check_entry_uses_the_gpu_mps_limit():
    entry = {
        "flags": {"migStrategy": "none"},
        "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 20}]}},
    }
    check_entry("p", entry, mps_limit=48)
    with pytest.raises(RenderError, match=r"2\.\.16"):
        check_entry("p", entry, mps_limit=16)


def test_mig_parted_config_has_all_disabled_and_one_layout_per_mig_pool(dev_spec):
    cfg = render_mig_parted_config(dev_spec)
    assert cfg["version"] == "v1"
    name = mig_layout_name(dev_spec.pools_by_name["gpu-infer"])
    assert list(cfg["mig-configs"]) == ["all-disabled", name] and name == "gpu-infer-3g40-2g20-1g10x2"
    (item,) = cfg["mig-configs"][name]
    assert item["device-filter"] == ["0x20B210DE", "0x20B510DE", "0x20F310DE", "0x20F510DE"]
    assert item["mig-devices"] == {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
    assert cfg["mig-configs"]["all-disabled"] == [{"devices": "all", "mig-enabled": False}]


def test_mig_layout_that_does_not_fit_is_refused(dev_data):
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 2, "1g.10gb": 1}
    with pytest.raises(RenderError, match=r"not a valid placement on A100-SXM4-80GB"):
        render_mig_parted_config(PlatformSpec.model_validate(dev_data))


def test_eks_values_skip_driver_and_toolkit_and_tolerate_pool_taints(dev_spec):
    v = _release_values(dev_spec)
    assert v["driver"] == {"enabled": False} and v["toolkit"] == {"enabled": False}
    keys = {(t["key"], t["operator"], t["effect"]) for t in v["daemonsets"]["tolerations"]}
    assert keys == {("gpu.example.com/gpu-pool", "Exists", "NoSchedule"), ("nvidia.com/gpu", "Exists", "NoSchedule")}
    nfd = {t["key"] for t in v["node-feature-discovery"]["worker"]["tolerations"]}
    assert {"gpu.example.com/gpu-pool", "nvidia.com/gpu", "node-role.kubernetes.io/control-plane"} == nfd
    assert "hostPaths" not in v and "env" not in v["migManager"]


def test_values_point_at_the_rendered_configmaps(dev_spec):
    r = render_gpu_operator(dev_spec)
    names = [d["metadata"]["name"] for d in r.documents if d["kind"] == "ConfigMap"]
    v = r.release["values"]
    assert v["devicePlugin"]["config"] == {"create": False, "name": r.names.device_plugin, "default": "default"}
    assert v["migManager"]["config"] == {"name": r.names.mig_parted, "create": False, "default": "all-disabled"}
    assert v["dcgmExporter"]["config"] == {"name": r.names.dcgm, "create": False}
    assert sorted(names) == sorted([r.names.device_plugin, r.names.mig_parted, r.names.dcgm])
    assert r.release["version"] == "v26.7.0" and r.release["chart"] == "gpu-operator"
    assert r.release["repository"] == "https://helm.ngc.nvidia.com/nvidia"


def test_dcgm_configmap_carries_the_shared_metrics_csv_with_sm_active(dev_spec):
    from gpu_platform.dcgm import DCGM_CONFIGMAP_KEY, metrics_csv

    (cm,) = [d for d in render_gpu_operator(dev_spec).documents if d["metadata"]["name"].startswith("dcgm")]
    assert cm["data"] == {DCGM_CONFIGMAP_KEY: metrics_csv()}
    assert "DCGM_FI_PROF_SM_ACTIVE, gauge" in cm["data"][DCGM_CONFIGMAP_KEY]


def test_dcgm_service_monitor_is_selected_by_prometheus(dev_data):
    dev_data["monitoring"]["prometheus"] = {"install": False, "releaseName": "prom", "ruleLabels": {"team": "obs"}}
    sm = _release_values(parse_spec(dev_data))["dcgmExporter"]["serviceMonitor"]
    assert sm == {"enabled": True, "honorLabels": True, "additionalLabels": {"release": "prom", "team": "obs"}}


@pytest.mark.parametrize(
    ("variant", "strategy"),
    [
        (lambda d: d, ""),  # MIG and MPS coexist: left to each node's config
        (without_mps, "mixed"),
        (without_mig, "none"),
    ],
)
def test_mig_strategy(dev_data, variant, strategy):
    assert _release_values(parse_spec(variant(dev_data)))["mig"] == {"strategy": strategy}


def test_no_mig_pool_leaves_mig_manager_on_hardware_discovery(dev_data):
    r = render_gpu_operator(parse_spec(without_mig(dev_data)))
    assert r.mig_parted_config is None and r.names.mig_parted is None
    assert "config" not in r.release["values"]["migManager"]
    assert not any(d["metadata"]["name"].startswith("mig-parted") for d in r.documents)


def test_values_overrides_are_merged_last(dev_data):
    dev_data["gpuOperator"] = {
        "version": "v26.3.3",
        "repository": "https://example.com/charts",
        "namespace": "nv",
        "valuesOverrides": {"driver": {"enabled": True}, "dcgmExporter": {"enablePodLabels": False}},
    }
    r = render_gpu_operator(parse_spec(dev_data))
    assert r.release["version"] == "v26.3.3" and r.release["repository"] == "https://example.com/charts"
    assert r.release["namespace"] == "nv" and all(d["metadata"].get("namespace", "nv") == "nv" for d in r.documents)
    assert r.release["values"]["driver"] == {"enabled": True}
    assert r.release["values"]["dcgmExporter"]["enablePodLabels"] is False
    assert r.release["values"]["dcgmExporter"]["serviceMonitor"]["enabled"] is True  # siblings kept


def test_values_override_type_conflict_names_the_path(dev_data):
    dev_data["gpuOperator"] = {"valuesOverrides": {"devicePlugin": {"config": "oops"}}}
    with pytest.raises(OverrideConflictError, match=r"gpuOperator\.valuesOverrides\.devicePlugin\.config"):
        render_gpu_operator(parse_spec(dev_data))


def test_gke_gpu_operator_stack_values(dev_data):
    spec = parse_spec(dev_fleet_on_gke(dev_data))
    r = render_gpu_operator(spec)
    v = r.release["values"]
    assert v["driver"] == {"enabled": False}
    assert v["hostPaths"] == {"driverInstallDir": "/home/kubernetes/bin/nvidia"}
    assert v["toolkit"] == {
        "enabled": True,
        "installDir": "/home/kubernetes/bin/nvidia",
        "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
    }
    assert v["cdi"] == {"enabled": True}
    assert v["migManager"]["env"] == [{"name": "WITH_REBOOT", "value": "true"}]
    (quota,) = [d for d in r.documents if d["kind"] == "ResourceQuota"]
    assert quota["spec"]["scopeSelector"]["matchExpressions"][0]["values"][0] == "system-node-critical"
    assert operator_node_labels(spec, pool(spec, "gpu-train")) == {"gke-no-default-nvidia-gpu-device-plugin": "true"}


def test_gke_before_1_33_has_no_runtime_config_source(dev_data):
    data = dev_fleet_on_gke(dev_data)
    data["kubernetesVersion"] = "1.32"
    assert "env" not in _release_values(parse_spec(data))["toolkit"]


def test_gke_native_renders_nothing(dev_data):
    spec = PlatformSpec.model_validate(dev_fleet_on_gke(dev_data, stack="gke-native"))
    assert render_gpu_operator_artifacts(spec) == []
    assert operator_node_labels(spec, pool(spec, "gpu-train")) == {}


def test_bottlerocket_pool_gets_operands_disabled_label(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"amiType": "BOTTLEROCKET_x86_64_NVIDIA"}
    spec = parse_spec(dev_data)
    assert operator_node_labels(spec, pool(spec, "gpu-train")) == {"nvidia.com/gpu.deploy.operands": "false"}
    assert operator_node_labels(spec, pool(spec, "gpu-infer")) == {}


def test_synth_artifacts_and_notes(dev_spec):
    arts = render_gpu_operator_artifacts(dev_spec)
    assert [(a.kind, a.name) for a in arts] == [("kubernetes", "gpu-operator-configs"), ("helm", "gpu-operator")]
    assert len(arts[0].notes) == 1 and "restarts the device plugin" in arts[0].notes[0].message
    drains = [f for f in check_spec(dev_spec) if f.path == "nodePools[1].sharing.migLayout"]
    assert drains and "gpu-infer-3g40-2g20-1g10x2" in drains[0].message and "evicts the GPU pods" in drains[0].message


def _dp_name(data) -> str:
    return render_gpu_operator(parse_spec(data)).names.device_plugin


@pytest.mark.parametrize(
    "change",
    [
        lambda d: pool(d, "gpu-dev")["sharing"].update(replicas=8),
        lambda d: pool(d, "gpu-ci")["sharing"].update(replicas=16),
        lambda d: pool(d, "gpu-infer")["sharing"].update(replicas=2),
        lambda d: pool(d, "gpu-dev")["sharing"].update(failRequestsGreaterThanOne=True),
        lambda d: pool(d, "gpu-train").update(sharing={"mode": "time-slicing", "replicas": 2}),
    ],
)
def test_restart_hash_changes_with_sharing(dev_data, change):
    before = _dp_name(dev_data)
    changed = copy.deepcopy(dev_data)
    change(changed)
    assert _dp_name(changed) != before


@pytest.mark.parametrize(
    "change",
    [
        lambda d: pool(d, "gpu-train").update(maxSize=32, minSize=2),
        lambda d: team(d, "research")["quotas"].update(dev=4),
        lambda d: d.update(gpuOperator={"valuesOverrides": {"driver": {"enabled": True}}, "version": "v26.3.3"}),
        lambda d: d["monitoring"]["prometheus"].update(releaseName="prom"),
    ],
)
def test_restart_hash_ignores_everything_else(dev_data, change):
    before = _dp_name(dev_data)
    changed = copy.deepcopy(dev_data)
    change(changed)
    assert _dp_name(changed) == before


def test_golden_dev_stack(dev_spec, golden):
    r = render_gpu_operator(dev_spec)
    golden("gpu_operator/device-plugin-config.yaml", yaml.safe_dump(r.device_plugin_configs, sort_keys=False))
    golden("gpu_operator/mig-parted-config.yaml", yaml.safe_dump(r.mig_parted_config, sort_keys=False))
    golden("gpu_operator/helm-values.yaml", dump_documents([r.release]))


def test_readme_device_plugin_example_is_what_the_dev_stack_renders(dev_spec):

    from helpers.docs import section as doc_section

    section = doc_section("gpu-operator")
    block = next(b for b in section.split("```yaml\n")[1:] if b.startswith("# device-plugin entries"))
    documented = yaml.safe_load(block.split("```", 1)[0])
    configs = render_device_plugin_configs(dev_spec)
    assert documented == {k: configs[k] for k in documented} and set(documented) == {"gpu-dev", "gpu-ci"}


def test_synth_cli_writes_operator_files_and_notes(tmp_path):
    from click.testing import CliRunner

    from conftest import DEV_STACK
    from gpu_platform.cli import main

    result = CliRunner().invoke(main, ["synth", str(DEV_STACK), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    release = yaml.safe_load((tmp_path / "helm" / "gpu-operator.yaml").read_text())
    docs = list(yaml.safe_load_all((tmp_path / "kubernetes" / "gpu-operator-configs.yaml").read_text()))
    cm_names = {d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap"}
    assert release["values"]["devicePlugin"]["config"]["name"] in cm_names
    assert release["values"]["migManager"]["config"]["name"] in cm_names
    assert "evicts the GPU pods" in " ".join(result.output.split())
