"""Time `gpu-platform explain` as a command (fresh process each run) and its phases in one process.

Wall time depends on what else the machine runs; "command CPU s" (user + system time of the command's process)
does not, and is what the command costs on an idle machine.

Usage: .venv/bin/python benchmarks/bench_explain.py [--repeat N]
Manifests: the README's inference Job on the dev stack, and on examples/aws-1000-a100.yaml an inference Job,
a pre-training PyTorchJob and a five-document file (Job, JobSet, RayJob, Deployment, Pod).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
BIG = ROOT / "examples" / "aws-1000-a100.yaml"
TIER = "gpu.acme.io/gpu-tier"

_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from gpu_platform.explain import RenderedPlatform, explain_object, load_manifests
from gpu_platform.load import load_spec
t1 = time.perf_counter()
spec = load_spec(sys.argv[1]); platform = RenderedPlatform(spec); platform.chain; platform.nodes
t2 = time.perf_counter()
objects = load_manifests(sys.argv[2])
entries = [e for o in objects for e in explain_object(platform, o, sys.argv[3])]
t3 = time.perf_counter()
entries = [e for o in objects for e in explain_object(platform, o, sys.argv[3])]
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "render": t2 - t1, "explain": t3 - t2, "again": t4 - t3,
                  "entries": len(entries)}))
"""


def _template(tier: str, gpus: int = 1) -> dict:
    return {
        "metadata": {"labels": {TIER: tier}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                    "resources": {"limits": {"nvidia.com/gpu": gpus}},
                }
            ],
        },
    }


def manifests() -> list[tuple[str, str, list[dict], str]]:
    """(label, spec path, documents, namespace) of each measured case."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "serve-eval"},
        "spec": {"parallelism": 4, "template": _template("inference")},
    }
    pytorch = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pretrain"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": _template("pretrain", 8)},
                "Worker": {"replicas": 15, "template": _template("pretrain", 8)},
            }
        },
    }
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {
            "replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {"template": _template("inference")}}}]
        },
    }
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "rj"},
        "spec": {
            "rayClusterSpec": {
                "headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray"}]}}},
                "workerGroupSpecs": [{"groupName": "gpu", "replicas": 2, "template": _template("embeddings")}],
            }
        },
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "template": _template("inference-small")},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {TIER: "inference"}},
        "spec": _template("inference")["spec"],
    }
    readme = yaml.safe_load((ROOT / "examples" / "workloads" / "inference-job.yaml").read_text())
    return [
        ("README inference Job, dev stack", str(ROOT / "Pulumi.dev.yaml"), [readme], "prod-inference"),
        ("inference Job, 1,000-GPU example", str(BIG), [job], "search-serving"),
        ("pre-training PyTorchJob, 1,000-GPU example", str(BIG), [pytorch], "fm-pretrain"),
        ("5 documents, 1,000-GPU example", str(BIG), [job, jobset, ray, deployment, pod], "search-serving"),
    ]


def measure(spec: str, docs: list[dict], namespace: str, repeat: int, tmp: Path) -> dict:
    """Median and max wall time of the command, and the median in-process phases."""
    path = tmp / "workload.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    cli = Path(sys.executable).with_name("gpu-platform")
    args = [str(cli), "explain", str(path), "--spec", spec, "--namespace", namespace, "--format", "json"]
    subprocess.run(args, capture_output=True)  # warm the file cache (and lark's grammar cache) once
    times, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(args, capture_output=True)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    phases = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _CHILD, spec, str(path), namespace], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(repeat)
    ]
    out = {k: statistics.median(p[k] for p in phases) for k in phases[0]}
    return {"median": statistics.median(times), "max": max(times), "cpu": statistics.median(cpu), **out}


def main() -> None:
    """Print the table (and a markdown copy for RESULTS.md)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cols = (
        "manifest",
        "templates",
        "command s (median)",
        "command s (max)",
        "command CPU s",
        "imports s",
        "spec + render s",
        "explain s (first)",
        "explain s (again)",
    )
    table = Table(title=f"gpu-platform explain, {args.repeat} runs each", title_justify="left")
    for i, col in enumerate(cols):
        table.add_column(col, justify="left" if i == 0 else "right")
    md = ["| " + " | ".join(cols) + " |", "|---|" + "---:|" * (len(cols) - 1)]
    with tempfile.TemporaryDirectory() as tmp:
        for label, spec, docs, namespace in manifests():
            r = measure(spec, docs, namespace, args.repeat, Path(tmp))
            row = [
                label,
                str(r["entries"]),
                f"{r['median']:.2f}",
                f"{r['max']:.2f}",
                f"{r['cpu']:.2f}",
                f"{r['import']:.2f}",
                f"{r['render']:.3f}",
                f"{r['explain']:.2f}",
                f"{r['again']:.2f}",
            ]
            table.add_row(*row)
            md.append("| " + " | ".join(row) + " |")
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    print(
        f"\nmachine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {date.today()}, "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    print("\n".join(md))


if __name__ == "__main__":
    main()
