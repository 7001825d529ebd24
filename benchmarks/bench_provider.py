"""The component provider as the engine runs it: start-up, GetSchema and Construct over gRPC, against the Python
component under mocks on the same spec. Uses the test suite's stub engine and resource monitor (tests/helpers).

    python benchmarks/bench_provider.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from gpu_platform.load import read_spec_data  # noqa: E402
from helpers.provider_rpc import STACK_URN, ProviderProcess, python_side  # noqa: E402

SPECS = ["Pulumi.dev.yaml", "examples/gke-a2.yaml", "examples/aws-1000-a100.yaml"]
TOKEN = "gpu-platform:index:GpuPlatform"


def _once(data: dict) -> dict[str, float]:
    t0 = time.perf_counter()
    with ProviderProcess() as p:
        t1 = time.perf_counter()
        p.schema()
        t2 = time.perf_counter()
        p.construct(TOKEN, "gpu-platform", data, parent=STACK_URN)
        t3 = time.perf_counter()
        count = len(p.monitor.registered)
    t4 = time.perf_counter()
    python_side(data, "gpu-platform")
    t5 = time.perf_counter()
    return {"start": t1 - t0, "schema": t2 - t1, "construct": t3 - t2, "mocks": t5 - t4, "registrations": count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{date.today()}, median of {runs}"
    )
    print("| spec | registrations | provider start s | GetSchema ms | Construct s | Python under mocks s |")
    print("|---|---:|---:|---:|---:|---:|")
    for spec in SPECS:
        data = read_spec_data(ROOT / spec)
        rows = [_once(data) for _ in range(runs)]
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(
            f"| {spec} | {med['registrations']:.0f} | {med['start']:.2f} | {med['schema'] * 1000:.0f} | "
            f"{med['construct']:.2f} | {med['mocks']:.2f} |"
        )


if __name__ == "__main__":
    main()
