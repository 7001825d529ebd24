"""The CLI reference page of the docs, generated from the click commands.

`python -m gpu_platform.cli_reference docs/reference/cli.md` (run by `make docs`) rewrites the page; without an
argument it prints it. A test fails when the committed page differs from what this renders.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

import click

from .cli import main
from .spec_reference import write_if_changed

__all__ = ["render_cli_reference"]

_INTRO = """# CLI reference

`gpu-platform COMMAND [OPTIONS] ARGS`. FILE is a `Pulumi.<stack>.yaml` (the spec under the config key
`gpu-platform:platform`) or a plain spec YAML. Exit codes: 0 success, 1 an invalid spec or a failed check,
2 a usage error (missing argument, unknown option). `explain` keeps 1 for a workload that is denied or never
schedules, so for it an unreadable or invalid workload or spec is 2 as well. Errors, warnings and notes go to
stderr, each naming its field path; tables and reports go to stdout.

Generated from the command definitions by `make docs` (`python -m gpu_platform.cli_reference
docs/reference/cli.md`); a test fails when this page is stale.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _has_default(value: object) -> bool:
    # click >= 8.2 marks "no default" with a sentinel object rather than None
    return value not in (None, False, ()) and type(value).__name__ != "Sentinel"


def _param_row(param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        return f"| `{param.human_readable_name}` | argument | {'required' if param.required else 'optional'} | |"
    opt = cast(click.Option, param)  # the only other kind of parameter a command has
    names = ", ".join(f"`{n}`" for n in [*opt.opts, *opt.secondary_opts])
    if opt.is_flag:
        kind = "flag"
    elif isinstance(opt.type, click.Choice):
        kind = " \\| ".join(f"`{c}`" for c in opt.type.choices)
    else:  # the metavar `--help` shows (`PATH|-`), else the type's name
        kind = _cell(opt.metavar) if opt.metavar else opt.type.name.upper()
    default = (
        "required" if opt.required else (f"`{opt.default}`" if _has_default(opt.default) and not opt.is_flag else "")
    )
    return f"| {names} | {kind} | {default} | {_cell(opt.help or '')} |"


def _command(name: str, cmd: click.Command) -> str:
    ctx = click.Context(cmd, info_name=f"gpu-platform {name}")
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    params = [p for p in cmd.params if p.name != "help"]
    rows = [
        f"## {name}",
        "",
        "```text",
        f"gpu-platform {name} {usage}",
        "```",
        "",
        " ".join((cmd.help or "").split()).replace("<", "&lt;"),
        "",
    ]
    if params:
        rows += ["| parameter | type | default | meaning |", "|---|---|---|---|", *map(_param_row, params), ""]
    return "\n".join(rows)


def render_cli_reference() -> str:
    """One section per command, in alphabetical order, with its usage line, help and parameters."""
    ctx = click.Context(main, info_name="gpu-platform")
    sections = [
        _command(name, cmd) for name in main.list_commands(ctx) if (cmd := main.get_command(ctx, name)) is not None
    ]
    return _INTRO + "\n" + "\n".join(sections)


def write_page(path: str | Path) -> bool:
    """Write the page to `path`; True when its content changed."""
    return write_if_changed(path, render_cli_reference())


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) > 1:
        write_page(sys.argv[1])
    else:
        print(render_cli_reference(), end="")
