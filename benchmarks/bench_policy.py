"""Policy pack throughput over gRPC, as the engine drives it: Analyze per resource, then AnalyzeStack once.

Run: .venv/bin/python benchmarks/bench_policy.py [N ...]   (default 1000 10000). Target: >= 2,000 resources/s.
"sequential" sends one Analyze at a time; "pipelined" keeps 16 requests in flight from one client thread, as
the engine does when it runs independent steps concurrently (`pulumi preview --parallel`). A last row analyzes
the synthesized resources of examples/aws-1000-a100.yaml end to end (the 1,000-GPU claim).
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from gpu_platform.load import load_spec
from gpu_platform.policy import config_from_spec, pack_config
from gpu_platform.policy.analyzer import PackProcess
from gpu_platform.policy.resources import StackResource, from_artifacts
from gpu_platform.synth import render_all

ROOT = Path(__file__).resolve().parents[1]
IN_FLIGHT = 16


def _pod(i: int) -> StackResource:
    tier = ("train", "inference", "dev", "ci")[i % 4]
    res = "nvidia.com/mig-3g.40gb" if tier == "inference" else "nvidia.com/gpu"
    props = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"w{i}", "namespace": "research"},
        "spec": {
            "template": {
                "metadata": {"labels": {"gpu.example.com/gpu-tier": tier}},
                "spec": {
                    "priorityClassName": f"gpu-{tier}",
                    "containers": [{"name": "c", "image": "x", "resources": {"limits": {res: 1}}}],
                },
            }
        },
    }
    return StackResource("kubernetes:apps/v1:Deployment", f"urn:w{i}", f"w{i}", props)


def workload(n: int, base: list[StackResource]) -> list[StackResource]:
    """`n` resources: the dev stack's own, repeated node pools, and GPU Deployments filling the rest."""
    out = list(base)
    i = 0
    while len(out) < n:
        out.append(_pod(i))
        i += 1
    return out[:n]


def pipelined(pack: PackProcess, resources: list[StackResource]) -> list:
    """Analyze every resource with IN_FLIGHT requests outstanding (futures, one client thread)."""
    pending, out = [], []
    for r in resources:
        pending.append(pack.analyze_future(r))
        if len(pending) >= IN_FLIGHT:
            out.append(pending.pop(0).result())
    return out + [f.result() for f in pending]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(pack: PackProcess, resources: list[StackResource], mode: str) -> tuple[float, float, int, float]:
    cpu0 = _cpu_seconds(pack.proc.pid)
    t0 = time.perf_counter()
    responses = pipelined(pack, resources) if mode == "pipelined" else [pack.analyze(r) for r in resources]
    t1 = time.perf_counter()
    violations = sum(len(r.diagnostics) for r in responses) + len(pack.analyze_stack(resources).diagnostics)
    return t1 - t0, time.perf_counter() - t1, violations, _cpu_seconds(pack.proc.pid) - cpu0


_NOOP_PACK = """
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy

def _none(args, report_violation):
    pass

PolicyPack(name="noop", enforcement_level=EnforcementLevel.MANDATORY, policies=(
    [ResourceValidationPolicy(name=f"r{i}", description="no-op", validate=_none) for i in range({r})]
    + [StackValidationPolicy(name=f"s{i}", description="no-op", validate=_none) for i in range({s})]))
"""


def runtime_floor(resources: list[StackResource], shape: tuple[int, int]) -> tuple:
    """The same run against a pack of no-op policies (`shape` = resource, stack policies): pulumi-policy's floor."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "PulumiPolicy.yaml").write_text("runtime: python\ndescription: no-op\n")
        (Path(tmp) / "__main__.py").write_text(_NOOP_PACK.replace("{r}", str(shape[0])).replace("{s}", str(shape[1])))
        with PackProcess(tmp, timeout=120) as pack:
            pack.analyze(resources[0])
            a, s, v, cpu = _timed(pack, resources, "pipelined")
    n = len(resources)
    return (f"{n} (no-op pack {shape[0]}+{shape[1]})", "pipelined", a, s, n / (a + s), v, cpu / n * 1000)


def main(sizes: list[int]) -> None:
    spec = load_spec(ROOT / "Pulumi.dev.yaml")
    base = from_artifacts(render_all(spec))
    rows = []
    with PackProcess(ROOT / "policies", timeout=120) as pack:
        pack.configure(pack_config(config_from_spec(spec)))
        pack.analyze(base[0])  # warm up
        for n in sizes:
            resources = workload(n, base)
            for mode in ("sequential", "pipelined"):
                a, s, v, cpu = _timed(pack, resources, mode)
                rows.append((str(n), mode, a, s, n / (a + s), v, cpu / n * 1000))
    big = load_spec(ROOT / "examples" / "aws-1000-a100.yaml")
    stack = from_artifacts(render_all(big))
    with PackProcess(ROOT / "policies", timeout=120) as pack:
        pack.configure(pack_config(config_from_spec(big)))
        a, s, v, cpu = _timed(pack, stack, "pipelined")
        rows.append(
            (f"{len(stack)} (1,000-GPU example)", "pipelined", a, s, len(stack) / (a + s), v, cpu / len(stack) * 1000)
        )
    for shape in ((2, 3), (1, 1)):  # our pack's shape (2 resource + 3 stack policies), and the smallest
        rows.append(runtime_floor(workload(max(sizes), base), shape))
    print(f"policy pack over gRPC ({platform.machine()}, Python {platform.python_version()})")
    print(
        f"{'resources':>26} {'Analyze':>11} {'Analyze s':>10} {'AnalyzeStack s':>15} {'resources/s':>12} "
        f"{'violations':>11} {'pack CPU ms/res':>16}"
    )
    for n, mode, a, s, rate, v, cpu in rows:
        print(f"{n:>26} {mode:>11} {a:>10.2f} {s:>15.2f} {rate:>12,.0f} {v:>11} {cpu:>16.3f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000])
