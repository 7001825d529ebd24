"""The shipped examples validate, and the consumer stack builds its platform under mocks."""

from __future__ import annotations

import runpy

import pytest

from conftest import ROOT
from gpu_platform.errors import Severity

EXAMPLES = [ROOT / "Pulumi.dev.yaml", ROOT / "examples" / "aws-1000-a100.yaml", ROOT / "examples" / "gke-a2.yaml"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_validates_without_errors(path):
    from gpu_platform.load import load_spec
    from gpu_platform.validation import check_spec

    spec = load_spec(path)
    assert not [f for f in check_spec(spec) if f.severity is Severity.ERROR]


def test_thousand_gpu_example_has_thousand_gpus_across_all_modes():
    from gpu_platform.capacity import pool_capacity
    from gpu_platform.load import load_spec

    spec = load_spec(ROOT / "examples" / "aws-1000-a100.yaml")
    assert sum(pool_capacity(spec, p).gpus_max for p in spec.node_pools) == 1000
    assert sum(p.max_size for p in spec.node_pools) == 125
    assert {p.instance_type for p in spec.node_pools} == {"p4de.24xlarge"}
    notebook, ci = (p.sharing for p in spec.node_pools if p.sharing.mode.value in ("time-slicing", "mps"))
    assert (notebook.replicas, ci.replicas) == (4, 8)
    assert {p.sharing.mode.value for p in spec.node_pools} == {"exclusive", "mig", "time-slicing", "mps"}


def test_gke_example_mirrors_aws_shape():
    from gpu_platform.load import load_spec

    aws = load_spec(ROOT / "examples" / "aws-1000-a100.yaml")
    gke = load_spec(ROOT / "examples" / "gke-a2.yaml")
    assert gke.cloud.value == "gcp"
    assert [(p.name, p.sharing, p.max_size) for p in aws.node_pools] == [
        (p.name, p.sharing, p.max_size) for p in gke.node_pools
    ]
    assert {p.instance_type for p in gke.node_pools} == {"a2-ultragpu-8g"}


def test_consumer_stack_builds_platform_from_python_objects(pulumi_mocks):
    module: dict = {}
    rec = pulumi_mocks.run(
        lambda: module.update(
            runpy.run_path(str(ROOT / "examples" / "consumer-stack" / "__main__.py"), run_name="__main__")
        )
    )
    platform = rec.named("ml-team")
    assert platform.type == "gpu-platform:index:GpuPlatform"
    spec = module["build_spec"]("c1")
    assert spec.resource_of(spec.tiers_by_name["serve"]) == "nvidia.com/mig-3g.40gb"
    pools = {r.name for r in rec.of_type("gpu-platform:index:EksGpuNodePool") if r.parent_name == "ml-team"}
    assert pools == {"ml-team-h100-train", "ml-team-h100-serve"}
    serve = rec.named("ml-team-h100-serve-ng").inputs
    assert serve["instanceTypes"] == ["p5.48xlarge"] and serve["labels"]["nvidia.com/mig.config"] == "h100-serve-3g40x2"
    assert all(r.parent_name for r in rec.resources if r is not platform)


def test_consumer_stack_workloads_built_from_outputs_land_on_their_tiers(pulumi_mocks):
    """The Jobs the consumer stack builds from `teams` and `tiers` go through the rendered platform's admission,
    Kueue and the scheduler (`explain`) and come out admitted, on their tier's pool and flavor, schedulable."""
    from gpu_platform.explain import RenderedPlatform, explain_object
    from gpu_platform.queues.kueue import flavor_name

    module: dict = {}
    rec = pulumi_mocks.run(
        lambda: module.update(
            runpy.run_path(str(ROOT / "examples" / "consumer-stack" / "__main__.py"), run_name="__main__")
        )
    )
    spec = module["build_spec"]("ml-team")
    platform = RenderedPlatform(spec)
    jobs = {r.name: r for r in rec.of_type("kubernetes:batch/v1:Job")}
    assert set(jobs) == {"ml-train", "ml-serve"}
    for name, job in jobs.items():
        queue = next(r for r in rec.resources if r.type.endswith(":LocalQueue"))
        assert rec.depends_on(name, queue.name), "the workload waits for the platform's queues and classes"
        tier = spec.tiers_by_name[name.removeprefix("ml-")]
        manifest = {"apiVersion": "batch/v1", "kind": "Job", **job.inputs}
        [entry] = explain_object(platform, manifest, None)
        assert entry.denied is None, entry.stages
        assert (entry.namespace, entry.pool, entry.cluster_queue) == ("ml", tier.pool, "ml"), entry.stages
        assert entry.flavor == flavor_name(spec.pools_by_name[tier.pool]), entry.stages
        assert entry.schedulable is True and not entry.outside_quota, entry.stages
        assert entry.priority_class == job.inputs["spec"]["template"]["spec"]["priorityClassName"]
        assert entry.resources == {"main": {spec.resource_of(tier): "1"}}, entry.resources


@pytest.mark.parametrize("example", ["consumer-stack", "eks-and-platform"])
def test_example_project_requirements_install_this_repository(example):
    """Pulumi runs pip in the project folder: each requirement that is a path must reach this repository's root."""
    project = ROOT / "examples" / example
    lines = [line.strip() for line in (project / "requirements.txt").read_text().splitlines()]
    paths = [line.split("[")[0] for line in lines if line and not line.startswith("#")]
    assert paths and all((project / p).resolve() == ROOT.resolve() for p in paths), paths


@pytest.mark.parametrize(("gpus", "teams"), [(100, 10), (1_000, 100)])
def test_benchmark_specs_are_valid(gpus, teams):
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from specgen import make_spec

    from gpu_platform.capacity import pool_capacity
    from gpu_platform.load import parse_spec

    spec = parse_spec(make_spec(gpus, teams))
    assert len(spec.teams) == teams
    assert sum(pool_capacity(spec, p).gpus_max for p in spec.node_pools) == gpus // 8 * 8


def _bench(script: str, *args: str):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "components"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, script, *args], cwd=ROOT / "benchmarks", env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    ("script", "args", "rows"),
    [
        ("bench_plan_search.py", ("--tiers", "6", "--seeds", "1", "2", "--boxes", "1"), 2),
        ("bench_plan_search.py", ("--tiers", "6", "--seeds", "1", "--start", "optimum"), 1),
        ("bench_plan_scale.py", ("--tiers", "6", "--seeds", "1", "--repeat", "1", "--proof-only"), 1),
    ],
)
def test_the_planner_benchmarks_run_as_their_usage_says(script, args, rows):
    # The usage lines of the search and scale benchmarks, on demands small enough to prove at once: every seed's
    # row says optimal, and the search benchmark's table ends with its sum.
    done = _bench(script, *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("optimal") == rows, done.stdout
    assert ("│   all │" in done.stdout) == (script == "bench_plan_search.py"), done.stdout


@pytest.mark.parametrize(
    "args", [("--tiers", "0"), ("--boxes", "-1"), ("--start", "bogus"), ("--time-limit", "nan"), ("--seeds",)]
)
def test_the_search_benchmark_refuses_bad_arguments_in_one_line(args):
    done = _bench("bench_plan_search.py", *args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.strip().splitlines()[-1].startswith("bench_plan_search.py:")
