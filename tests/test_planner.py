"""The fleet planner end to end: demand parsing, cost-minimising plans, the spec fragment, the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpu_platform.cli import main
from gpu_platform.errors import SpecError
from gpu_platform.load import parse_spec
from gpu_platform.planner import PlanningError, load_demand, parse_demand, plan, spec_fragment
from gpu_platform.synth import render_all
from helpers.planner import BASE, CLOUD, assert_serves, demand, generated_demand, merged_spec

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_mig_tiers_share_a_mixed_layout_pool_when_cheaper():
    result = plan(
        demand(
            {"name": "infer", "mig": {"profile": "3g.40gb", "instances": 8}},
            {"name": "small", "mig": {"profile": "2g.20gb", "instances": 16}},
        )
    )
    # 8 x (3g + 2x2g) GPUs = one p4de node serves both; separate pools would need two nodes.
    assert len(result.pools) == 1 and result.pools[0].nodes == 1
    assert dict(result.pools[0].candidate.layout) == {"3g.40gb": 1, "2g.20gb": 2}
    spec = merged_spec(result)
    assert_serves(result, spec)
    assert render_all(spec)


def test_hand_checked_costs_and_baseline():
    result = plan(
        demand(
            {"name": "train", "gpus": 10, "instanceTypes": ["p5.48xlarge"]},
            {"name": "dev", "seats": {"count": 12, "perGpu": 4}},
        )
    )
    by_tier = {t: result.pool_of(t) for t in ("train", "dev")}
    assert by_tier["train"].nodes == 2 and by_tier["train"].candidate.itype.name == "p5.48xlarge"
    assert by_tier["dev"].nodes == 1 and by_tier["dev"].candidate.itype.name == "p4d.24xlarge"  # cheapest node
    assert result.hourly == pytest.approx(2 * 55.04 + 21.957642)
    assert result.baseline_gpus == 22
    assert result.baseline_hourly == pytest.approx(10 * 55.04 / 8 + 12 * 21.957642 / 8)
    assert result.lower_bound_gpus == 10 + 3
    assert result.optimal and result.cost_bound == pytest.approx(result.hourly)


def test_priorities_follow_the_spec_ladder_unless_given():
    result = plan(
        demand(
            {"name": "train", "gpus": 8},
            {"name": "infer", "mig": {"profile": "3g.40gb", "instances": 2}},
            {"name": "nb", "seats": {"count": 4, "perGpu": 4}},
            {"name": "ci", "seats": {"count": 8, "perGpu": 8}, "isolation": "process"},
            {"name": "vip", "gpus": 1, "priority": 7},
        )
    )
    assert [t.get("priority") for t in spec_fragment(result)["tiers"]] == [None, None, None, None, 7]
    spec = merged_spec(result)
    prio = {t.name: spec.priority_of(t) for t in spec.tiers}
    assert prio["train"] > prio["infer"] > prio["nb"] > prio["ci"] and prio["vip"] == 7


def test_price_override_changes_the_choice():
    tier = {"name": "train", "gpus": 8}
    assert plan(demand(tier)).pools[0].candidate.itype.name == "p4d.24xlarge"
    cheap = plan(demand(tier, priceOverrides={"p5.48xlarge": 10.0}))
    assert cheap.pools[0].candidate.itype.name == "p5.48xlarge"
    assert spec_fragment(cheap)["catalog"]["priceOverrides"] == {"p5.48xlarge": 10.0}
    assert merged_spec(cheap).hardware.instance("p5.48xlarge").hourly_usd == 10.0


def test_exclusive_isolation_keeps_mig_tier_on_whole_gpus_and_headroom_sets_max():
    result = plan(
        demand(
            {"name": "infer", "mig": {"profile": "3g.40gb", "instances": 9}, "isolation": "exclusive"},
            headroomPercent=50,
        )
    )
    pool = result.pools[0]
    assert pool.candidate.mode.value == "exclusive" and pool.nodes == 2 and pool.max_nodes == 3
    assert "resource" not in spec_fragment(result)["tiers"][0]


def test_headroom_stops_at_what_a_cluster_holds_and_the_emitted_spec_validates():
    result = plan(demand({"name": "train", "gpus": 4000, "instanceTypes": ["p5.48xlarge"]}, headroomPercent=1000))
    [pool] = result.pools
    assert (pool.nodes, pool.max_nodes) == (500, 5000)
    assert result.notes == (
        f"pool {pool.name!r}: maxSize 5,000, not 5,500 (headroom 1000%): a Kubernetes cluster supports at most "
        "5,000 nodes",
    )
    merged_spec(result)  # validates: maxSize within 0..5,000
    small = plan(demand({"name": "train", "gpus": 16, "instanceTypes": ["p5.48xlarge"]}, headroomPercent=1000))
    assert small.pools[0].max_nodes == 22 and small.notes == ()


def test_a_gke_pool_over_a_thousand_nodes_is_told_how_many_zones_it_needs():
    result = plan(
        parse_demand({"cloud": "gcp", "tiers": [{"name": "t", "gpus": 36000, "instanceTypes": ["a3-highgpu-8g"]}]})
    )
    [pool] = result.pools
    assert pool.max_nodes == 4500
    assert result.notes == (
        f"pool {pool.name!r}: maxSize 4,500 needs at least 5 zones in gcp.zones (GKE allows 1,000 nodes per node "
        "pool per zone); a region has 3 or 4 zones: split the pool",
    )


def test_a_pool_beyond_one_cluster_is_refused_and_the_cli_says_so(tmp_path):
    with pytest.raises(PlanningError, match="needs 6,000 nodes: a Kubernetes cluster supports at most 5,000"):
        plan(demand({"name": "train", "gpus": 48000, "instanceTypes": ["p5.48xlarge"]}))
    path = tmp_path / "d.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "cloud": "aws",
                "headroomPercent": 1000,
                "tiers": [{"name": "a", "gpus": 4000, "instanceTypes": ["p5.48xlarge"]}],
            }
        )
    )
    res = CliRunner().invoke(main, ["plan", str(path), "--format", "yaml"])
    assert res.exit_code == 0 and "maxSize: 5000" in res.stdout and "maxSize 5,000, not 5,500" in res.stderr
    assert "warning" not in res.stdout


def test_a_pool_beyond_one_cluster_is_told_the_larger_types_its_tiers_allow():
    # The cheapest pool for 20,004 seats at 4 per GPU is 5,001 one-GPU nodes: the refusal names the allowed types
    # with more GPUs per node, cheapest GPU first, and listing one of them gives a plan within one cluster.
    seats = {"name": "notebooks", "seats": {"count": 20004, "perGpu": 4}}
    with pytest.raises(PlanningError) as refused:
        plan(parse_demand({"cloud": "aws", "tiers": [seats]}), time_limit=2)
    message = str(refused.value)
    assert "needs 5,001 nodes: a Kubernetes cluster supports at most 5,000 nodes" in message
    assert (
        "the tiers of pool 'ts4-g4dn-xlarge' (notebooks) also allow types with more GPUs per node than g4dn.xlarge, "
        "cheapest GPU first: g4dn.12xlarge (4 GPUs)"
    ) in message
    assert message.endswith("; list only such types in the tiers' instanceTypes, or split the demand across clusters")
    [pool] = plan(parse_demand({"cloud": "aws", "tiers": [{**seats, "instanceTypes": ["g4dn.12xlarge"]}]})).pools
    assert pool.nodes == 1251 and pool.candidate.itype.name == "g4dn.12xlarge"
    with pytest.raises(PlanningError) as only_largest:
        plan(demand({"name": "train", "gpus": 48000, "instanceTypes": ["p5.48xlarge"]}))
    assert "allow types with more GPUs" not in str(only_largest.value)


def test_a_plan_dearer_than_its_baseline_says_why_and_counts_one_gpu_in_the_singular(tmp_path):
    path = tmp_path / "one.yaml"
    path.write_text("cloud: aws\ntiers: [{name: a, gpus: 1}]\n")
    res = CliRunner().invoke(main, ["plan", str(path)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "a: 1 GPU " in res.stdout and "1 GPUs" not in res.stdout
    seat = tmp_path / "seat.yaml"
    seat.write_text("cloud: aws\ntiers: [{name: s, seats: {count: 1, perGpu: 4}}]\n")
    assert "s: 1 seat /4" in CliRunner().invoke(main, ["plan", str(seat)], terminal_width=200).stdout
    assert (
        "The baseline is below the plan: it puts each GPU, instance or seat demanded on a GPU of its own (1 GPU)"
        in res.stdout
    )
    assert "(8 GPUs planned)" in res.stdout
    small = tmp_path / "small.yaml"
    small.write_text((ROOT / "examples" / "demand-small.yaml").read_text())
    assert "baseline is below" not in CliRunner().invoke(main, ["plan", str(small)], terminal_width=200).stdout


def test_mps_isolation_and_gcp():
    result = parse_demand(
        {
            "cloud": "gcp",
            "instanceTypes": ["a2-highgpu-1g", "a2-highgpu-8g"],
            "tiers": [{"name": "ci", "seats": {"count": 10, "perGpu": 8}, "isolation": "process"}],
        }
    )
    planned = plan(result)
    pool = planned.pools[0]
    assert (pool.candidate.mode.value, pool.candidate.replicas, pool.candidate.itype.name, pool.nodes) == (
        "mps",
        8,
        "a2-highgpu-1g",
        2,
    )
    assert_serves(planned, merged_spec(planned, "gcp"))


@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        ({"tiers": [{"name": "a", "gpus": 1, "isolaton": "none"}]}, "tiers[0].isolaton", "did you mean 'isolation'"),
        ({"tiers": [{"name": "a"}]}, "tiers[0]", "exactly one of gpus, mig, seats"),
        (
            {"tiers": [{"name": "a", "seats": {"count": 4, "perGpu": 4}, "isolation": "hardware"}]},
            "tiers[0].isolation",
            "allowed: process",
        ),
        ({"instanceTypes": ["p9.huge"], "tiers": [{"name": "a", "gpus": 1}]}, "instanceTypes[0]", "p4d.24xlarge"),
        ({"tiers": [{"name": "A_b", "gpus": 1}, {"name": "A_b", "gpus": 1}]}, "tiers[1].name", "duplicate"),
        ({"tiers": [{"name": "a", "seats": {"count": 4, "perGpu": 1}}]}, "tiers[0].seats.perGpu", "greater than"),
    ],
)
def test_demand_errors_name_the_field(data, path, words):
    with pytest.raises(SpecError) as info:
        parse_demand({"cloud": "aws", **data})
    assert any(f.path == path and words in f.message for f in info.value.findings), info.value.findings


def test_missing_cloud_and_unservable_tier():
    with pytest.raises(SpecError, match="cloud: missing"):
        parse_demand({"tiers": [{"name": "a", "gpus": 1}]})
    # A100-40GB has no 7g.80gb profile and too little memory to hold one on a whole GPU.
    bad = demand({"name": "a", "mig": {"profile": "7g.80gb", "instances": 1}, "instanceTypes": ["p4d.24xlarge"]})
    with pytest.raises(PlanningError, match=r"tiers\[0\] \(a\): no allowed instance type"):
        plan(bad)


_TIER = st.one_of(
    st.builds(lambda n: {"gpus": n}, st.integers(1, 20)),
    st.builds(
        lambda p, n: {"mig": {"profile": p, "instances": n}},
        st.sampled_from(["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]),
        st.integers(1, 30),
    ),
    st.builds(
        lambda n, r, iso: {"seats": {"count": n, "perGpu": r}, "isolation": iso},
        st.integers(1, 60),
        st.sampled_from([2, 4, 8]),
        st.sampled_from(["none", "process"]),
    ),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=1, max_size=5))
# Two seat tiers sharing one time-sliced pool: the GPU bound rounds their seats up together.
@example(
    [
        {"seats": {"count": 17, "perGpu": 8}, "isolation": "none"},
        {"seats": {"count": 41, "perGpu": 8}, "isolation": "none"},
    ]
)
def test_every_plan_is_valid_covers_the_demand_and_synthesizes(tiers):
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)))
    result = plan(d, time_limit=5)
    spec = merged_spec(result)
    assert_serves(result, spec)
    assert result.lower_bound_gpus <= result.gpus and result.cost_bound <= result.hourly + 1e-6
    assert all(m.lower_bound <= m.exact <= m.first_fit for m in result.mig)
    assert render_all(spec)


def test_cli_plan_table_yaml_json(tmp_path):
    runner = CliRunner()
    path = str(ROOT / "examples" / "demand-small.yaml")
    table = runner.invoke(main, ["plan", path])
    assert table.exit_code == 0, table.output
    assert "cost comparison" in table.output and "whole-GPU baseline" in table.output
    fragment = yaml.safe_load(runner.invoke(main, ["plan", path, "--format", "yaml"]).output)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump({"cloud": "aws", **BASE, "aws": CLOUD["aws"], **fragment}))
    assert runner.invoke(main, ["validate", str(spec_file)]).exit_code == 0
    data = json.loads(runner.invoke(main, ["plan", path, "--format", "json", "--time-limit", "2"]).output)
    assert data["optimal"] and data["totalHourly"] <= data["baselineHourly"]
    assert {p["name"] for p in data["pools"]} == {p["name"] for p in fragment["nodePools"]}


def test_the_gke_demand_example_plans_into_a_spec_that_validates_and_renders(tmp_path):
    runner = CliRunner()
    path = str(ROOT / "examples" / "demand-gke.yaml")
    run = runner.invoke(main, ["plan", path, "--format", "yaml"])
    assert run.exit_code == 0, run.output
    fragment = yaml.safe_load(run.stdout)
    assert {p["sharing"]["mode"] for p in fragment["nodePools"]} == {"exclusive", "mig", "time-slicing"}
    assert "note: set gcp.gpuStack: gpu-operator in the spec: the MIG pools (mig-" in run.stderr
    table = runner.invoke(main, ["plan", path]).stdout
    assert "labelDomain and gcp (project, location); set gcp.gpuStack: gpu-operator" in table
    notes = json.loads(runner.invoke(main, ["plan", path, "--format", "json"]).stdout)["notes"]
    assert any(n.startswith("set gcp.gpuStack: gpu-operator in the spec") for n in notes)
    aws = runner.invoke(main, ["plan", str(ROOT / "examples" / "demand-small.yaml"), "--format", "yaml"])
    assert "gpuStack" not in aws.stderr
    gcp = {**CLOUD["gcp"], "gpuStack": "gpu-operator"}  # MIG pools name MIG resources (the example's comment)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump({"cloud": "gcp", **BASE, "gcp": gcp, **fragment}))
    assert runner.invoke(main, ["validate", str(spec_file)]).exit_code == 0
    result = plan(load_demand(path))
    spec = parse_spec({"cloud": "gcp", **BASE, "gcp": gcp, **spec_fragment(result)})
    assert_serves(result, spec)
    assert render_all(spec)


def test_cli_plan_yaml_says_on_stderr_when_the_time_limit_stops_the_proof(tmp_path):
    from helpers.planner import generated_demand_file

    path = tmp_path / "demand.yaml"
    path.write_text(yaml.safe_dump(generated_demand_file(64, 4), sort_keys=False))  # proven in 13-20 s
    run = CliRunner().invoke(main, ["plan", str(path), "--format", "yaml", "--time-limit", "1"])
    assert run.exit_code == 0, run.output
    assert "nodePools" in yaml.safe_load(run.stdout)  # stdout stays the spec fragment alone
    assert "not proven optimal in " in run.stderr and "(time limit 1.0s); MIP gap" in run.stderr


def test_readme_plan_keeps_its_search_in_one_process(tmp_path, monkeypatch):
    """The README's line runs as shown and prints the plan it prints without the variable; and on a demand whose
    search does start a worker process, the variable keeps `plan` from starting one."""
    import re
    import shlex

    from gpu_platform.planner import remote
    from helpers.planner import generated_demand_file

    monkeypatch.delenv("GPU_PLATFORM_PLANNER_PROCESSES", raising=False)
    block = re.search(r"tested-by test=tests/test_planner.py::test_readme_plan_keeps.*?```sh\n(.*?)```", README, re.S)
    setting, *command = shlex.split(block.group(1))
    name, value = setting.split("=")
    assert command[:2] == ["gpu-platform", "plan"]
    with_worker = CliRunner().invoke(main, command[1:])
    started = []
    init = remote.Worker.__init__
    monkeypatch.setattr(remote.Worker, "__init__", lambda self: started.append(init(self)))
    without = CliRunner().invoke(main, command[1:], env={name: value})
    assert without.exit_code == 0 and "optimal" in without.output and without.output == with_worker.output
    path = tmp_path / "demand.yaml"
    path.write_text(yaml.safe_dump(generated_demand_file(64, 2), sort_keys=False))
    for env, workers in (({name: value}, 0), ({}, 1)):
        started.clear()
        assert CliRunner().invoke(main, ["plan", str(path), "--time-limit", "3"], env=env).exit_code == 0
        assert len(started) == workers


def test_cli_plan_reports_bad_demand(tmp_path):
    bad = tmp_path / "demand.yaml"
    bad.write_text("cloud: aws\ntiers: [{name: a, gpus: 0}]\n")
    result = CliRunner().invoke(main, ["plan", str(bad)])
    assert result.exit_code == 1
    assert "tiers[0].gpus" in result.output


def test_readme_example_plan_is_current():
    from helpers.docs import section as doc_section

    section = doc_section("planner")
    blocks = section.split("```yaml\n")[1:]
    demand_text, fragment_text = (b.split("```", 1)[0] for b in blocks[:2])
    assert yaml.safe_load(demand_text) == yaml.safe_load((ROOT / "examples" / "demand-small.yaml").read_text())
    result = plan(parse_demand(yaml.safe_load(demand_text)))
    assert yaml.safe_load(fragment_text) == spec_fragment(result)
    assert f"{result.hourly:,.2f}" in section and f"{result.saving_percent:.1f}%" in section


def _hard_demand():
    """64 mixed tiers (the benchmark's generated seed-3 demand): far more than 0.3 s to prove on any machine."""
    return generated_demand(64, 3)


def test_time_limit_reports_the_gap_and_a_valid_plan():
    result = plan(_hard_demand(), time_limit=0.3)
    assert not result.optimal and result.gap > 0
    assert result.cost_bound < result.hourly
    assert result.gap == pytest.approx((result.hourly - result.cost_bound) / result.hourly)
    assert_serves(result, merged_spec(result))


def test_the_whole_plan_honours_the_time_limit():
    # 128 tiers: column generation, the search and the MIG packing figures all share the limit. The margin is
    # generous (a shared machine); without a shared deadline the packing alone could take its own full limit.
    import time

    demand = _big_demand()
    start = time.perf_counter()
    result = plan(demand, time_limit=1.0)
    assert time.perf_counter() - start < 1.0 + 4.0
    assert not result.optimal and result.gap > 0 and result.cost_bound < result.hourly
    assert result.mig and all(m.lower_bound <= m.exact <= m.first_fit for m in result.mig)
    assert_serves(result, merged_spec(result))


def _big_demand():
    """128 mixed tiers (the benchmark's generated seed-3 demand)."""
    return generated_demand(128, 3)


def test_gcp_pool_names_fit_gkes_node_pool_name():
    from gpu_platform.nodepools.gke import GKE_POOL_NAME_MAX

    result = parse_demand(
        {
            "cloud": "gcp",
            "instanceTypes": ["a2-highgpu-8g"],
            "tiers": [
                {"name": "a", "mig": {"profile": "3g.20gb", "instances": 3}},
                {"name": "b", "mig": {"profile": "2g.10gb", "instances": 2}},
                {"name": "c", "mig": {"profile": "1g.5gb", "instances": 5}},
            ],
        }
    )
    planned = plan(result)
    # mig-a2-highgpu-8g-3g20-2g10-1g5x2 (33 characters) fits EKS's 36 but not GKE's 31: the type is shortened
    assert [p.name for p in planned.pools] == ["mig-a2-3g20-2g10-1g5x2"]
    assert all(len(p.name) <= GKE_POOL_NAME_MAX for p in planned.pools)
    from gpu_platform.load import parse_spec

    gcp = {"project": "ml-project", "location": "us-central1", "zones": ["us-central1-a"], "gpuStack": "gpu-operator"}
    spec = parse_spec(
        {
            "cloud": "gcp",
            "clusterName": "planned",
            "labelDomain": "gpu.example.com",
            "gcp": gcp,
            **spec_fragment(planned),
        }
    )  # validates under GKE's naming rule (mixed MIG: the operator stack)
    assert_serves(planned, spec)


@pytest.mark.parametrize("limit", ["nan", "inf", "-1", "0.05", "86401"])
def test_the_cli_takes_only_a_finite_time_limit_within_its_range(limit):
    result = CliRunner().invoke(main, ["plan", str(ROOT / "examples" / "demand-small.yaml"), "--time-limit", limit])
    assert result.exit_code == 2
    assert "--time-limit" in result.output and "86400" in result.output


_KICK = """
import os, signal, sys, threading
from gpu_platform.planner import master
real, kicked = master.solve_cover, []

def solve_cover(*args, **kwargs):  # the listings' first program: a Ctrl-C {delay} s into it
    if threading.current_thread().name == "gpu-platform-listings" and not kicked:
        kicked.append(threading.Timer({delay}, os.kill, (os.getpid(), signal.SIGINT)))
        kicked[0].start()
    return real(*args, **kwargs)

master.solve_cover = solve_cover
from gpu_platform.cli import main
sys.argv = ["gpu-platform", "plan", sys.argv[1], "--time-limit", "30"]
main()
"""


@pytest.mark.parametrize("delay", [0.2, 1.5])
def test_an_interrupt_while_the_main_thread_waits_for_the_listings_ends_the_cli_cleanly(tmp_path, delay):
    """One Ctrl-C while the main thread waits for the listings (0.2 s into their first program: the race's first
    half second) or searches beside them (1.5 s): the CLI says Aborted and exits 1. With `Thread.join` there, the
    interrupted join marked the running thread stopped, the interpreter did not wait for it, and the process
    aborted (SIGABRT) on every try."""
    import signal
    import subprocess
    import sys

    from helpers.planner import generated_demand_file

    path = tmp_path / "demand.yaml"
    path.write_text(yaml.safe_dump(generated_demand_file(64, 4), sort_keys=False))
    run = subprocess.run(
        [sys.executable, "-c", _KICK.format(delay=delay), str(path)],
        capture_output=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from a terminal
    )
    err = run.stderr.decode()
    assert run.returncode == 1, err
    assert "Aborted" in err and "terminate called" not in err and "Traceback" not in err


_KICK_IGNORED = """
import os, signal, sys
from gpu_platform.planner import report
real = report.plan_tables

def plan_tables(result):  # a Ctrl-C once the plan is made, while its tables are printed
    os.kill(os.getpid(), signal.SIGINT)
    return real(result)

report.plan_tables = plan_tables
from gpu_platform.cli import main
sys.argv = ["gpu-platform", "plan", sys.argv[1]]
main()
"""


def test_a_plan_started_with_ctrl_c_ignored_keeps_it_ignored(tmp_path):
    """A job a script puts in the background (or `nohup`) starts with SIGINT ignored: `plan` leaves it so, and a
    Ctrl-C during the plan does not abort it."""
    import signal
    import subprocess
    import sys

    path = str(ROOT / "examples" / "demand-small.yaml")
    run = subprocess.run(
        [sys.executable, "-c", _KICK_IGNORED, path],
        capture_output=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert run.returncode == 0, run.stderr.decode()
    assert "Aborted" not in run.stderr.decode() and "cost comparison" in run.stdout.decode()


_KICK_RENDER = """
import os, signal, sys, threading, time
from gpu_platform.planner import report

def plan_tables(result):  # two Ctrl-Cs once the plan is made, while its tables are printed
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)

report.plan_tables = plan_tables
from gpu_platform.cli import main
sys.argv = ["gpu-platform", "plan", sys.argv[1]]
main()
"""


def test_two_interrupts_after_the_plan_is_made_end_the_cli_cleanly(tmp_path):
    """The first Ctrl-C lands after `plan` returned, the second while click exits: still Aborted and exit 1 (the
    second one killed the process by SIGINT before: exit -2)."""
    import signal
    import subprocess
    import sys

    path = str(ROOT / "examples" / "demand-small.yaml")
    run = subprocess.run(
        [sys.executable, "-c", _KICK_RENDER, path],
        capture_output=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from a terminal
    )
    err = run.stderr.decode()
    assert run.returncode == 1, err
    assert "Aborted" in err and "Traceback" not in err and "cost comparison" not in run.stdout.decode()


@pytest.mark.parametrize("interrupts", [1, 2])
def test_an_interrupt_while_the_listings_solve_ends_the_cli_cleanly(tmp_path, interrupts):
    """Ctrl-C while the listings' thread is inside HiGHS: the CLI says Aborted and exits 1; the process waits
    for that thread to stop at HiGHS's next callback instead of aborting under it (SIGABRT). A second Ctrl-C
    while it waits is ignored (without that, it aborted the process on every try)."""
    import signal
    import subprocess
    import sys
    import time

    from helpers.planner import generated_demand_file

    path = tmp_path / "demand.yaml"
    path.write_text(yaml.safe_dump(generated_demand_file(64, 4), sort_keys=False))
    cli = [sys.executable, "-c", "from gpu_platform.cli import main; main()", "plan", str(path), "--time-limit", "30"]
    run = subprocess.Popen(
        cli,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from a terminal
    )
    began = time.monotonic()
    while not (workers := _workers_of(run.pid)) and time.monotonic() - began < 20:
        time.sleep(0.05)  # branch-and-price starts its worker process when it joins the listings
    time.sleep(max(0.0, 3 - (time.monotonic() - began)))  # the large group's listings are at work by then
    for _ in range(interrupts):
        run.send_signal(signal.SIGINT)
        time.sleep(0.3)  # the second one reaches the interpreter's wait for the solver's threads
    out, err = run.communicate(timeout=60)
    assert run.returncode == 1, err.decode()
    assert "Aborted" in err.decode() and "terminate called" not in err.decode() and "Traceback" not in err.decode()
    assert workers and not [pid for pid in workers if _running(pid)]  # the worker was stopped


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not exited (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _workers_of(parent: int) -> list[int]:
    """The planner's worker processes (`planner.remote`) whose parent is `parent`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"gpu_platform.planner.remote" in cmdline:
            found.append(int(entry))
    return found


def test_a_boolean_field_given_another_value_lists_true_and_false():
    with pytest.raises(SpecError) as refused:
        parse_demand(
            {"cloud": "aws", "tiers": [{"name": "a", "seats": {"count": 4, "perGpu": 4, "exactDensity": "yes"}}]}
        )
    assert str(refused.value.findings[0].message).endswith("Input should be a valid boolean; allowed: true or false")
    spec = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["gpu-platform:platform"]
    spec["scheduling"]["kueue"]["enabled"] = "maybe"
    with pytest.raises(SpecError) as refused:
        parse_spec(spec)
    [finding] = [f for f in refused.value.findings if f.path == "scheduling.kueue.enabled"]
    assert finding.message.startswith("'maybe': Input should be a valid boolean")
    assert finding.message.endswith("; allowed: true or false")


def test_a_mig_tier_no_allowed_type_serves_is_told_which_gpus_have_its_profile():
    tier = {"name": "a", "mig": {"profile": "7g.141gb", "instances": 2}, "instanceTypes": ["p4d.24xlarge"]}
    with pytest.raises(PlanningError) as refused:
        plan(parse_demand({"cloud": "aws", "tiers": [tier]}))
    assert str(refused.value) == (
        "tiers[0] (a): no allowed instance type can serve it; allowed types: p4d.24xlarge; 7g.141gb is a MIG "
        "profile of H200-141GB, and on whole GPUs it needs 141 GB per GPU (the allowed types: p4d.24xlarge "
        "(A100-SXM4-40GB, 40 GB)); check the instance types, isolation, gpuModel and minGpuMemoryGiB"
    )
    served = plan(parse_demand({"cloud": "aws", "tiers": [{**tier, "instanceTypes": ["p5en.48xlarge"]}]}))
    assert served.pools[0].candidate.itype.name == "p5en.48xlarge"
