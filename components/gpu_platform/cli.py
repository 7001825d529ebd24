"""The `gpu-platform` command line: validate, synth, and the commands each domain registers.

Exit codes: 0 success, 1 invalid spec or a failed check, 2 usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from .audit import audit
from .console import err, fail, load_or_fail, out, print_findings, print_table, spec_source
from .errors import GpuPlatformError, Severity
from .inputs import source_label
from .observability.cost_cli import cost
from .planner.cli import plan_command
from .preflight_cli import preflight

if TYPE_CHECKING:
    from .spec import PlatformSpec

__all__ = ["main"]


def _explain_command() -> click.Command:
    from .explain.cli import explain  # explain imports celpy and lark to evaluate CEL (about 0.2 s): only for it

    return explain


# Commands whose modules are slow to import: name -> the function that imports the command, called when it is used.
DEFERRED_COMMANDS: dict[str, Callable[[], click.Command]] = {"explain": _explain_command}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *DEFERRED_COMMANDS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in DEFERRED_COMMANDS:
            return DEFERRED_COMMANDS[name]()
        return super().get_command(ctx, name)


def capacity_table(spec: PlatformSpec) -> Table:
    """Per pool: instance type, sharing, GPUs and units of each tier resource at min and max size."""
    from .capacity import pool_capacity
    from .catalog.resources import NVIDIA_RESOURCE_PREFIX

    table = Table(title=escape(f"{spec.cluster_name} ({spec.cloud.value}): GPU pools"), title_justify="left")
    for col in ("pool", "instance type", "sharing", "nodes", "GPUs", "tier resources (min-max)", "tiers"):
        table.add_column(col)
    for pool in spec.node_pools:
        cap = pool_capacity(spec, pool)
        s = pool.sharing
        sharing = s.mode.value + (f" x{s.replicas}" if s.replicas else "")
        if s.mig_layout:
            sharing += " " + "+".join(f"{n}x{p}" for p, n in s.mig_layout.items() if n)
        units = ", ".join(
            f"{r.removeprefix(NVIDIA_RESOURCE_PREFIX)} {n * cap.min_nodes}-{n * pool.max_size}"
            for r, n in cap.units_per_node.items()
        )
        tiers = ", ".join(t.name for t in spec.tiers_of(pool.name))
        table.add_row(
            *map(
                escape,  # names and instance types from the spec: text, never markup
                (pool.name, pool.instance_type, sharing, f"{cap.min_nodes}-{pool.max_size}"),
            ),
            f"{cap.gpus_min}-{cap.gpus_max}",
            escape(units),
            escape(tiers),
        )
    return table


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gpu-platform")
def main() -> None:
    """Validate, render, cost and audit a tiered multi-tenant GPU platform."""


@main.command()
@spec_source
def validate(file: str | None, config_json: str | None) -> None:
    """Validate FILE (Pulumi.<stack>.yaml or a plain spec; - for standard input): exit 0 when valid, else every
    error on stderr."""
    spec, findings = load_or_fail(file, config_json)
    print_findings([f for f in findings if f.severity != Severity.ERROR])
    gpus = sum(
        p.max_size * itype.gpu_count for p in spec.node_pools if (itype := spec.hardware.instance(p.instance_type))
    )
    out.print(
        f"[green]valid[/]: {escape(source_label(str(file or config_json)))}: {len(spec.node_pools)} pools, "
        f"{len(spec.tiers)} tiers, "
        f"{len(spec.teams)} teams, up to {gpus} GPUs"
    )


@main.command()
@spec_source
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option(
    "--force", is_flag=True, help="Replace --out DIR even when it holds files an earlier synth did not write."
)
def synth(file: str | None, config_json: str | None, out_dir: str, force: bool) -> None:
    """Render the full desired state of FILE into --out DIR, offline, replacing an earlier render atomically."""
    from .gpu_operator.checks import mig_layout_changes
    from .synth import previous_node_labels, render_all, write_artifacts

    spec, findings = load_or_fail(file, config_json)
    try:
        artifacts = render_all(spec)
    except GpuPlatformError as e:
        fail(e)
    findings = findings + mig_layout_changes(spec, previous_node_labels(Path(out_dir)))
    try:
        counts = write_artifacts(artifacts, Path(out_dir), force=force)
    except GpuPlatformError as e:
        fail(e)
    except OSError as e:
        err.print(
            f"[red]error:[/] --out {escape(str(out_dir))}: cannot write {escape(str(e.filename or out_dir))}: "
            f"{escape(str(e.strerror or e))}; "
            "allowed: a directory you can create and write"
        )
        sys.exit(1)
    print_table(capacity_table(spec))
    summary = Table(title=escape(f"written to {out_dir}"), title_justify="left")
    summary.add_column("directory")
    summary.add_column("files", justify="right")
    summary.add_column("documents", justify="right")
    for kind, n in counts.items():
        docs = sum(len(a.documents) for a in artifacts if a.kind == kind)
        summary.add_row(f"{kind}/", str(n), str(docs))
    print_table(summary)
    # Notes and warnings go to stderr, as for validate and cost: stdout holds only the tables.
    for a in artifacts:
        for note in a.notes:
            err.print(f"[cyan]note[/]: {escape(str(note))}")
    print_findings([f for f in findings if f.severity != Severity.ERROR])


for _command in (audit, cost, plan_command, preflight):
    main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
