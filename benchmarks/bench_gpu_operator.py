"""Time the GPU Operator render (device-plugin, mig-parted, DCGM ConfigMaps and values) on generated fleets.

Prints a table: pools, device-plugin entries, MIG layouts and the median render time over several runs.
"""

from __future__ import annotations

import platform
import sys
from datetime import date
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RUNS = 7


def main() -> None:
    """Render each generated spec RUNS times and print the median."""
    from specgen import SIZES, make_spec, median_ms

    from gpu_platform.gpu_operator.render import render_gpu_operator
    from gpu_platform.load import parse_spec

    table = Table(title=f"gpu-operator render ({platform.machine()}, {platform.python_version()}, {date.today()})")
    for col in ("GPUs", "teams", "pools", "device-plugin entries", "MIG layouts", "median ms"):
        table.add_column(col, justify="right")
    for gpus, teams in SIZES:
        spec = parse_spec(make_spec(gpus, teams))
        r = render_gpu_operator(spec)
        ms = median_ms(partial(render_gpu_operator, spec), RUNS)
        layouts = len((r.mig_parted_config or {}).get("mig-configs", {})) - (1 if r.mig_parted_config else 0)
        table.add_row(
            f"{gpus:,}",
            str(teams),
            str(len(spec.node_pools)),
            str(len(r.device_plugin_configs)),
            str(layouts),
            f"{ms:.2f}",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
