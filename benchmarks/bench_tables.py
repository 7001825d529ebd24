"""Time `console.print_table` (tables printed whole, never cut to '…') on the cost report of large specs, at the
widths of a narrow terminal, a common one and piped output; prints a table.

    python benchmarks/bench_tables.py
"""

from __future__ import annotations

import io
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hostile import _many_tiers  # noqa: E402
from specgen import make_spec  # noqa: E402

from gpu_platform.console import print_table  # noqa: E402
from gpu_platform.load import parse_spec  # noqa: E402
from gpu_platform.observability.cost import cost_report  # noqa: E402
from gpu_platform.observability.cost_cli import cost_tables  # noqa: E402


def main() -> None:
    out = Table(
        title=f"print_table: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {date.today()}",
        title_justify="left",
    )
    for col in ("spec", "table", "rows", "width", "printed at", "s", "cut cells"):
        out.add_column(col, justify="left" if col in ("spec", "table") else "right")
    specs = [(f"{g:,} GPUs, {t:,} teams", make_spec(g, t)) for g, t in ((1_000, 100), (10_000, 1_000))]
    for label, data in [*specs, ("500 pools, 1,000 tiers", _many_tiers())]:
        spec = parse_spec(data)
        for name, table in zip(("pools", "tiers"), cost_tables(cost_report(spec)), strict=True):
            for width in (60, 100, 160):
                text = io.StringIO()
                start = time.perf_counter()
                print_table(table, Console(file=text, width=width))
                seconds = time.perf_counter() - start
                printed = max(len(line) for line in text.getvalue().splitlines())
                out.add_row(
                    label,
                    name,
                    str(table.row_count),
                    str(width),
                    str(printed),
                    f"{seconds:.3f}",
                    str(text.getvalue().count("…")),
                )
    Console(width=160).print(out)


if __name__ == "__main__":
    main()
