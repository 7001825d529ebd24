"""promtool: the rendered rules pass `check rules`, and unit tests cover every alert and the cost rules.

The unit tests are generated from the spec's thresholds: each alert fires just over its threshold (after its
`for`) and stays silent just under it; the cost rules turn a known allocation into the catalog's dollars.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess

import pytest
import yaml
from gpu_platform.observability.alerts import ALERTS
from gpu_platform.observability.names import pool_label, tier_label
from gpu_platform.observability.pricing import pool_price
from gpu_platform.observability.rules import rule_groups

PROMTOOL = shutil.which("promtool")
MODEL = "NVIDIA A100-SXM4-80GB"
BASE = {"severity": "warning", "platform": "gpu-platform"}


@pytest.fixture(scope="module")
def promtool() -> str:
    """Path of promtool; skip outside CI when absent, fail in CI."""
    if PROMTOOL is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool missing in CI (Debian package `prometheus`)")
        pytest.skip("promtool not installed (apt-get install prometheus)")
    return PROMTOOL


def _minutes(duration: str) -> int:
    units = {"h": 60, "m": 1, "d": 1440}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([dhm])", duration))


def _s(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    body = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{body}}}", "values": values}


def _gpu(i: int, **extra: str) -> dict[str, str]:
    return {"gpu": str(i), "UUID": f"GPU-{i}", "Hostname": "n-train-1", "modelName": MODEL, **extra}


def _pod(ns: str, pod: str, tier: str | None, spec, phase: str = "Running") -> list[dict[str, str]]:
    labels = {"namespace": ns, "pod": pod}
    out = [_s("kube_pod_status_phase", {**labels, "phase": "Running"}, f"{int(phase == 'Running')}x200")]
    tl = {tier_label(spec.label_domain): tier} if tier else {}
    out.append(_s("kube_pod_labels", {**labels, **tl}, "1x200"))
    return out


def _requests(ns: str, pod: str, resource: str, units: int, container: str = "main", n: int = 200) -> dict[str, str]:
    labels = {"namespace": ns, "pod": pod, "container": container, "node": "n1", "resource": resource,
              "unit": "integer"}
    return _s("kube_pod_container_resource_requests", labels, f"{units}x{n}")


def rates(spec) -> dict[str, float]:
    """$/hour per unit of each tier, from the pricing module."""
    return {t.name: pool_price(spec, spec.pools_by_name[t.pool]).unit_hourly[spec.resource_of(t)]
            for t in spec.tiers}


def cost_test(spec) -> dict:
    """A known allocation on the dev spec and the dollars per hour it must cost."""
    r = rates(spec)
    series = [
        _requests("research", "train-0", "nvidia_com_gpu", 8), *_pod("research", "train-0", "train", spec),
        _requests("research", "nb-0", "nvidia_com_gpu", 1), *_pod("research", "nb-0", "dev", spec),
        _requests("research", "nb-pending", "nvidia_com_gpu", 4),
        *_pod("research", "nb-pending", "dev", spec, phase="Pending"),
        _requests("research", "untiered", "nvidia_com_gpu", 1), *_pod("research", "untiered", None, spec),
        _requests("prod-inference", "serve-0", "nvidia_com_mig_3g_40gb", 1),
        _requests("prod-inference", "serve-0", "nvidia_com_mig_3g_40gb", 2, container="sidecar"),
        *_pod("prod-inference", "serve-0", "inference", spec),
        _requests("prod-inference", "ft-0", "nvidia_com_mig_2g_20gb", 2),
        *_pod("prod-inference", "ft-0", "finetune", spec),
    ]
    expected = [("research", "train", "gpu-train", 8), ("research", "dev", "gpu-dev", 1),
                ("prod-inference", "inference", "gpu-infer", 3), ("prod-inference", "finetune", "gpu-infer", 2)]
    team = {"research": "research", "prod-inference": "production"}
    by_ns = [{"labels": f'namespace_tier:gpu_cost_hourly:sum{{namespace="{ns}",pool="{p}",tier="{t}"}}', "value": n * r[t]} for ns, t, p, n in expected]
    by_team = [{"labels": f'team_tier:gpu_cost_hourly:sum{{team="{team[ns]}",tier="{t}"}}', "value": n * r[t]} for ns, t, p, n in expected]
    units = [{"labels": f'namespace_tier:gpu_units_allocated:sum{{namespace="{ns}",resource="{res}",tier="{t}"}}', "value": n}
             for (ns, t, _, n), res in zip(expected, ["nvidia_com_gpu", "nvidia_com_gpu", "nvidia_com_mig_3g_40gb",
                                                       "nvidia_com_mig_2g_20gb"], strict=True)]
    return {"interval": "1m", "input_series": series, "promql_expr_test": [
        {"expr": "namespace_tier:gpu_units_allocated:sum", "eval_time": "10m", "exp_samples": units},
        {"expr": "namespace_tier:gpu_cost_hourly:sum", "eval_time": "10m", "exp_samples": by_ns},
        {"expr": "team_tier:gpu_cost_hourly:sum", "eval_time": "10m", "exp_samples": by_team},
    ]}


def utilisation_test(spec) -> dict:
    """SM-active per pool and per tier from two GPUs of one training pod."""
    pl = pool_label(spec.label_domain)
    series = [
        _s("DCGM_FI_PROF_SM_ACTIVE", _gpu(0, namespace="research", pod="train-0", container="main"), "0.5x100"),
        _s("DCGM_FI_PROF_SM_ACTIVE", _gpu(1, namespace="research", pod="train-0", container="main"), "0.25x100"),
        _s("kube_node_labels", {"node": "n-train-1", pl: "gpu-train"}, "1x100"),
        *_pod("research", "train-0", "train", spec),
    ]
    return {"interval": "1m", "input_series": series, "promql_expr_test": [
        {"expr": "pool:gpu_sm_active:avg1h", "eval_time": "70m", "exp_samples": [
            {"labels": 'pool:gpu_sm_active:avg1h{pool="gpu-train"}', "value": 0.375}]},
        {"expr": "tier:gpu_sm_active:avg1h", "eval_time": "70m", "exp_samples": [
            {"labels": 'tier:gpu_sm_active:avg1h{tier="train"}', "value": 0.375}]},
    ]}


def _alert_case(name: str, series: list, fire_at: int, labels: list[dict], quiet_at: int | None = None) -> dict:
    checks = [{"eval_time": f"{fire_at}m", "alertname": name, "exp_alerts": [{"exp_labels": lb} for lb in labels]}]
    if quiet_at is not None:  # before `for` has elapsed nothing fires
        checks.insert(0, {"eval_time": f"{quiet_at}m", "alertname": name, "exp_alerts": []})
    return {"interval": "1m", "input_series": series, "alert_rule_test": checks}


def device_alert_tests(spec) -> list[dict]:
    """Stranded capacity, XID, framebuffer and temperature: one GPU over the threshold, one just under."""
    th = spec.monitoring.thresholds
    pod = {"namespace": "research", "pod": "idle-0", "container": "main"}
    busy = {"namespace": "research", "pod": "busy-0", "container": "main"}
    stranded_for, n = _minutes(th.stranded_for), _minutes(th.stranded_for) + 30
    fb_used_hi, fb_used_lo = th.fb_memory_percent + 0.5, th.fb_memory_percent - 0.5
    # An unallocated GPU's series carries the exporter's own pod as target labels (Prometheus Operator).
    exporter = {"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x7k2p", "container": "nvidia-dcgm-exporter"}
    return [
        _alert_case("GpuStrandedCapacity", [
            _s("DCGM_FI_PROF_SM_ACTIVE", _gpu(0, **pod), f"{th.stranded_sm_active * 0.9!r}x{n}"),
            _s("DCGM_FI_PROF_SM_ACTIVE", _gpu(1, **busy), f"{th.stranded_sm_active * 1.1!r}x{n}"),
            _s("DCGM_FI_PROF_SM_ACTIVE", _gpu(2, **exporter), f"0x{n}"),  # idle but not allocated: not stranded
            _requests("research", "idle-0", "nvidia_com_gpu", 1, n=n),
            _requests("research", "busy-0", "nvidia_com_gpu", 1, n=n),
            _s("kube_pod_container_resource_requests", {**exporter, "node": "n1", "resource": "cpu", "unit": "core"},
               f"0.1x{n}"),
        ], stranded_for + 5, [{**BASE, **_gpu(0, **pod), "alertname": "GpuStrandedCapacity"}], stranded_for - 5),
        _alert_case("GpuXidError", [
            _s("DCGM_FI_DEV_XID_ERRORS", _gpu(0), "0 0 0 79x30"),
            _s("DCGM_FI_DEV_XID_ERRORS", _gpu(1), "0x33"),
        ], 10, [{**BASE, **_gpu(0), "severity": "critical"}], 1),
        _alert_case("GpuFramebufferMemoryHigh", [
            _s("DCGM_FI_DEV_FB_USED", _gpu(0), f"{fb_used_hi * 800!r}x60"),
            _s("DCGM_FI_DEV_FB_FREE", _gpu(0), f"{(100 - fb_used_hi) * 800!r}x60"),
            _s("DCGM_FI_DEV_FB_USED", _gpu(1), f"{fb_used_lo * 800!r}x60"),
            _s("DCGM_FI_DEV_FB_FREE", _gpu(1), f"{(100 - fb_used_lo) * 800!r}x60"),
        ], _minutes(th.fb_memory_for) + 5, [{**BASE, **_gpu(0)}], _minutes(th.fb_memory_for) - 2),
        _alert_case("GpuTemperatureHigh", [
            _s("DCGM_FI_DEV_GPU_TEMP", _gpu(0), f"{th.temperature_celsius + 0.5!r}x60"),
            _s("DCGM_FI_DEV_GPU_TEMP", _gpu(1), f"{th.temperature_celsius - 0.5!r}x60"),
        ], _minutes(th.temperature_for) + 5, [{**BASE, **_gpu(0)}], _minutes(th.temperature_for) - 2),
    ]


def node_alert_tests(spec) -> list[dict]:
    """MIG config failed / pending and pool capacity shortfall."""
    th, pl = spec.monitoring.thresholds, pool_label(spec.label_domain)
    state = "label_nvidia_com_mig_config_state"
    node = {"node": "n-infer-1", pl: "gpu-infer"}
    nodes = [_s("kube_node_labels", {**node, state: "failed"}, "1x60"),
             _s("kube_node_labels", {"node": "n-infer-2", pl: "gpu-infer", state: "success"}, "1x60")]
    pending = [_s("kube_node_labels", {"node": "n-infer-3", pl: "gpu-infer", state: "pending"}, "1x90"),
               _s("kube_node_labels", {"node": "n-infer-2", pl: "gpu-infer", state: "success"}, "1x90")]
    mig_for, fail_for = _minutes(th.mig_pending_for), _minutes(th.mig_failed_for)
    short_for = _minutes(th.capacity_mismatch_for)

    def allocatable(n3g: int) -> list[dict[str, str]]:
        res = {"nvidia_com_mig_3g_40gb": n3g, "nvidia_com_mig_2g_20gb": 8, "nvidia_com_mig_1g_10gb": 16}
        out = [_s("kube_node_labels", node, "1x60"), _s("kube_node_labels", {"node": "n-dev-1", pl: "gpu-dev"}, "1x60"),
               _s("kube_node_status_allocatable", {"node": "n-dev-1", "resource": "nvidia_com_gpu", "unit": "integer"},
                  "32x60")]
        return out + [_s("kube_node_status_allocatable", {"node": "n-infer-1", "resource": r, "unit": "integer"},
                         f"{n}x60") for r, n in res.items()]

    short = {**BASE, "pool": "gpu-infer", "resource": "nvidia_com_mig_3g_40gb"}
    return [
        _alert_case("GpuMigConfigFailed", nodes, fail_for + 5,
                    [{**node, state: "failed", "severity": "critical", "platform": "gpu-platform"}], fail_for - 2),
        _alert_case("GpuMigConfigPending", pending, mig_for + 5,
                    [{**BASE, "node": "n-infer-3", pl: "gpu-infer", state: "pending"}], mig_for - 5),
        _alert_case("GpuPoolCapacityShortfall", allocatable(7), short_for + 5, [short], short_for - 5),
        _alert_case("GpuPoolCapacityShortfall", allocatable(8), short_for + 5, []),
    ]


def queue_alert_tests(spec) -> list[dict]:
    """Kueue backlog per ClusterQueue and starved pods on time-sliced pools."""
    th, pl = spec.monitoring.thresholds, pool_label(spec.label_domain)
    thr, depth = th.pending_workloads, th.starved_queue_depth
    kueue = [
        _s("kueue_pending_workloads", {"cluster_queue": "research", "status": "active"}, f"{thr - 2}x90"),
        _s("kueue_pending_workloads", {"cluster_queue": "research", "status": "inadmissible"}, "3x90"),
        _s("kueue_pending_workloads", {"cluster_queue": "production", "status": "active"}, f"{thr - 4}x90"),
        _s("kueue_pending_workloads", {"cluster_queue": "production", "status": "inadmissible"}, "4x90"),
    ]
    pods = [_s("kube_node_labels", {"node": "n-dev-1", pl: "gpu-dev"}, "1x60"),
            _s("kube_node_labels", {"node": "n-train-1", pl: "gpu-train"}, "1x60")]
    for pod, node, value, phase in [("nb-0", "n-dev-1", depth + 1, "Running"), ("nb-1", "n-dev-1", depth, "Running"),
                                    ("nb-2", "n-dev-1", depth + 1, "Pending"), ("train-9", "n-train-1", 100, "Running")]:
        labels = {"namespace": "research", "pod": pod}
        pods += [_s("gpu_app_queue_depth", {**labels, "container": "app"}, f"{value!r}x60"),
                 _s("kube_pod_info", {**labels, "node": node, "uid": f"uid-{pod}"}, "1x60"),
                 _s("kube_pod_status_phase", {**labels, "phase": "Running"}, f"{int(phase == 'Running')}x60")]
    pend, starve = _minutes(th.pending_for), _minutes(th.starved_for)
    return [
        _alert_case("KueuePendingWorkloadsBacklog", kueue, pend + 5, [{**BASE, "cluster_queue": "research"}], pend - 5),
        _alert_case("GpuTimeSlicedPodStarved", pods, starve + 5, [{**BASE, "namespace": "research", "pod": "nb-0"}],
                    starve - 2),
    ]


def unit_tests(spec) -> list[dict]:
    """Every promtool test group for the spec."""
    return [cost_test(spec), utilisation_test(spec), *device_alert_tests(spec), *node_alert_tests(spec),
            *queue_alert_tests(spec)]


def _fix_alertnames(tests: list[dict]) -> list[dict]:
    for t in tests:
        for check in t.get("alert_rule_test", []):
            for a in check["exp_alerts"]:
                a["exp_labels"].pop("alertname", None)
    return tests


def write_files(spec, tmp_path, tests: list[dict] | None = None) -> tuple:
    """rules.yaml (full), rules-test.yaml (annotations stripped: promtool compares them) and tests.yaml."""
    groups = rule_groups(spec)
    full = tmp_path / "rules.yaml"
    full.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    bare = copy.deepcopy(groups)
    for g in bare:
        for r in g["rules"]:
            r.pop("annotations", None)
    (tmp_path / "rules-test.yaml").write_text(yaml.safe_dump({"groups": bare}, sort_keys=False))
    doc = {"rule_files": ["rules-test.yaml"], "evaluation_interval": "1m",
           "tests": _fix_alertnames(tests if tests is not None else unit_tests(spec))}
    path = tmp_path / "tests.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=200))
    return full, path


def _run(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_check_rules(promtool, dev_spec, tmp_path):
    full, _ = write_files(dev_spec, tmp_path)
    res = _run(promtool, "check", "rules", str(full), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    n = sum(len(g["rules"]) for g in rule_groups(dev_spec))
    assert f"SUCCESS: {n} rules found" in res.stdout


def test_unit_tests_cover_every_alert(dev_spec):
    tested = {c["alertname"] for t in unit_tests(dev_spec) for c in t.get("alert_rule_test", [])}
    rendered = {r["alert"] for g in rule_groups(dev_spec) for r in g["rules"] if "alert" in r}
    assert rendered == set(ALERTS) == tested


def test_unit_tests_cover_every_alert_both_ways(dev_spec):
    for name in ALERTS:
        checks = [c for t in unit_tests(dev_spec) for c in t.get("alert_rule_test", []) if c["alertname"] == name]
        assert any(c["exp_alerts"] for c in checks), f"{name}: no firing case"
        assert any(not c["exp_alerts"] for c in checks), f"{name}: no silent case"


def test_promtool_unit_tests_pass(promtool, dev_spec, tmp_path):
    _, tests = write_files(dev_spec, tmp_path)
    res = _run(promtool, "test", "rules", str(tests), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_promtool_unit_tests_pass_with_other_thresholds(promtool, dev_data, tmp_path):
    from gpu_platform.load import parse_spec

    dev_data["monitoring"]["thresholds"] = {"strandedSmActive": 0.3, "strandedFor": "3h", "fbMemoryPercent": 75,
                                            "temperatureCelsius": 80, "pendingWorkloads": 3, "migPendingFor": "1h",
                                            "starvedQueueDepth": 12, "starvedFor": "20m"}
    spec = parse_spec(dev_data)
    _, tests = write_files(spec, tmp_path)
    res = _run(promtool, "test", "rules", str(tests), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_wrong_expectation_fails_the_build(promtool, dev_spec, tmp_path):
    tests = [cost_test(dev_spec)]
    tests[0]["promql_expr_test"][1]["exp_samples"][0]["value"] += 0.01
    _, path = write_files(dev_spec, tmp_path, tests)
    res = _run(promtool, "test", "rules", str(path), cwd=tmp_path)
    assert res.returncode != 0 and "namespace_tier:gpu_cost_hourly:sum" in res.stdout + res.stderr


def test_cost_expectations_match_hand_figures(dev_spec):
    """The dollars the promtool test expects, recomputed from the catalog by hand."""
    p4de, p4d = 27.447050, 21.957642  # $/node-hour, catalog rows for p4de.24xlarge and p4d.24xlarge
    hand = {"train": 8 * p4de / 8, "dev": 1 * p4d / (8 * 4), "inference": 3 * p4de / 8 * 3 / 7,
            "finetune": 2 * p4de / 8 * 2 / 7}
    got = {re.search(r'tier="([^"]+)"', s["labels"]).group(1): s["value"]
           for s in cost_test(dev_spec)["promql_expr_test"][1]["exp_samples"]}
    assert got == pytest.approx(hand, rel=1e-12)


def test_rule_threshold_mismatch_fails_the_build(promtool, dev_spec, dev_data, tmp_path):
    from gpu_platform.load import parse_spec

    dev_data["monitoring"]["thresholds"] = {"temperatureCelsius": 90}
    hotter = parse_spec(dev_data)
    _, path = write_files(hotter, tmp_path, device_alert_tests(dev_spec))
    res = _run(promtool, "test", "rules", str(path), cwd=tmp_path)
    assert res.returncode != 0 and "GpuTemperatureHigh" in res.stdout + res.stderr
