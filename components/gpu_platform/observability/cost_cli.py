"""`gpu-platform cost FILE`: the cost report as a table, JSON or Markdown."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from ..console import load_or_fail, out, print_findings, print_table, spec_source
from ..errors import Severity
from .cost import CostReport, cost_report, unattributed_notes
from .pricing import HOURS_PER_MONTH

__all__ = ["cost", "cost_tables", "markdown_report"]

_POOL_COLS = (
    "pool",
    "instance",
    "sharing",
    "nodes",
    "GPUs",
    "$/h min",
    "$/h max",
    "$/month min",
    "$/month max",
    "baseline $/h",
    "saving %",
)
_TIER_COLS = (
    "tier",
    "pool",
    "resource",
    "units/node",
    "units min-max",
    "$/unit-h",
    "$/h min",
    "$/h max",
    "$/month min",
    "$/month max",
)


def _money(x: float) -> str:
    return f"{x:,.2f}"


def report_rows(report: CostReport) -> tuple[list[list[str]], list[list[str]], list[str]]:
    """Pool rows, tier rows and the total row, formatted for people."""
    doc = report.to_json()
    pools = [
        [
            p["name"],
            p["instanceType"],
            p["sharing"],
            f"{p['nodesMin']}-{p['nodesMax']}",
            f"{p['gpusMin']}-{p['gpusMax']}",
            _money(p["hourlyMin"]),
            _money(p["hourlyMax"]),
            _money(p["monthlyMin"]),
            _money(p["monthlyMax"]),
            _money(p["baselineHourly"]),
            f"{p['savingPercent']:.1f}",
        ]
        for p in doc["pools"]
    ]
    tiers = [
        [
            t["name"],
            p["name"],
            t["resource"],
            str(t["unitsPerNode"]),
            f"{t['unitsMin']}-{t['unitsMax']}",
            f"{t['unitHourly']:.4f}",
            _money(t["hourlyMin"]),
            _money(t["hourlyMax"]),
            _money(t["monthlyMin"]),
            _money(t["monthlyMax"]),
        ]
        for p in doc["pools"]
        for t in p["tiers"]
    ]
    gpus_min = sum(p["gpusMin"] for p in doc["pools"])
    gpus_max = sum(p["gpusMax"] for p in doc["pools"])
    total = [
        "total",
        "",
        "",
        "",
        f"{gpus_min}-{gpus_max}",
        _money(doc["totalHourlyMin"]),
        _money(doc["totalHourlyMax"]),
        _money(doc["totalMonthlyMin"]),
        _money(doc["totalMonthlyMax"]),
        _money(doc["baselineHourly"]),
        f"{doc['savingPercent']:.1f}",
    ]
    return pools, tiers, total


def _table(title: str, cols: tuple[str, ...], rows: list[list[str]]) -> Table:
    table = Table(title=escape(title), title_justify="left")
    for i, c in enumerate(cols):
        table.add_column(c, justify="right" if i >= 3 else "left")
    for row in rows:
        table.add_row(*map(escape, row))  # names from the spec: text, never markup
    return table


def cost_tables(report: CostReport) -> tuple[Table, Table]:
    """The pools table (with its total row) and the tiers table that `gpu-platform cost` prints."""
    pools, tiers, total = report_rows(report)
    return (
        _table(f"{report.cluster}: GPU pools (USD, {HOURS_PER_MONTH} h/month)", _POOL_COLS, [*pools, total]),
        _table("tiers: unit price of each tier resource", _TIER_COLS, tiers),
    )


def _md(cols: tuple[str, ...], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def markdown_report(report: CostReport) -> str:
    """The report as two Markdown tables."""
    pools, tiers, total = report_rows(report)
    spare = "".join(f"\n- unattributed: {n.message}" for n in unattributed_notes(report))
    spare += "".join(f"\n- prices: {line}" for line in report.prices)
    return (
        f"## GPU cost: {report.cluster} (USD, {HOURS_PER_MONTH} h/month)\n\n"
        f"{_md(_POOL_COLS, [*pools, total])}\n\n### Tiers\n\n{_md(_TIER_COLS, tiers)}\n{spare}"
    )


@click.command()
@spec_source
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="Output format.",
)
def cost(file: str | None, config_json: str | None, fmt: str) -> None:
    """Per pool and tier $/hour and $/month at min and max size, against a whole-GPU baseline."""
    spec, findings = load_or_fail(file, config_json)
    report = cost_report(spec)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
        return
    if fmt == "markdown":
        click.echo(markdown_report(report))
        return
    for table in cost_tables(report):
        print_table(table)
    out.print(
        "baseline: every tier unit at max size on a whole exclusive GPU of the same instance type; "
        "saving % = (baseline - max) / baseline"
    )
    for note in unattributed_notes(report):
        out.print(f"unattributed: {escape(note.message)}")
    for line in report.prices:
        out.print(f"prices: {escape(line)}")
    print_findings([f for f in findings if f.severity != Severity.ERROR])
