"""Hostile and extreme inputs through every command, each in a fresh process: wall time, peak RSS, exit code.

Goal: any spec command on any input under 16 MB finishes in under 10 s and 1 GB, or exits 1 with a limit
message. Inputs are generated into a temporary directory: alias bombs, deep nesting, files just under 16 MB,
the largest specs the limits admit (most teams, most values), a 16 MB export for `audit`, the largest demand.
"""

from __future__ import annotations

import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from specgen import make_spec  # noqa: E402

MB = 1024 * 1024
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9)
)


def _spec_with(**extra) -> dict:
    spec = make_spec(10_000, 1_000)
    spec.update(extra)
    return spec


def _many_teams(teams: int = 2_000, namespaces: int = 2) -> dict:
    """The most teams a spec may hold (2,000) and 5,000 namespaces in all (2 or 3 each), quotas on two tiers."""
    spec = make_spec(10_000, 1_000)
    tiers = [t["name"] for t in spec["tiers"]]
    spec["teams"] = [
        {
            "name": f"team-{k:05d}",
            "namespaces": [f"ns-{k:05d}-{j}" for j in range(namespaces + (k < 1000))],
            "quotas": {tiers[k % len(tiers)]: 1, tiers[(k * 7) % len(tiers)]: 1},
        }
        for k in range(teams)
    ]
    return spec


def _many_tiers() -> dict:
    """The most pools (500) and tiers (1,000) a spec may hold: exclusive pools with two tiers each."""
    spec = make_spec(100, 10)
    spec["nodePools"] = [
        {"name": f"pool-{i:04d}", "instanceType": "p4de.24xlarge", "sharing": {"mode": "exclusive"}, "maxSize": 2}
        for i in range(500)
    ]
    spec["tiers"] = [
        {"name": f"tier-{i:04d}-{j}", "pool": f"pool-{i:04d}", "priority": 1000 + i * 2 + j}
        for i in range(500)
        for j in range(2)
    ]
    spec["teams"] = [{"name": "team-0", "namespaces": ["ns-0"], "quotas": {"tier-0000-0": 1}}]
    return spec


def _most_values() -> dict:
    """Just under the 100,000-value limit, in node labels (rendered into every pool's outputs)."""
    spec = make_spec(100, 10)
    spec["nodePools"][0]["labels"] = {f"l{i}.example.com/k": "v" for i in range(49_000)}
    return spec


