"""Time the node pool render (EKS launch template, node group, autoscaler tags) and node pool checks.

Prints a table: pools, rendered resources and the median render and check times over several runs.
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


def _resource_count(doc: dict) -> int:
    """Provider resources of one pool: the primary one plus each related one (one per ASG tag)."""
    related = doc.get("resources", [])
    return 1 + sum(len(r["inputs"]) if isinstance(r["inputs"], list) else 1 for r in related)


def main() -> None:
    """Render and check each generated spec RUNS times and print the medians."""
    from specgen import SIZES, make_spec, median_ms

    from gpu_platform.load import parse_spec
    from gpu_platform.nodepools.checks import check_node_pools
    from gpu_platform.nodepools.render import render_nodepool_artifacts

    table = Table(
        title=f"nodepools render, median of {RUNS} ({platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {date.today()})",
        title_justify="left",
    )
    for col in ("GPUs", "teams", "pools", "resources", "render ms", "checks ms"):
        table.add_column(col, justify="right")
    for gpus, teams in SIZES:
        spec = parse_spec(make_spec(gpus, teams))
        docs = [d for a in render_nodepool_artifacts(spec) for d in a.documents]
        resources = sum(_resource_count(d) for d in docs)
        render = median_ms(partial(render_nodepool_artifacts, spec), RUNS)
        checks = median_ms(partial(check_node_pools, spec), RUNS)
        table.add_row(
            f"{gpus:,}", str(teams), str(len(spec.node_pools)), f"{resources:,}", f"{render:.2f}", f"{checks:.2f}"
        )
    Console().print(table)


if __name__ == "__main__":
    main()
