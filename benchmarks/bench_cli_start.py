"""Time the start of the `gpu-platform` command: `--help`, `validate Pulumi.dev.yaml` and
`plan examples/demand-small.yaml` (a plan of 0.02 s: the rest is starting), each in fresh processes.

Each row is the median (and min-max) of several runs of the whole command, interpreter start included: wall time
and the CPU time (user + system) of the child, which the load of a shared machine disturbs less than wall time.
Usage: `python benchmarks/bench_cli_start.py [RUNS]` from the repository root, with the package installed.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = (["--help"], ["validate", "Pulumi.dev.yaml"], ["plan", "examples/demand-small.yaml"])


def _one(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, capture_output=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    exe = shutil.which("gpu-platform", path=str(Path(sys.executable).parent)) or "gpu-platform"
    print(f"{runs} runs each, load average {os.getloadavg()[0]:.1f}")
    print("| command | wall s median (min-max) | CPU s median (min-max) |")
    print("|---|---:|---:|")
    for args in COMMANDS:
        _one([exe, *args])  # warm the file cache and the bytecode
        walls, cpus = zip(*(_one([exe, *args]) for _ in range(runs)), strict=True)
        print(
            f"| `gpu-platform {' '.join(args)}` | {statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f})"
            f" | {statistics.median(cpus):.2f} ({min(cpus):.2f}-{max(cpus):.2f}) |"
        )


if __name__ == "__main__":
    main()
