"""promtool: the rendered rules pass `check rules`, and unit tests cover every alert and the cost rules.

Input series carry exactly the label sets the pinned exporters emit (`tests/helpers/exporters.py`, with the
upstream source of each), so a rule that names a label the exporters do not have returns nothing and fails
here. The tests are generated from the spec's thresholds: each alert fires just over its threshold (after its
`for`) and stays silent just under it; the cost rules turn a known allocation into the catalog's dollars.
"""

from __future__ import annotations

import re

import pytest

from gpu_platform.observability.alerts import ALERTS
from gpu_platform.observability.names import MIG_CONFIG_STATE_LABEL, ksm_label, pool_label
from gpu_platform.observability.pricing import pool_price
from gpu_platform.observability.rules import rule_groups
from helpers.exporters import (
    app_queue_depth,
    dcgm_labels,
    ksm_allocatable,
    ksm_condition,
    ksm_node,
    ksm_pod,
    ksm_requests,
    ksm_unschedulable,
    kueue_pending,
    series,
    xid_labels,
)
from helpers.promtool import alert_case, promtool_path, run, write_files

BASE = {"severity": "warning", "platform": "gpu-platform"}
CRIT = {"severity": "critical", "platform": "gpu-platform"}


@pytest.fixture(scope="module")
def promtool() -> str:
    return promtool_path()


def _minutes(duration: str) -> int:
    units = {"h": 60, "m": 1, "d": 1440}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([dhm])", duration))


def rates(spec) -> dict[str, float]:
    """$/hour per unit of each tier, from the pricing module."""
    return {t.name: pool_price(spec, spec.pools_by_name[t.pool]).unit_hourly[spec.resource_of(t)] for t in spec.tiers}


def cost_test(spec) -> dict:
    """A known allocation on the dev spec and the dollars per hour it must cost."""
    r = rates(spec)
    series_ = [
        ksm_requests("research", "train-0", "n-train-1", "nvidia_com_gpu", 8),
        *ksm_pod(spec, "research", "train-0", "n-train-1", "train"),
        ksm_requests("research", "nb-0", "n-dev-1", "nvidia_com_gpu", 1),
        *ksm_pod(spec, "research", "nb-0", "n-dev-1", "dev"),
        ksm_requests("research", "nb-pending", "n-dev-1", "nvidia_com_gpu", 4),
        *ksm_pod(spec, "research", "nb-pending", "n-dev-1", "dev", phase="Pending"),
        ksm_requests("research", "untiered", "n-dev-1", "nvidia_com_gpu", 1),
        *ksm_pod(spec, "research", "untiered", "n-dev-1", None),
        ksm_requests("prod-inference", "serve-0", "n-infer-1", "nvidia_com_mig_3g_40gb", 1),
        ksm_requests("prod-inference", "serve-0", "n-infer-1", "nvidia_com_mig_3g_40gb", 2, container="sidecar"),
        ksm_requests("prod-inference", "serve-0", "n-infer-1", "cpu", 4),
        *ksm_pod(spec, "prod-inference", "serve-0", "n-infer-1", "inference"),
        ksm_requests("prod-inference", "ft-0", "n-infer-1", "nvidia_com_mig_2g_20gb", 2),
        *ksm_pod(spec, "prod-inference", "ft-0", "n-infer-1", "finetune"),
    ]
    expected = [
        ("research", "train", "gpu-train", 8),
        ("research", "dev", "gpu-dev", 1),
        ("prod-inference", "inference", "gpu-infer", 3),
        ("prod-inference", "finetune", "gpu-infer", 2),
    ]
    team = {"research": "research", "prod-inference": "production"}
    by_ns = [
        {"labels": f'namespace_tier:gpu_cost_hourly:sum{{namespace="{ns}",pool="{p}",tier="{t}"}}', "value": n * r[t]}
        for ns, t, p, n in expected
    ]
    by_team = [
        {"labels": f'team_tier:gpu_cost_hourly:sum{{team="{team[ns]}",tier="{t}"}}', "value": n * r[t]}
        for ns, t, p, n in expected
    ]
    units = [
        {
            "labels": f'namespace_tier:gpu_units_allocated:sum{{namespace="{ns}",resource="{res}",tier="{t}"}}',
            "value": n,
        }
        for (ns, t, _, n), res in zip(
            expected,
            ["nvidia_com_gpu", "nvidia_com_gpu", "nvidia_com_mig_3g_40gb", "nvidia_com_mig_2g_20gb"],
            strict=True,
        )
    ]
    return {
        "interval": "1m",
        "input_series": series_,
        "promql_expr_test": [
            {"expr": "namespace_tier:gpu_units_allocated:sum", "eval_time": "10m", "exp_samples": units},
            {"expr": "namespace_tier:gpu_cost_hourly:sum", "eval_time": "10m", "exp_samples": by_ns},
            {"expr": "team_tier:gpu_cost_hourly:sum", "eval_time": "10m", "exp_samples": by_team},
        ],
    }


