"""Time the queues render (Kueue objects, Volcano queues, priorities, releases) and the queue capacity checks.

Prints a table: teams, tiers, rendered objects and the median render and check times over several runs.
"""

from __future__ import annotations

import platform
import sys
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RUNS = 7


def main() -> None:
    """Render and check each generated spec RUNS times and print the medians."""
    from specgen import SIZES, make_spec, median_ms

    from gpu_platform.load import parse_spec
    from gpu_platform.queues.checks import check_queues
    from gpu_platform.queues.render import render_queues

    table = Table(title=f"queues render, median of {RUNS} ({platform.python_version()})")
    for col in ("GPUs", "teams", "tiers", "objects", "render ms", "checks ms"):
        table.add_column(col, justify="right")
    for gpus, teams in SIZES:
        spec = parse_spec(make_spec(gpus, teams))
        q = render_queues(spec)
        objects = len(q.namespaces) + len(q.priority_classes) + len(q.kueue) + len(q.volcano) + 2
        render = median_ms(partial(render_queues, spec), RUNS)
        checks = median_ms(lambda s=spec: list(check_queues(s)), RUNS)
        table.add_row(f"{gpus:,}", str(teams), str(len(spec.tiers)), str(objects), f"{render:.2f}", f"{checks:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
