"""The component provider refusing oversized Construct requests: the time from sending the request to the error
(the SDK deserialising it, then the spec's size bound), and the provider process's peak resident memory.

    python benchmarks/bench_provider_hostile.py
"""

from __future__ import annotations

import copy
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import grpc  # noqa: E402
import yaml  # noqa: E402

from helpers.provider_rpc import STACK_URN, ProviderProcess, _struct  # noqa: E402

TOKEN = "gpu-platform:index:GpuPlatform"
DEV = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["gpu-platform:platform"]


def _cases() -> dict[str, dict]:
    def with_(change) -> dict:
        data = copy.deepcopy(DEV)
        change(data)
        return data

    return {
        "10^6-key valuesOverrides map": with_(
            lambda d: d.update(gpuOperator={"valuesOverrides": {f"k{i}": i for i in range(1_000_000)}})
        ),
        "10^6-key migLayout map": with_(
            lambda d: d["nodePools"][1]["sharing"].update(migLayout={f"k{i}": 1 for i in range(1_000_000)})
        ),
        "10^6-item namespaces list": with_(
            lambda d: d["teams"][0].update(namespaces=[f"n{i}" for i in range(1_000_000)])
        ),
        "10^5 node pools": with_(
            lambda d: d.update(nodePools=[dict(d["nodePools"][0], name=f"p{i}") for i in range(100_000)])
        ),
    }


def _peak_mib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        line = next(x for x in status if x.startswith("VmHWM"))
    return int(line.split()[1]) // 1024


def main() -> None:
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{date.today()}; each case in a fresh provider process"
    )
    print("| request | bytes | refused after s | provider peak RSS MiB | next Construct |")
    print("|---|---:|---:|---:|---|")
    for label, data in _cases().items():
        size = _struct(data).ByteSize()
        with ProviderProcess() as p:
            start = time.perf_counter()
            try:
                p.construct(TOKEN, "big", data, parent=STACK_URN)
                outcome = "accepted"
            except grpc.RpcError as e:
                outcome = e.code().name
            elapsed = time.perf_counter() - start  # includes building the request's Struct in this process
            peak = _peak_mib(p.proc.pid)
            p.construct(TOKEN, "after", copy.deepcopy(DEV), parent=STACK_URN)
            print(f"| {label} | {size:,} | {elapsed:.1f} ({outcome}) | {peak} | ok |")


if __name__ == "__main__":
    main()