def utilisation_test(spec) -> dict:
    """SM-active per pool (joined on the exporter's `hostname`) and per tier, from two GPUs of one training pod
    and one MIG slice of an inference pod."""
    train, infer = ("research", "train-0"), ("prod-inference", "serve-0")
    series_ = [
        series("DCGM_FI_PROF_SM_ACTIVE", dcgm_labels(spec, "n-train-1", 0, pod=train, tier="train"), "0.5x100"),
        series("DCGM_FI_PROF_SM_ACTIVE", dcgm_labels(spec, "n-train-1", 1, pod=train, tier="train"), "0.25x100"),
        series(
            "DCGM_FI_PROF_SM_ACTIVE",
            dcgm_labels(spec, "n-infer-1", 0, pod=infer, tier="inference", mig=("3g.40gb", 1)),
            "0.8x100",
        ),
        series("DCGM_FI_PROF_SM_ACTIVE", dcgm_labels(spec, "n-infer-1", 0, mig=("1g.10gb", 9)), "0x100"),
        ksm_node(spec, "n-train-1", "gpu-train", 100),
        ksm_node(spec, "n-infer-1", "gpu-infer", 100),
        ksm_node(spec, "ip-10-0-0-1", None, 100),  # a system node without the pool label
        *ksm_pod(spec, *train, "n-train-1", "train", n=100),
        *ksm_pod(spec, *infer, "n-infer-1", "inference", n=100),
    ]
    return {
        "interval": "1m",
        "input_series": series_,
        "promql_expr_test": [
            {
                "expr": "pool:gpu_sm_active:avg1h",
                "eval_time": "70m",
                "exp_samples": [
                    {"labels": 'pool:gpu_sm_active:avg1h{pool="gpu-train"}', "value": 0.375},
                    {"labels": 'pool:gpu_sm_active:avg1h{pool="gpu-infer"}', "value": 0.4},
                ],
            },
            {
                "expr": "tier:gpu_sm_active:avg1h",
                "eval_time": "70m",
                "exp_samples": [
                    {"labels": 'tier:gpu_sm_active:avg1h{tier="train"}', "value": 0.375},
                    {"labels": 'tier:gpu_sm_active:avg1h{tier="inference"}', "value": 0.8},
                ],
            },
        ],
    }


def _fb(spec, node: str, gpu: int, used: float, free: float, reserved: float, n: int = 60) -> list[dict]:
    labels = dcgm_labels(spec, node, gpu, pod=("research", f"fb-{gpu}"), tier="train")
    return [
        series(f"DCGM_FI_DEV_FB_{k}", labels, f"{v!r}x{n}")
        for k, v in (("USED", used), ("FREE", free), ("RESERVED", reserved))
    ]


