"""Cost of spec fields given as Pulumi Inputs: validation (a note per Input) and the token swap over every rendered
document, against the same spec with plain values.

Usage: .venv/bin/python benchmarks/bench_inputs.py
The cluster name, node role and subnets are given as Inputs (any awaitable: no Pulumi runtime needed). "swap ms" is
the pure part of what the components do per document (`deferred.tokens_in` + `substitute`); "plain scan ms" is what
a spec without Inputs costs in a process that has Inputs elsewhere; "revalidate ms" is the field-by-field validation
`GpuPlatform` runs again before registering (`load.revalidate`). CPU time (process_time), median of RUNS runs.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RUNS = 5


class _Input:
    """Stands for a Pulumi Output: an awaitable the spec cannot read."""

    def __await__(self):  # noqa: ANN204
        yield from ()


def _cpu_ms(fn) -> float:  # noqa: ANN001
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def _swap(docs: list) -> None:
    from gpu_platform.deferred import substitute, tokens_in

    for doc in docs:
        tokens = tokens_in(doc)
        if tokens:
            substitute(doc, {t: "ml-prod" for t in tokens})


def main() -> None:
    """Validate and swap tokens for each generated spec, plain and with Inputs, and print the medians."""
    from specgen import SIZES, make_spec

    from gpu_platform.load import parse_spec, revalidate
    from gpu_platform.synth import render_all
    from gpu_platform.validation import check_spec

    table = Table(title=f"spec fields as Inputs, CPU ms, median of {RUNS} ({platform.python_version()})")
    for col in (
        "GPUs",
        "teams",
        "documents",
        "validate plain",
        "validate Inputs",
        "notes",
        "plain scan ms",
        "swap ms",
        "tokens",
        "revalidate ms",
    ):
        table.add_column(col, justify="right")
    for gpus, teams in SIZES:
        data = make_spec(gpus, teams)
        plain = parse_spec(data)
        inputs = parse_spec(
            {
                **data,
                "clusterName": _Input(),
                "aws": {
                    **data["aws"],
                    "nodeRoleArn": _Input(),
                    "subnetIds": [_Input() for _ in data["aws"]["subnetIds"]],
                },
            }
        )
        plain_docs = [d for a in render_all(plain) for d in a.documents]
        input_docs = [d for a in render_all(inputs) for d in a.documents]
        from gpu_platform.deferred import tokens_in

        tokens = sum(len(tokens_in(d)) for d in input_docs)
        notes = sum("Pulumi Input" in f.message for f in check_spec(inputs))
        table.add_row(
            f"{gpus:,}",
            f"{teams:,}",
            f"{len(input_docs):,}",
            f"{_cpu_ms(partial(check_spec, plain)):.1f}",
            f"{_cpu_ms(partial(check_spec, inputs)):.1f}",
            str(notes),
            f"{_cpu_ms(partial(_swap, plain_docs)):.1f}",
            f"{_cpu_ms(partial(_swap, input_docs)):.1f}",
            f"{tokens:,}",
            f"{_cpu_ms(partial(revalidate, inputs)):.1f}",
        )
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
