"""`gpu-platform explain WORKLOAD --spec SPEC`: what the rendered platform does to a manifest, stage by stage.

Exit codes: 0 everything would run, 1 something is denied or can never schedule, 2 usage errors (a missing or
unreadable file, invalid YAML, an invalid spec).
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, NoReturn

import click
from rich.markup import escape

from ..console import err, out, print_findings, print_table
from ..errors import GpuPlatformError, SpecError
from .cluster import RenderedPlatform
from .core import Entry, explain_object
from .manifest import ManifestError, load_manifests
from .report import entry_table

if TYPE_CHECKING:
    from ..spec import PlatformSpec

__all__ = ["explain"]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")


def _usage(message: str) -> NoReturn:
    err.print(f"[red]error:[/] {escape(message)}")
    sys.exit(2)


def _load_spec(path: str) -> PlatformSpec:
    from ..load import load_spec

    try:
        return load_spec(path)
    except SpecError as e:
        err.print(f"[red]invalid spec in {escape(e.source or path)}: {len(e.findings)} error(s)[/]")
        print_findings(e.findings)
        sys.exit(2)


def _exit_code(entries: list[Entry]) -> int:
    return 1 if any(e.denied or e.schedulable is False for e in entries) else 0


@click.command()
@click.argument("workload", type=click.Path(dir_okay=False))
@click.option(
    "--spec",
    "spec_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Pulumi.<stack>.yaml or a plain spec (- for standard input).",
)
@click.option("--namespace", default=None, help="Namespace to submit in (default: the manifest's, else default).")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True, help="Output format."
)
def explain(workload: str, spec_file: str, namespace: str | None, fmt: str) -> None:
    """What the rendered platform does to WORKLOAD (a manifest file, or - for standard input): admission, pods,
    Kueue, scheduler, priority, $/hour."""
    if workload == "-" and spec_file == "-":
        _usage("WORKLOAD and --spec cannot both be -: standard input holds one file")
    if namespace is not None and not _DNS_LABEL.match(namespace):
        _usage(f"--namespace {namespace!r}: not a namespace name; allowed: a lower-case DNS label")
    try:
        objects = load_manifests(workload)
    except ManifestError as e:
        _usage(str(e))
    spec = _load_spec(spec_file)
    try:
        platform = RenderedPlatform(spec)
        entries = [e for obj in objects for e in explain_object(platform, obj, namespace)]
    except GpuPlatformError as e:
        _usage(str(e))
    if fmt == "json":
        click.echo(json.dumps([e.to_json() for e in entries], indent=2))
    else:
        owned = {
            ns: f"{team.name}: {', '.join(t for t, n in team.quotas.items() if n > 0) or 'no quota'}"
            for team in spec.teams
            for ns in team.namespaces
        }
        for entry in entries:
            print_table(entry_table(entry))
            if entry.denied and entry.namespace not in owned:
                teams = ", ".join(f"{ns} ({team})" for ns, team in sorted(owned.items())[:10]) or "none"
                out.print(
                    f"hint: namespace '{escape(entry.namespace)}' belongs to no team; the teams' namespaces "
                    f"(team: tiers with quota): {escape(teams)}; set metadata.namespace or pass --namespace"
                )
    sys.exit(_exit_code(entries))