def device_alert_tests(spec) -> list[dict]:
    """Stranded capacity, framebuffer (with the driver's reserve) and temperature."""
    th = spec.monitoring.thresholds
    idle, busy = ("research", "idle-0"), ("research", "busy-0")
    stranded_for, n = _minutes(th.stranded_for), _minutes(th.stranded_for) + 30
    total = 81920.0  # MiB
    # GPU 0: free is under (100 - threshold) % of the framebuffer once the reserve counts; used / (used + free)
    # alone stays under the threshold, which is what a rule ignoring FB_RESERVED would see.
    free_hi = total * (100 - th.fb_memory_percent - 0.2) / 100
    reserve = total * 0.05
    free_lo = total * (100 - th.fb_memory_percent + 0.5) / 100
    idle_gpu = dcgm_labels(spec, "n-train-1", 0, pod=idle, tier="train")
    temp0, temp1 = dcgm_labels(spec, "n-train-1", 0), dcgm_labels(spec, "n-train-1", 1)
    return [
        alert_case(
            "GpuStrandedCapacity",
            [
                series("DCGM_FI_PROF_SM_ACTIVE", idle_gpu, f"{th.stranded_sm_active * 0.9!r}x{n}"),
                series(
                    "DCGM_FI_PROF_SM_ACTIVE",
                    dcgm_labels(spec, "n-train-1", 1, pod=busy, tier="train"),
                    f"{th.stranded_sm_active * 1.1!r}x{n}",
                ),
                # idle but held by no pod: the exporter pod's own target labels, not stranded
                series("DCGM_FI_PROF_SM_ACTIVE", dcgm_labels(spec, "n-train-1", 2), f"0x{n}"),
                ksm_requests(*idle, "n-train-1", "nvidia_com_gpu", 1, n=n),
                ksm_requests(*busy, "n-train-1", "nvidia_com_gpu", 1, n=n),
                ksm_requests("gpu-operator", dcgm_labels(spec, "n-train-1", 2)["pod"], "n-train-1", "cpu", 0.1, n=n),
            ],
            stranded_for + 5,
            [{**BASE, **idle_gpu}],
            stranded_for - 5,
        ),
        alert_case(
            "GpuFramebufferMemoryHigh",
            [
                *_fb(spec, "n-train-1", 0, total - free_hi - reserve, free_hi, reserve),
                *_fb(spec, "n-train-1", 1, total - free_lo - 500, free_lo, 500.0),
            ],
            _minutes(th.fb_memory_for) + 5,
            [{**BASE, **dcgm_labels(spec, "n-train-1", 0, pod=("research", "fb-0"), tier="train")}],
            _minutes(th.fb_memory_for) - 2,
        ),
        alert_case(
            "GpuTemperatureHigh",
            [
                series("DCGM_FI_DEV_GPU_TEMP", temp0, f"{th.temperature_celsius + 0.5!r}x60"),
                series("DCGM_FI_DEV_GPU_TEMP", temp1, f"{th.temperature_celsius - 0.5!r}x60"),
            ],
            _minutes(th.temperature_for) + 5,
            [{**BASE, **temp0}],
            _minutes(th.temperature_for) - 2,
        ),
    ]


def _xid(spec, node: str, gpu: int, xid: int, start: int, minutes: int, end: int, **kw) -> list[dict]:
    """The exporter's windowed count: the `xid` series while the XID is in the window, else the zero series."""
    quiet = xid_labels(spec, node, gpu, None, **kw)
    seen = xid_labels(spec, node, gpu, xid, **kw)
    stop = start + minutes
    return [
        series("DCGM_EXP_XID_ERRORS_COUNT", quiet, f"0x{start - 1} stale _x{minutes - 1} 0x{end - stop}"),
        series("DCGM_EXP_XID_ERRORS_COUNT", seen, f"_x{start} 1x{minutes - 1} stale"),
        # DCGM_FI_DEV_XID_ERRORS keeps the last XID forever (dcgm-exporter issue #500); no alert reads it
        series(
            "DCGM_FI_DEV_XID_ERRORS",
            {**dcgm_labels(spec, node, gpu, **kw), "err_code": str(xid), "err_msg": "x"},
            f"_x{start} {xid}x{end - start}",
        ),
    ]


