"""What every `gpu-platform` command shares: the output consoles, findings and errors as printed, and the spec
a command reads from FILE or `--config-json`."""

from __future__ import annotations

import copy
import dataclasses
import io
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .errors import Finding, GpuPlatformError, Severity, SpecError

if TYPE_CHECKING:
    from .spec import PlatformSpec

__all__ = ["err", "fail", "load_or_fail", "out", "print_findings", "print_table", "spec_source"]

_Command = TypeVar("_Command", bound=Callable[..., Any])

_WIDTH = None if sys.stdout.isatty() else 160
out = Console(highlight=False, soft_wrap=True, width=_WIDTH)
err = Console(stderr=True, highlight=False, soft_wrap=True, width=_WIDTH)


_TABLE_MAX = 1_000  # columns: a bound on how wide a table is printed


def _cuts(table: RenderableType, width: int) -> bool:
    """Whether Rich, at `width` columns, cuts some cell of `table` short ('...')."""
    probe = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    probe.print(table, crop=False)
    return "\u2026" in probe.file.getvalue()  # type: ignore[attr-defined]  # the StringIO given above


def _plain(cell: RenderableType) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def _probe(table: RenderableType) -> RenderableType:
    """A table of the rows that decide its column widths (per column, the row of its longest cell and of its
    longest word), so that a width is tried without rendering every row."""
    if not isinstance(table, Table) or table.row_count <= 20:
        return table
    keep: set[int] = set()
    for column in table.columns:
        texts = [_plain(c) for c in column.cells]
        keep.add(max(range(len(texts)), key=lambda i: len(texts[i])))
        keep.add(max(range(len(texts)), key=lambda i: max((len(w) for w in texts[i].split()), default=0)))
    rows = sorted(keep)
    probe = copy.copy(table)
    probe.columns = [dataclasses.replace(c, _cells=[c._cells[i] for i in rows]) for c in table.columns]
    probe.rows = [table.rows[i] for i in rows]
    return probe


def print_table(table: RenderableType, console: Console = out) -> None:
    """Print a table whole. Where the terminal (or the 160 columns of piped output) is too narrow for a table, Rich
    cuts cells to '...' (a price, a pool name to copy); it is printed at the least width at which Rich cuts
    nothing instead (text still wraps between words), and the terminal wraps the longer lines. The width is
    searched on the rows that decide the column widths (`_probe`)."""
    probe = _probe(table)
    if not _cuts(probe, console.width):
        console.print(table)
        return
    low, high = console.width, console.measure(probe, options=console.options.update_width(_TABLE_MAX)).maximum
    while low + 1 < high:  # `high` cuts nothing, `low` cuts
        mid = (low + high) // 2
        low, high = (mid, high) if _cuts(probe, mid) else (low, mid)
    wide = Console(
        file=console.file,
        width=high,
        force_terminal=console.is_terminal,
        color_system=console.color_system,  # type: ignore[arg-type]  # the name of the detected system
        highlight=False,
        soft_wrap=True,
    )
    wide.print(table, crop=False)


# A file with tens of thousands of bad entries gave tens of megabytes of errors: the first `_SHOWN` findings are
# printed, each cut to `_LINE` characters, and a count of the rest.
_SHOWN = 100
_LINE = 1_000


def print_findings(findings: list[Finding], console: Console = err) -> None:
    """Print errors, warnings and notes, one per line, each naming its field path: the first 100, each at most
    1,000 characters, then how many more there are."""
    for f in findings[:_SHOWN]:
        style = {Severity.ERROR: "red", Severity.WARNING: "yellow"}.get(f.severity, "cyan")
        text = str(f)
        if len(text) > _LINE:
            text = f"{text[: _LINE - 40]}... ({len(text):,} characters in all)"
        console.print(f"[{style}]{f.severity}[/]: {escape(text)}")
    if len(findings) > _SHOWN:
        console.print(f"... and {len(findings) - _SHOWN:,} more")


def fail(e: GpuPlatformError) -> NoReturn:
    """Report a user error without a traceback and exit 1."""
    if isinstance(e, SpecError):
        where = f" in {e.source}" if e.source else ""
        err.print(f"[red]invalid spec{escape(where)}: {len(e.findings)} error(s)[/]")
        print_findings(e.findings)
    else:
        err.print(f"[red]error:[/] {escape(str(e))}")
    sys.exit(1)


def load_or_fail(path: str | None, config_json: str | None = None) -> tuple[PlatformSpec, list[Finding]]:
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
        if path is not None:
            spec = load_spec(path, notes)
        else:
            assert config_json is not None  # exactly one of the two, checked above
            spec = load_config_json(config_json)
    except GpuPlatformError as e:
        fail(e)
    return spec, notes + check_spec(spec)


def spec_source(command: _Command) -> _Command:
    """FILE (optional) and `--config-json PATH|-`: where a command reads its spec (see `load_or_fail`)."""
    command = click.option(
        "--config-json",
        "config_json",
        metavar="PATH|-",
        help="Read the spec from `pulumi config --json` output (a file, or - for standard input) instead of FILE: the "
        "config as the stack sees it, with ESC environments and secrets resolved.",
    )(command)
    return click.argument("file", required=False, type=click.Path(dir_okay=False))(command)