def _export(n_groups: int) -> dict:
    res = []
    for i in range(n_groups):
        res.append(
            {
                "type": "aws:ec2/launchTemplate:LaunchTemplate",
                "urn": f"urn:pulumi:s::p::lt::lt{i}",
                "inputs": {
                    "name": f"lt{i}",
                    "instanceType": "p4d.24xlarge",
                    "userData": "x" * 100,
                    "metadataOptions": {"httpTokens": "required"},
                },
            }
        )
        res.append(
            {
                "type": "aws:eks/nodeGroup:NodeGroup",
                "urn": f"urn:pulumi:s::p::ng::ng{i}",
                "inputs": {
                    "nodeGroupName": f"ng{i}",
                    "launchTemplate": {"name": f"lt{i}"},
                    "labels": {"gpu.example.com/gpu-pool": f"p{i}"},
                    "scalingConfig": {"maxSize": 4},
                },
            }
        )
        res.append(
            {
                "type": "kubernetes:core/v1:Pod",
                "urn": f"urn:pulumi:s::p::pod::pod{i}",
                "inputs": {
                    "metadata": {"name": f"p{i}"},
                    "spec": {"containers": [{"name": "m", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
                },
            }
        )
    return {"version": 3, "deployment": {"manifest": {}, "resources": res}}


def _pad_to(text: str, size: int) -> str:
    return text + "#" * (size - len(text.encode()) - 1) + "\n"


def inputs(tmp: Path) -> list[tuple[str, str, list[str]]]:
    """(label, file, command args) for every measured case."""

    def w(name: str, text: str) -> str:
        (tmp / name).write_text(text)
        return str(tmp / name)

    big = yaml.safe_dump(make_spec(10_000, 1_000), sort_keys=False)
    out = str(tmp / "out")
    cases = {
        "alias bomb (1 KB)": w("bomb.yaml", BOMB),
        "flow nesting 100,000 deep (0.2 MB)": w("deep.yaml", "[" * 100_000 + "]" * 100_000),
        "10,000-GPU spec padded to 15.9 MB": w("padded.yaml", _pad_to(big, int(15.9 * MB))),
        "15.9 MB string value": w("string.yaml", 'clusterName: "' + "a" * int(15.9 * MB) + '"\n'),
        "10,000-GPU spec, 1,000 teams": w("fleet.yaml", big),
        "2,000 teams, 5,000 namespaces": w("teams.yaml", yaml.safe_dump(_many_teams(), sort_keys=False)),
        "2,001 teams (over the limit)": w("teams-over.yaml", yaml.safe_dump(_many_teams(2_001, 1), sort_keys=False)),
        "500 pools, 1,000 tiers": w("tiers.yaml", yaml.safe_dump(_many_tiers(), sort_keys=False)),
        "99,000 values (node labels)": w("values.yaml", yaml.safe_dump(_most_values(), sort_keys=False)),
    }
    rows = []
    for label, path in cases.items():
        for cmd in (["validate", path], ["synth", path, "--out", out, "--force"], ["cost", path]):
            rows.append((label, cmd[0], cmd))
    demand = w(
        "demand.yaml",
        yaml.safe_dump(
            {
                "cloud": "aws",
                "instanceTypes": ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge"],
                "tiers": [
                    {"name": "train", "gpus": 100_000},
                    {"name": "inf", "mig": {"profile": "3g.40gb", "instances": 700_000}},
                    {"name": "nb", "seats": {"count": 4_800_000, "perGpu": 4}},
                ],
            }
        ),
    )
    rows.append(("largest demand (100,000 GPUs + 700,000 MIG + 4.8 M seats)", "plan", ["plan", demand]))
    rows.append(("demand alias bomb", "plan", ["plan", w("dbomb.yaml", BOMB)]))
    export = tmp / "export.json"
    n = 1
    while True:
        text = json.dumps(_export(n))
        if len(text) > int(15.5 * MB):
            break
        n = int(n * 1.5) + 1
    export.write_text(json.dumps(_export(int(n / 1.5))))
    rows.append(
        (
            f"export of {export.stat().st_size / MB:.1f} MB, {3 * int(n / 1.5):,} resources (node groups, "
            "templates, pods)",
            "audit",
            ["audit", str(export)],
        )
    )
    at_limit = w("limit.json", json.dumps(_export(6_666)))
    rows.append(
        (
            f"export of {Path(at_limit).stat().st_size / MB:.1f} MB, 19,998 resources (the limit is 20,000)",
            "audit",
            ["audit", at_limit],
        )
    )
    heavy = w("heavy.json", json.dumps(_heavy_export(8_000)))
    rows.append(
        (
            f"export of {Path(heavy).stat().st_size / MB:.1f} MB: 8,000 GPU pods of 7 containers, every check failing",
            "audit",
            ["audit", heavy],
        )
    )
    rows.append(
        (
            "export of 16 MB of empty objects (5.6 M)",
            "audit",
            [
                "audit",
                w(
                    "objects.json",
                    '{"deployment": {"resources": [' + ",".join(["{}"] * (int(16 * MB) // 3 - 20)) + "]}}",
                ),
            ],
        )
    )
    rows.append(("export, JSON 100,000 deep", "audit", ["audit", w("deep.json", "[" * 100_000 + "]" * 100_000)]))
    rows.append(
        (
            "spec with a 5,000-digit integer",
            "validate",
            ["validate", w("digits.yaml", "cloud: aws\nmaxSize: " + "9" * 5_000 + "\n")],
        )
    )
    dev = str(HERE.parent / "Pulumi.dev.yaml")
    rows.append(("manifest alias bomb (1 KB)", "explain", ["explain", w("mbomb.yaml", BOMB), "--spec", dev]))
    rows.append(
        (
            "pod of 14,000 containers (1.7 MB)",
            "explain",
            ["explain", w("pod14k.json", json.dumps(_pods(1, 14_000)[0])), "--spec", dev],
        )
    )
    fleet = str(tmp / "fleet.yaml")
    worst = w("pods25.yaml", "\n---\n".join(json.dumps(d) for d in _pods(25, 4)))
    rows.append(
        (
            "25 pods of 4 containers (the limits: 25 pod specs, 100 containers), 10,000-GPU spec",
            "explain",
            ["explain", worst, "--spec", fleet, "--namespace", "ns-0000", "--format", "json"],
        )
    )
    rows.append(
        ("workload /dev/zero (reports 0 bytes, never ends)", "explain", ["explain", "/dev/zero", "--spec", dev])
    )
    rows.append(
        (
            "pod of 30,000 hostPath volumes (1.6 MB)",
            "explain",
            ["explain", w("vols30k.json", json.dumps(_volume_pod(30_000))), "--spec", dev],
        )
    )
    rows.append(
        (
            "pod of 999 hostPath volumes (the limit: 1,000 entries)",
            "explain",
            ["explain", w("vols999.json", json.dumps(_volume_pod(999))), "--spec", dev, "--namespace", "research"],
        )
    )
    rows.append(
        (
            "quantity of 2,000,000 digits (quoted, near the 2 MiB workload limit)",
            "explain",
            [
                "explain",
                w("digits.yaml", _quantity_job(["'" + "9" * 2_000_000 + "'"])),
                "--spec",
                dev,
                "--namespace",
                "research",
            ],
        )
    )
    rows.append(
        (
            "99 containers of quantities 1e999999999, 8Ei and 1.0e-999999999",
            "explain",
            [
                "explain",
                w("exponents.yaml", _quantity_job(["'1e999999999'", "8Ei", "'1.0e-999999999'"] * 33)),
                "--spec",
                dev,
                "--namespace",
                "research",
            ],
        )
    )
    rows += _planner_rows(w)
    wide = w("wide.json", json.dumps(_unknown_kind_export(7_000)))
    rows.append(
        (
            f"export of {Path(wide).stat().st_size / MB:.1f} MB: 7,000 resources of an unknown kind, 2.5 M values "
            "scanned for pod specs",
            "audit",
            ["audit", wide],
        )
    )
    return rows


def _planner_rows(w) -> list[tuple[str, str, list[str]]]:
    """Demands at the planner's tier limit (1,000) and a demand file of 90,000 bad entries, with short time
    limits: the plan returns near its limit, and the errors printed stay bounded."""
    rng = random.Random(2)
    seats = [
        {"name": f"s{i}", "seats": {"count": rng.randint(1, 500), "perGpu": rng.randint(2, 48)}} for i in range(1_000)
    ]
    profiles = ["1g.10gb", "2g.20gb", "3g.40gb", "1g.20gb", "4g.40gb"]
    mig = [{"name": f"m{i}", "mig": {"profile": profiles[i % 5], "instances": 1 + i % 37}} for i in range(1_000)]
    ones = [{"name": f"g{i}", "gpus": 1} for i in range(1_000)]
    rows = []
    for label, tiers, limit in (
        ("planner trial: 1,000 seat tiers, perGpu 2-48, --time-limit 0.1", seats, "0.1"),
        ("planner trial: 1,000 MIG tiers of five profiles, --time-limit 5", mig, "5"),
        ("planner trial: 1,000 one-GPU tiers, --time-limit 10", ones, "10"),
    ):
        path = w(f"plan{len(rows)}.json", json.dumps({"cloud": "aws", "tiers": tiers}))
        rows.append((label, "plan", ["plan", path, "--time-limit", limit, "--format", "json"]))
    broken = [  # each tier refused, and each name twice: the whole-file checks run on a repaired copy
        [
            {"name": f"t{i // 2}", "gpus": 1, "bogus": i},
            {"name": f"t{i // 2}", "mig": {"profile": "9g.99gb", "instances": 1}, "seats": {"count": 1, "perGpu": 2}},
            {"name": f"t{i // 2}", "gpus": 1, "gpuModel": [i, "Z100"], "instanceTypes": "p4d.24xlarge"},
            "no tier",
        ][i % 4]
        for i in range(1_000)
    ]
    rows.append(
        (
            "planner trial: 1,000 tiers, each refused, names twice",
            "plan",
            ["plan", w("broken.json", json.dumps({"cloud": "aws", "discountPercent": 99.99, "tiers": broken}))],
        )
    )
    repeated = {
        "cloud": "aws",
        "discountPercent": 10,
        "instanceTypes": ["p5.48xlarge"] * 90_000,
        "tiers": [{"name": f"t{i}", "gpus": 1} for i in range(1_000)],
    }
    rows.append(
        (
            "planner trial: one type named 90,000 times, 1,000 tiers, --time-limit 1",
            "plan",
            ["plan", w("repeated.json", json.dumps(repeated)), "--time-limit", "1"],
        )
    )
    numbers = {  # every item refused, and every tier's floor read again
        "cloud": "aws",
        "instanceTypes": [1] * 90_000,
        "tiers": [{"name": f"t{i}", "gpus": 1, "instanceTypes": ["g4dn.xlarge"]} for i in range(1_000)],
    }
    rows.append(
        (
            "planner trial: 90,000 numbers as instance types, 1,000 tiers",
            "plan",
            ["plan", w("numbers.json", json.dumps(numbers))],
        )
    )
    bad = {"cloud": "aws", "instanceTypes": [f"x{i}" for i in range(90_000)], "tiers": [{"name": "a", "gpus": 1}]}
    rows.append(
        ("planner trial: 90,000 unknown instance types (0.8 MB)", "plan", ["plan", w("bad.json", json.dumps(bad))])
    )
    return rows


def _quantity_job(memory: list[str]) -> str:
    """A tiered Job whose containers ask for these memory quantities (YAML text as given), one GPU on the first."""
    containers = "".join(
        f"      - name: c{i}\n        image: x\n        resources:\n          limits: {{memory: {m}"
        + (", nvidia.com/gpu: 1" if i == 0 else "")
        + "}\n"
        for i, m in enumerate(memory)
    )
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: q}\nspec:\n  template:\n    metadata:\n"
        "      labels: {gpu.example.com/gpu-tier: train}\n    spec:\n      restartPolicy: Never\n"
        "      containers:\n" + containers
    )


def _volume_pod(volumes: int) -> dict:
    """A pod that tolerates every taint with `volumes` hostPath volumes (the deny normalises each path)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "m", "image": "x"}],
            "volumes": [{"name": f"v{i}", "hostPath": {"path": f"/data/d{i}"}} for i in range(volumes)],
        },
    }


def _unknown_kind_export(n: int) -> dict:
    """Resources of a kind the pack does not know: every value is scanned for embedded pod specs (none here)."""

    def tree() -> dict:
        return {"a": [{"x": {"y": [1, 2, {"z": "w"}]}} for _ in range(60)]}

    res = [
        {
            "type": "kubernetes:example.com/v1:Thing",
            "urn": f"urn:pulumi:s::p::thing::t{i}",
            "inputs": {"metadata": {"name": f"t{i}"}, "spec": tree(), "extra": tree()},
        }
        for i in range(n)
    ]
    return {"version": 3, "deployment": {"manifest": {}, "resources": res}}


def _pods(pods: int, containers: int) -> list[dict]:
    """Tiered GPU pods that tolerate every taint, each container with an env entry and a GPU limit."""
    labels = {"gpu.bench.io/gpu-tier": "tier-0000-0"}  # specgen's label domain and first tier (team-0000's)
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "labels": labels},
            "spec": {
                "tolerations": [{"operator": "Exists"}],
                "containers": [
                    {
                        "name": f"c{j}",
                        "image": "x",
                        "env": [{"name": "A", "value": "b"}],
                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                    }
                    for j in range(containers)
                ],
            },
        }
        for i in range(pods)
    ]


def _heavy_export(pods: int) -> dict:
    """GPU pods that fail every workload check in every container: wrong tier, requests != limits, privileged,
    NVIDIA_VISIBLE_DEVICES, device mounts, nodeName (the most work per byte found for `audit`)."""
    res = []
    for i in range(pods):
        containers = [
            {
                "name": f"c{j}",
                "image": "x",
                "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
                "securityContext": {"privileged": True},
                "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "1"}, "requests": {"nvidia.com/gpu": 2}},
            }
            for j in range(7)
        ]
        res.append(
            {
                "type": "kubernetes:core/v1:Pod",
                "urn": f"urn:pulumi:s::p::pod::pod{i}",
                "inputs": {
                    "metadata": {"name": f"p{i}", "labels": {"gpu.example.com/gpu-tier": "x"}},
                    "spec": {
                        "nodeName": "n",
                        "tolerations": [{"operator": "Exists"}],
                        "containers": containers,
                        "volumes": [{"name": f"v{k}", "hostPath": {"path": "/dev/nvidia0"}} for k in range(4)],
                    },
                },
            }
        )
    return {"version": 3, "deployment": {"manifest": {}, "resources": res}}


def run(cmd: list[str]) -> tuple[float, float, float, int, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS MB, exit code and last stderr line of one command in a
    fresh process."""
    cli = Path(sys.executable).with_name("gpu-platform")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([str(cli), *cmd], capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    last = (proc.stderr.strip().splitlines() or [""])[-1][:90]
    return wall, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024, proc.returncode, last


def main() -> None:
    table = Table(
        title=f"hostile inputs: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {date.today()}, load average "
        f"{os.getloadavg()[0]:.1f}",
        title_justify="left",
    )
    for col in ("input", "command", "s", "CPU s", "peak RSS MB", "exit", "message"):
        table.add_column(col, justify="right" if col in ("s", "CPU s", "peak RSS MB", "exit") else "left")
    only = sys.argv[1] if len(sys.argv) > 1 else ""  # run only the rows whose label contains this text
    with tempfile.TemporaryDirectory() as d:
        for label, command, cmd in inputs(Path(d)):
            if only not in label:
                continue
            # RUSAGE_CHILDREN's max RSS is a high-water mark over all children: run each in its own wrapper.
            wrapper = subprocess.run(
                [sys.executable, "-c", _WRAP, json.dumps(cmd)], capture_output=True, text=True, timeout=900
            )
            if wrapper.returncode:
                raise SystemExit(wrapper.stderr)
            wall, cpu, rss, code, last = json.loads(wrapper.stdout)
            table.add_row(label, command, f"{wall:.2f}", f"{cpu:.2f}", f"{rss:.0f}", str(code), last)
            print(
                f"{label} | {command} | {wall:.2f} s | {cpu:.2f} CPU s | {rss:.0f} MB | exit {code} | {last}",
                flush=True,
            )
    Console(width=200).print(table)


_WRAP = f"""
import json, sys
sys.path.insert(0, {str(HERE)!r})
from bench_hostile import run
print(json.dumps(run(json.loads(sys.argv[1]))))
"""

if __name__ == "__main__":
    main()