def xid_alert_tests(spec) -> list[dict]:
    """Hardware XIDs page and then clear; application XIDs warn the pod's team; repair that does not act pages."""
    th = spec.monitoring.thresholds
    hw_window, app_window = _minutes(th.xid_hardware_window), _minutes(th.xid_application_window)
    remediation = _minutes(th.xid_remediation_for)
    end = hw_window + 40
    pod = {"pod": ("research", "train-0"), "tier": "train"}
    hw = {
        k: v
        for k, v in xid_labels(spec, "n-train-1", 3, 79).items()
        if k in ("hostname", "gpu", "UUID", "modelName", "xid")
    }
    app = {
        k: v
        for k, v in xid_labels(spec, "n-train-1", 1, 31, **pod).items()
        if k in ("hostname", "gpu", "UUID", "namespace", "pod", "xid")
    }
    hardware = [*_xid(spec, "n-train-1", 3, 79, 5, 5, end), *_xid(spec, "n-train-1", 1, 31, 5, 5, end, **pod)]
    cordon = remediation // 2
    nodes = [
        *_xid(spec, "n-train-1", 3, 79, 5, 5, end),
        *_xid(spec, "n-train-2", 0, 48, 5, 5, end),
        ksm_unschedulable("n-train-1", f"0x{end}"),
        ksm_unschedulable("n-train-2", f"0x{5 + cordon} 1x{end - 5 - cordon}"),
    ]
    return [
        alert_case("GpuXidHardwareError", hardware, 6, [{**CRIT, **hw}], quiet_at=4, clear_at=10 + hw_window + 2),
        alert_case("GpuXidHardwareError", hardware, 5 + hw_window - 2, [{**CRIT, **hw}]),
        alert_case("GpuXidApplicationError", hardware, 6, [{**BASE, **app}], quiet_at=4, clear_at=10 + app_window + 2),
        alert_case(
            "GpuXidHardwareNotRemediated",
            nodes,
            6 + remediation + 2,
            [{**CRIT, "node": "n-train-1"}],
            quiet_at=6 + remediation - 3,
        ),
        *remediation_tests(spec),
    ]


def remediation_tests(spec) -> list[dict]:
    """Repair that worked stays quiet while the XID is still inside the hardware window; no repair pages.

    EKS node auto repair cordons the node and reboots it after 10 min: the node comes back under the same name,
    schedulable, with the XID still in `xidHardwareWindow`."""
    th = spec.monitoring.thresholds
    hw_window, remediation = _minutes(th.xid_hardware_window), _minutes(th.xid_remediation_for)
    end = hw_window + 40
    node = "ip-10-0-1-10"
    xid = _xid(spec, node, 0, 79, 1, 5, end)  # XID 79 counted for the exporter's 5-minute window
    ready = ksm_condition(node, "Ready", f"1x{end}", end)
    # cordoned from 10 to 15 min (drain, reboot), schedulable again afterwards
    repaired = [*xid, *ready, ksm_unschedulable(node, f"0x9 1x5 0x{end - 15}")]
    # rebooted without a cordon: NotReady from 12 to 16 min
    rebooted = [*xid, ksm_unschedulable(node, f"0x{end}"), *ksm_condition(node, "Ready", f"1x11 0x4 1x{end - 16}", end)]
    never = [*xid, *ready, ksm_unschedulable(node, f"0x{end}")]
    # repaired, then a new hardware XID after the node's return: the alert arms again
    again = [
        *_xid(spec, node, 0, 79, 1, 5, 30),
        *ready,
        ksm_unschedulable(node, f"0x9 1x5 0x{end - 15}"),
        *_xid(spec, node, 1, 48, 30, 5, end),
    ]
    fired = [{**CRIT, "node": node}]
    checks = []
    for at in (remediation + 8, hw_window - 5, hw_window + 3):
        checks += [
            alert_case("GpuXidHardwareNotRemediated", repaired, at, []),
            alert_case("GpuXidHardwareNotRemediated", rebooted, at, []),
        ]
    return [
        *checks,
        alert_case(
            "GpuXidHardwareNotRemediated",
            never,
            remediation + 8,
            fired,
            quiet_at=remediation - 3,
            clear_at=hw_window + remediation,
        ),
        alert_case("GpuXidHardwareNotRemediated", again, 30 + remediation + 5, fired, quiet_at=30 + remediation - 5),
    ]


