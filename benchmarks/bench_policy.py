"""Policy pack throughput over gRPC, as the engine drives it: Analyze per resource, then AnalyzeStack once.

Run: .venv/bin/python benchmarks/bench_policy.py [N ...]   (default 1000 10000). Target: >= 2,000 resources/s.
"sequential" sends one Analyze at a time; "parallel" keeps 8 in flight, as the engine does when it runs
independent steps concurrently (`pulumi preview --parallel`, default unbounded).
"""

from __future__ import annotations

import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gpu_platform.load import load_spec
from gpu_platform.policy import config_from_spec, pack_config
from gpu_platform.policy.analyzer import PackProcess
from gpu_platform.policy.resources import StackResource, from_artifacts
from gpu_platform.synth import render_all

ROOT = Path(__file__).resolve().parents[1]
PARALLEL = 8


def _pod(i: int) -> StackResource:
    tier = ("train", "inference", "dev", "ci")[i % 4]
    res = "nvidia.com/mig-3g.40gb" if tier == "inference" else "nvidia.com/gpu"
    props = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"w{i}", "namespace": "research"},
             "spec": {"template": {"metadata": {"labels": {"gpu.example.com/gpu-tier": tier}},
                                   "spec": {"priorityClassName": f"gpu-{tier}", "containers": [
                                       {"name": "c", "image": "x", "resources": {"limits": {res: 1}}}]}}}}
    return StackResource("kubernetes:apps/v1:Deployment", f"urn:w{i}", f"w{i}", props)


def workload(n: int, base: list[StackResource]) -> list[StackResource]:
    """`n` resources: the dev stack's own, repeated node pools, and GPU Deployments filling the rest."""
    out = list(base)
    i = 0
    while len(out) < n:
        out.append(_pod(i))
        i += 1
    return out[:n]


def main(sizes: list[int]) -> None:
    spec = load_spec(ROOT / "Pulumi.dev.yaml")
    base = from_artifacts(render_all(spec))
    rows = []
    with PackProcess(ROOT / "policies", timeout=120) as pack:
        pack.configure(pack_config(config_from_spec(spec)))
        pack.analyze(base[0])  # warm up
        with ThreadPoolExecutor(PARALLEL) as pool:
            for n in sizes:
                resources = workload(n, base)
                for mode, run in (("sequential", map), ("parallel", pool.map)):
                    t0 = time.perf_counter()
                    violations = sum(len(r.diagnostics) for r in run(pack.analyze, resources))
                    t1 = time.perf_counter()
                    violations += len(pack.analyze_stack(resources).diagnostics)
                    t2 = time.perf_counter()
                    rows.append((n, mode, t1 - t0, t2 - t1, n / (t2 - t0), violations))
    print(f"policy pack over gRPC ({platform.machine()}, Python {platform.python_version()})")
    print(f"{'resources':>10} {'Analyze':>11} {'Analyze s':>10} {'AnalyzeStack s':>15} {'resources/s':>12} {'violations':>11}")
    for n, mode, a, s, rate, v in rows:
        print(f"{n:>10} {mode:>11} {a:>10.2f} {s:>15.2f} {rate:>12,.0f} {v:>11}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000])
