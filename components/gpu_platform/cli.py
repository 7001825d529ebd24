"""The `gpu-platform` command line: validate, synth, and the commands each domain registers.

Exit codes: 0 success, 1 invalid spec or a failed check, 2 usage error.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .errors import Finding, GpuPlatformError, SpecError

__all__ = ["main", "LAZY_COMMANDS", "err", "fail", "load_or_fail", "out", "print_findings", "spec_source"]

# Commands that live with their domain: name -> "module:function" (imported only when used).
LAZY_COMMANDS: dict[str, str] = {
    "preflight": "gpu_platform.preflight_cli:preflight",
    "plan": "gpu_platform.planner.cli:plan_command",
    "cost": "gpu_platform.observability.cost_cli:cost",
    "audit": "gpu_platform.audit:audit",
    "explain": "gpu_platform.explain.cli:explain",
}

_WIDTH = None if sys.stdout.isatty() else 160
out = Console(highlight=False, soft_wrap=True, width=_WIDTH)
err = Console(stderr=True, highlight=False, soft_wrap=True, width=_WIDTH)


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS:
            module, attr = LAZY_COMMANDS[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


def print_findings(findings: list[Finding], console: Console = err) -> None:
    """Print errors, warnings and notes, one per line, each naming its field path."""
    for f in findings:
        style = {"error": "red", "warning": "yellow"}.get(f.severity, "cyan")
        console.print(f"[{style}]{f.severity}[/]: {escape(str(f))}")


def fail(e: GpuPlatformError) -> None:
    """Report a user error without a traceback and exit 1."""
    if isinstance(e, SpecError):
        where = f" in {e.source}" if e.source else ""
        err.print(f"[red]invalid spec{where}: {len(e.findings)} error(s)[/]")
        print_findings(e.findings)
    else:
        err.print(f"[red]error:[/] {escape(str(e))}")
    sys.exit(1)


def load_or_fail(path: str | None, config_json: str | None = None):
    """Load and validate a spec from FILE or `--config-json`, or print every error and exit 1 (exit 2 when both
    or neither are given). Returns (spec, findings)."""
    from .load import load_config_json, load_spec
    from .validation import check_spec

    if (path is None) == (config_json is None):
        err.print(
            "[red]usage:[/] give FILE (Pulumi.<stack>.yaml or a spec) or --config-json PATH|- (the output of "
            "`pulumi config --json`), not both"
            if path
            else "[red]usage:[/] missing FILE; allowed: Pulumi.<stack>.yaml, a spec file, or --config-json PATH|-"
        )
        sys.exit(2)
    notes: list[Finding] = []
    try:
        spec = load_spec(path, notes) if path is not None else load_config_json(config_json)
    except GpuPlatformError as e:
        fail(e)
    return spec, notes + check_spec(spec)


def spec_source(command):  # noqa: ANN001, ANN201 (a click decorator)
    """FILE (optional) and `--config-json PATH|-`: where a command reads its spec (see `load_or_fail`)."""
    command = click.option(
        "--config-json",
        "config_json",
        metavar="PATH|-",
        help="Read the spec from `pulumi config --json` output (a file, or - for stdin) instead of FILE: the "
        "config as the stack sees it, with ESC environments and secrets resolved.",
    )(command)
    return click.argument("file", required=False, type=click.Path(dir_okay=False))(command)


def capacity_table(spec) -> Table:
    """Per pool: instance type, sharing, GPUs and units of each tier resource at min and max size."""
    from .capacity import pool_capacity
    from .catalog.resources import NVIDIA_RESOURCE_PREFIX

    table = Table(title=f"{spec.cluster_name} ({spec.cloud.value}): GPU pools", title_justify="left")
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
            pool.name,
            pool.instance_type,
            sharing,
            f"{cap.min_nodes}-{pool.max_size}",
            f"{cap.gpus_min}-{cap.gpus_max}",
            units,
            tiers,
        )
    return table


def _config_label(config_json: str | None) -> str:
    return "standard input" if config_json == "-" else str(config_json)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gpu-platform")
def main() -> None:
    """Validate, render, cost and audit a tiered multi-tenant GPU platform."""


@main.command()
@spec_source
def validate(file: str | None, config_json: str | None) -> None:
    """Validate FILE (Pulumi.<stack>.yaml or a plain spec): exit 0 when valid, else every error on stderr."""
    spec, findings = load_or_fail(file, config_json)
    print_findings([f for f in findings if f.severity != "error"])
    gpus = sum(p.max_size * (spec.hardware.instance(p.instance_type).gpu_count) for p in spec.node_pools)
    out.print(
        f"[green]valid[/]: {file or _config_label(config_json)}: {len(spec.node_pools)} pools, "
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
            f"[red]error:[/] --out {out_dir}: cannot write {e.filename or out_dir}: {e.strerror or e}; "
            "allowed: a directory you can create and write"
        )
        sys.exit(1)
    out.print(capacity_table(spec))
    summary = Table(title=f"written to {out_dir}", title_justify="left")
    summary.add_column("directory")
    summary.add_column("files", justify="right")
    summary.add_column("documents", justify="right")
    for kind, n in counts.items():
        docs = sum(len(a.documents) for a in artifacts if a.kind == kind)
        summary.add_row(f"{kind}/", str(n), str(docs))
    out.print(summary)
    # Notes and warnings go to stderr, as for validate and cost: stdout holds only the tables.
    for a in artifacts:
        for note in a.notes:
            err.print(f"[cyan]note[/]: {escape(note)}")
    print_findings([f for f in findings if f.severity != "error"])


if __name__ == "__main__":  # pragma: no cover
    main()