def node_alert_tests(spec) -> list[dict]:
    """MIG config failed / pending and pool capacity shortfall."""
    th, pl = spec.monitoring.thresholds, pool_label(spec.label_domain)
    state = ksm_label(MIG_CONFIG_STATE_LABEL)
    nodes = [
        ksm_node(spec, "n-infer-1", "gpu-infer", 60, **{state: "failed"}),
        ksm_node(spec, "n-infer-2", "gpu-infer", 60, **{state: "success"}),
    ]
    pending = [
        ksm_node(spec, "n-infer-3", "gpu-infer", 90, **{state: "pending"}),
        ksm_node(spec, "n-infer-2", "gpu-infer", 90, **{state: "success"}),
    ]
    mig_for, fail_for = _minutes(th.mig_pending_for), _minutes(th.mig_failed_for)
    short_for = _minutes(th.capacity_mismatch_for)

    def allocatable(n3g: int) -> list[dict[str, str]]:
        res = {"nvidia_com_mig_3g_40gb": n3g, "nvidia_com_mig_2g_20gb": 8, "nvidia_com_mig_1g_10gb": 16}
        out = [
            ksm_node(spec, "n-infer-1", "gpu-infer", 60),
            ksm_node(spec, "n-dev-1", "gpu-dev", 60),
            ksm_allocatable("n-dev-1", "nvidia_com_gpu", 32, 60),
            ksm_allocatable("n-dev-1", "cpu", 95, 60),
        ]
        return out + [ksm_allocatable("n-infer-1", r, n, 60) for r, n in res.items()]

    short = {**BASE, "pool": "gpu-infer", "resource": "nvidia_com_mig_3g_40gb"}
    return [
        alert_case(
            "GpuMigConfigFailed",
            nodes,
            fail_for + 5,
            [{**CRIT, "node": "n-infer-1", pl: "gpu-infer", state: "failed"}],
            fail_for - 2,
        ),
        alert_case(
            "GpuMigConfigPending",
            pending,
            mig_for + 5,
            [{**BASE, "node": "n-infer-3", pl: "gpu-infer", state: "pending"}],
            mig_for - 5,
        ),
        alert_case("GpuPoolCapacityShortfall", allocatable(7), short_for + 5, [short], short_for - 5),
        alert_case("GpuPoolCapacityShortfall", allocatable(8), short_for + 5, []),
    ]


def queue_alert_tests(spec) -> list[dict]:
    """Kueue backlog per ClusterQueue and starved pods on time-sliced pools."""
    th, thr, depth = (
        spec.monitoring.thresholds,
        spec.monitoring.thresholds.pending_workloads,
        spec.monitoring.thresholds.starved_queue_depth,
    )
    kueue = [
        kueue_pending("research", "active", f"{thr - 2}x90"),
        kueue_pending("research", "inadmissible", "3x90"),
        kueue_pending("production", "active", f"{thr - 4}x90", role="follower"),  # a second replica's view
        kueue_pending("production", "active", f"{thr - 4}x90"),
        kueue_pending("production", "inadmissible", "4x90"),
    ]
    pods = [ksm_node(spec, "n-dev-1", "gpu-dev", 60), ksm_node(spec, "n-train-1", "gpu-train", 60)]
    for pod, node, value, phase in [
        ("nb-0", "n-dev-1", depth + 1, "Running"),
        ("nb-1", "n-dev-1", depth, "Running"),
        ("nb-2", "n-dev-1", depth + 1, "Pending"),
        ("train-9", "n-train-1", 100, "Running"),
    ]:
        pods += [
            app_queue_depth("research", pod, f"{value!r}x60"),
            *ksm_pod(spec, "research", pod, node, "dev", phase=phase, n=60),
        ]
    pend, starve = _minutes(th.pending_for), _minutes(th.starved_for)
    return [
        alert_case("KueuePendingWorkloadsBacklog", kueue, pend + 5, [{**BASE, "cluster_queue": "research"}], pend - 5),
        alert_case(
            "GpuTimeSlicedPodStarved", pods, starve + 5, [{**BASE, "namespace": "research", "pod": "nb-0"}], starve - 2
        ),
    ]


