"""Time `validate` and `synth` on generated specs of 100, 1,000 and 10,000 GPUs (10, 100, 1,000 teams).

Each measurement runs in a fresh process (so imports and peak RSS are its own); the table shows the median of
several runs of wall time inside the process (imports + parse + validate, then render + write), the peak RSS,
and the wall time of the whole `gpu-platform validate` / `gpu-platform synth` commands (interpreter start included).
"""

from __future__ import annotations

import json
import os
import platform
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
from specgen import SIZES, make_spec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RUNS = 5

_CHILD = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from specgen import make_spec
spec_data = make_spec(int(sys.argv[2]), int(sys.argv[3]))
t0 = time.perf_counter()
from gpu_platform.load import parse_spec
from gpu_platform.validation import check_spec
spec = parse_spec(spec_data)
check_spec(spec)
t1 = time.perf_counter()
from gpu_platform.synth import render_all, write_artifacts
arts = render_all(spec)
with tempfile.TemporaryDirectory() as d:
    write_artifacts(arts, Path(d))
t2 = time.perf_counter()
print(json.dumps({"validate": t1 - t0, "synth": t2 - t1, "docs": sum(len(a.documents) for a in arts),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(gpus: int, teams: int) -> dict:
    """Median of RUNS fresh-process runs, in-process phases and the whole `gpu-platform` commands."""
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _CHILD, str(HERE), str(gpus), str(teams)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for _ in range(RUNS)
    ]
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    cli = Path(sys.executable).with_name("gpu-platform")
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.yaml"
        spec.write_text(yaml.safe_dump(make_spec(gpus, teams), sort_keys=False))
        for cmd in ("validate", "synth"):
            args = [str(cli), cmd, str(spec)] + (["--out", str(Path(tmp) / "out")] if cmd == "synth" else [])
            times = []
            for _ in range(RUNS):
                t0 = time.perf_counter()
                subprocess.run(args, check=True, capture_output=True)
                times.append(time.perf_counter() - t0)
            out[f"cli_{cmd}"] = statistics.median(times)
    return out


def main() -> None:
    """Print the table (and a markdown copy for RESULTS.md)."""
    table = Table(title=f"validate + synth, median of {RUNS} runs")
    cols = (
        "GPUs",
        "teams",
        "validate s",
        "synth s",
        "total s",
        "documents",
        "peak RSS MB",
        "`gpu-platform validate` s",
        "`gpu-platform synth` s",
    )
    for col in cols:
        table.add_column(col, justify="right")
    md = ["| " + " | ".join(cols) + " |", "|" + "---:|" * len(cols)]
    for gpus, teams in SIZES:
        r = measure(gpus, teams)
        row = [
            f"{gpus:,}",
            f"{teams:,}",
            f"{r['validate']:.3f}",
            f"{r['synth']:.3f}",
            f"{r['validate'] + r['synth']:.3f}",
            f"{r['docs']:.0f}",
            f"{r['rss_mb']:.0f}",
            f"{r['cli_validate']:.3f}",
            f"{r['cli_synth']:.3f}",
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
    print(f"\nmachine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {date.today()}\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
