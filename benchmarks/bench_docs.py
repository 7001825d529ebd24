"""Time `make docs`: the two generated reference pages, then `mkdocs build --strict` of the whole site.

Run from the repository root with the docs extra installed (`make docs` installs it):
`.venv/bin/python benchmarks/bench_docs.py [RUNS]`. Prints the median wall time of each step over RUNS fresh
processes (default 3), the pages built and the site size.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
STEPS = {
    "spec reference": [sys.executable, "-m", "gpu_platform.spec_reference", "docs/reference/spec.md"],
    "CLI reference": [sys.executable, "-m", "gpu_platform.cli_reference", "docs/reference/cli.md"],
    "mkdocs build --strict": [str(BIN / "mkdocs"), "build", "--strict", "--quiet"],
}


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    return time.perf_counter() - start


def main(runs: int = 3) -> None:
    times = {name: statistics.median(_time(cmd) for _ in range(runs)) for name, cmd in STEPS.items()}
    site = ROOT / "build" / "site"
    pages = len([p for p in site.rglob("index.html")])
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 2**20
    print(f"| step | median s ({runs} runs) |\n|---|---:|")
    for name, t in times.items():
        print(f"| {name} | {t:.2f} |")
    print(f"| total (`make docs` after install) | {sum(times.values()):.2f} |")
    print(f"\n{pages} pages, site {size:.1f} MiB")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
