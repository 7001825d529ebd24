"""Compare one `gpu-platform` command between two checkouts of the library, alternating fresh processes.

    python benchmarks/bench_ab.py A_COMPONENTS B_COMPONENTS RUNS -- validate spec.yaml

A and B are `components/` folders (e.g. a worktree of main and this one); each run imports the library from its
folder (PYTHONPATH first) with this interpreter. Alternating the two keeps a shared machine's load the same for
both. Prints the median wall and CPU (user + system) seconds of each, and the load average.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

_CODE = "import sys; from gpu_platform.cli import main; sys.argv = ['gpu-platform', *sys.argv[1:]]; main()"


def run(components: str, args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one command with the library from `components`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CODE, *args],
        env={**os.environ, "PYTHONPATH": components},
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr[-2000:])
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    a, b, runs, sep, *args = sys.argv[1:]
    if sep != "--":
        raise SystemExit(__doc__)
    results: dict[str, list[tuple[float, float]]] = {a: [], b: []}
    for _ in range(int(runs)):
        for components in (a, b):
            results[components].append(run(components, args))
    for components, rows in results.items():
        print(
            f"{components}: wall median {statistics.median(r[0] for r in rows):.3f} s, CPU median "
            f"{statistics.median(r[1] for r in rows):.3f} s ({len(rows)} runs)"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
