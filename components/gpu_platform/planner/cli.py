"""`gpu-platform plan DEMAND`: the cheapest pools, MIG layouts and replicas for a demand file."""

from __future__ import annotations

import json
import math
import signal
import threading

import click
import yaml
from rich.markup import escape

from ..console import err, fail, out, print_findings, print_table
from ..errors import GpuPlatformError, SpecError

__all__ = ["plan_command"]

_DAY = 86_400.0  # the longest time limit taken, in seconds


def _finite(value: float) -> float:
    """`value`, unless it is not a number (FloatRange lets NaN through: every comparison with it is false)."""
    if math.isnan(value):
        raise click.BadParameter(f"{value} is not a number of seconds; give 0.1 to {_DAY:g}")
    return value


def _first_interrupt(_signum: int, _frame: object) -> None:
    """Ctrl-C during `plan`: the first one interrupts (the planner then waits for its threads to stop, and
    click prints "Aborted!" and exits 1); later ones are ignored, so that they can neither end the process
    with a traceback nor kill it by SIGINT while it exits."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


@click.command("plan")
@click.argument("demand", type=click.Path(dir_okay=False))
@click.option(
    "--time-limit",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.1, max=_DAY),
    callback=lambda _ctx, _param, value: _finite(value),
    help="Solver time limit in seconds (0.1 to 86400); a plan not proven optimal reports its MIP gap.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "yaml", "json"]),
    default="table",
    show_default=True,
    help="table: tables and the spec fragment; yaml: the spec fragment only; json: everything.",
)
@click.option("--cloud", type=click.Choice(["aws", "gcp"]), default=None, help="Override the demand's cloud.")
def plan_command(demand: str, time_limit: float, fmt: str, cloud: str | None) -> None:
    """Plan the cheapest pools, instance types, node counts and MIG layouts that serve DEMAND (a file, or - for
    standard input)."""
    before = signal.getsignal(signal.SIGINT)
    # Only the main thread may set handlers; and a Ctrl-C the caller ignores (a job a script put in the
    # background, `nohup`) stays ignored.
    if threading.current_thread() is not threading.main_thread() or before is signal.SIG_IGN:
        _plan(demand, time_limit, fmt, cloud)
        return
    signal.signal(signal.SIGINT, _first_interrupt)
    try:
        _plan(demand, time_limit, fmt, cloud)
    finally:
        if signal.getsignal(signal.SIGINT) is _first_interrupt:  # not interrupted: as it was (CliRunner, tests)
            signal.signal(signal.SIGINT, before if before is not None else signal.SIG_DFL)


def _plan(demand: str, time_limit: float, fmt: str, cloud: str | None) -> None:
    from .demand import load_demand
    from .report import needs_gpu_operator, plan_dict, plan_tables, spec_fragment
    from .solve import plan

    try:
        result = plan(load_demand(demand, cloud), time_limit)
    except SpecError as e:
        where = f" in {e.source}" if e.source else ""
        err.print(f"[red]invalid demand{escape(where)}: {len(e.findings)} error(s)[/]")
        print_findings(e.findings)
        raise SystemExit(1) from None
    except GpuPlatformError as e:
        fail(e)
    if fmt == "json":
        click.echo(json.dumps(plan_dict(result), indent=2))
        return
    fragment = yaml.safe_dump(spec_fragment(result), sort_keys=False, default_flow_style=None, width=120)
    if fmt == "yaml":
        click.echo(fragment, nl=False)
    else:
        print_table(plan_tables(result))
    for note in result.notes:  # on stderr, like the warning below
        err.print(f"[yellow]warning[/]: {escape(note)}")
    if not result.optimal:  # on stderr: the YAML on stdout stays a spec fragment
        err.print(
            f"[yellow]warning[/]: not proven optimal in {result.seconds:.1f}s (time limit {time_limit}s); "
            f"MIP gap {result.gap:.2%}"
        )
    operator = needs_gpu_operator(result)
    if fmt == "yaml" and operator:  # on stderr: the YAML on stdout stays a spec fragment
        err.print(f"note: {operator}")
    if fmt == "table":
        gcp = result.demand.cloud == "gcp"  # a string enum: no spec import when the CLI starts
        section = "gcp (project, location)" if gcp else "aws (region, subnetIds, nodeRoleArn)"
        out.print(
            f"[bold]spec fragment[/] (merge into a spec with cloud, clusterName, labelDomain and {section}"
            + (f"; {escape(operator)}" if operator else "")
            + "):"
        )
        out.print(fragment, markup=False)