def unit_tests(spec) -> list[dict]:
    """Every promtool test group for the spec."""
    return [
        cost_test(spec),
        utilisation_test(spec),
        *device_alert_tests(spec),
        *xid_alert_tests(spec),
        *node_alert_tests(spec),
        *queue_alert_tests(spec),
    ]


def test_check_rules(promtool, dev_spec, tmp_path):
    full, _ = write_files(dev_spec, tmp_path, [])
    res = run(promtool, "check", "rules", str(full), cwd=tmp_path)
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
    _, tests = write_files(dev_spec, tmp_path, unit_tests(dev_spec))
    res = run(promtool, "test", "rules", str(tests), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_promtool_unit_tests_pass_with_other_thresholds(promtool, dev_data, tmp_path):
    from gpu_platform.load import parse_spec

    dev_data["monitoring"]["thresholds"] = {
        "strandedSmActive": 0.3,
        "strandedFor": "3h",
        "fbMemoryPercent": 75,
        "temperatureCelsius": 80,
        "pendingWorkloads": 3,
        "migPendingFor": "1h",
        "starvedQueueDepth": 12,
        "starvedFor": "20m",
        "xidHardwareWindow": "2h",
        "xidApplicationWindow": "30m",
        "xidRemediationFor": "45m",
        "xidHardwareCodes": [48, 79],
    }
    spec = parse_spec(dev_data)
    _, tests = write_files(spec, tmp_path, unit_tests(spec))
    res = run(promtool, "test", "rules", str(tests), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_wrong_expectation_fails_the_build(promtool, dev_spec, tmp_path):
    tests = [cost_test(dev_spec)]
    tests[0]["promql_expr_test"][1]["exp_samples"][0]["value"] += 0.01
    _, path = write_files(dev_spec, tmp_path, tests)
    res = run(promtool, "test", "rules", str(path), cwd=tmp_path)
    assert res.returncode != 0 and "namespace_tier:gpu_cost_hourly:sum" in res.stdout + res.stderr


def test_a_rule_on_a_label_the_exporter_lacks_fails_the_build(promtool, dev_spec, tmp_path, monkeypatch):
    """dcgm-exporter 4.6.0-4.8.3 writes `hostname`; a pool rule joining on the old `Hostname` returns nothing."""
    from gpu_platform.observability import rules

    monkeypatch.setattr(rules, "DCGM_NODE_LABEL", "Hostname")
    _, path = write_files(dev_spec, tmp_path, [utilisation_test(dev_spec)])
    res = run(promtool, "test", "rules", str(path), cwd=tmp_path)
    assert res.returncode != 0 and "pool:gpu_sm_active:avg1h" in res.stdout + res.stderr


def test_cost_expectations_match_hand_figures(dev_spec):
    """The dollars the promtool test expects, recomputed from the catalog by hand."""
    p4de, p4d = 27.447050, 21.957642  # $/node-hour, catalog rows for p4de.24xlarge and p4d.24xlarge
    hand = {
        "train": 8 * p4de / 8,
        "dev": 1 * p4d / (8 * 4),
        "inference": 3 * p4de / 8 * 3 / 7,
        "finetune": 2 * p4de / 8 * 2 / 7,
    }
    got = {
        re.search(r'tier="([^"]+)"', s["labels"]).group(1): s["value"]
        for s in cost_test(dev_spec)["promql_expr_test"][1]["exp_samples"]
    }
    assert got == pytest.approx(hand, rel=1e-12)


def test_rule_threshold_mismatch_fails_the_build(promtool, dev_spec, dev_data, tmp_path):
    from gpu_platform.load import parse_spec

    dev_data["monitoring"]["thresholds"] = {"temperatureCelsius": 90}
    hotter = parse_spec(dev_data)
    _, path = write_files(hotter, tmp_path, device_alert_tests(dev_spec))
    res = run(promtool, "test", "rules", str(path), cwd=tmp_path)
    assert res.returncode != 0 and "GpuTemperatureHigh" in res.stdout + res.stderr
