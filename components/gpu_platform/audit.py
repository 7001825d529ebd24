"""`gpu-platform audit`: run the policy pack's policies offline over a stack export or a preview document."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from .console import err, fail, load_or_fail, out, print_table
from .errors import GpuPlatformError
from .inputs import (
    MAX_DOCUMENT_BYTES,
    MAX_DOCUMENT_CONTAINERS,
    DuplicateKeyError,
    InputLimitError,
    decode_utf8,
    load_json,
    named_source,
    read_bounded,
    source_label,
)
from .names import shortened

if TYPE_CHECKING:
    from .policy import PolicyConfig
    from .policy.runner import Violation

__all__ = ["MAX_AUDIT_RESOURCES", "audit"]


class AuditInputError(GpuPlatformError):
    """The audited document or the pack config cannot be read."""


def _read_json(path: str, what: str, unique_keys: bool = False) -> Any:
    try:
        text = decode_utf8(read_bounded(path, MAX_DOCUMENT_BYTES, what), path, what)
    except InputLimitError as e:
        raise AuditInputError(str(e)) from None  # it names the file (or standard input)
    named = f"{what} {named_source(path)}"
    try:
        return load_json(text, MAX_DOCUMENT_CONTAINERS, unique_keys=unique_keys)
    except InputLimitError as e:
        raise AuditInputError(f"{named}: {e}") from None
    except DuplicateKeyError as e:
        raise AuditInputError(f"{named}: {e}") from None
    except ValueError as e:  # json.JSONDecodeError is one
        expected = (
            "; allowed: the JSON of `pulumi stack export` or `pulumi preview --json`"
            if what == "document"
            else "; allowed: the JSON file --policy-pack-config takes"
        )
        if what == "document" and path.endswith((".yaml", ".yml")):
            expected += " (a spec or stack file goes in --spec)"
        raise AuditInputError(f"{named} is not JSON: {e}{expected}") from None


def load_config(spec_path: str | None, config_path: str | None) -> PolicyConfig:
    """The PolicyConfig: from --spec, else from a pack config file (per-policy or flat), else the defaults."""
    from .policy import POLICIES, PolicyConfig, config_from_spec
    from .policy.config import PolicyConfigError, bounded, error_lines, parse_config

    if spec_path:
        spec, _ = load_or_fail(spec_path)
        return config_from_spec(spec)
    if not config_path:
        return PolicyConfig()
    raw = _read_json(config_path, "policy config", unique_keys=True)
    if not isinstance(raw, dict):
        raise AuditInputError(
            f"{source_label(config_path)}: policy config is {type(raw).__name__}; expected a JSON object"
        )
    # The per-policy format names policies (gpu-...) and `all`; the flat one, properties (camelCase, never gpu-...).
    per_policy = any(k.startswith("gpu-") or k == _ALL for k in raw)
    flat, levels, everyone, problems = _one_config(raw) if per_policy else (raw, {}, None, [])
    if not per_policy and "enforcementLevel" in raw:  # the engine's level for a policy call; here, for no policy
        problems.append(
            f"policy config enforcementLevel: {shortened(raw['enforcementLevel'])} sets no policy's level in the flat "
            "format; allowed: levels per policy in enforcement, or the per-policy format (gpu-...: "
            "{enforcementLevel: ...})"
        )
    try:
        cfg = parse_config(flat)
        # `all` is the level of every policy given none of its own, by enforcementLevel or in `enforcement`.
        rest = {
            p.name: everyone for p in POLICIES if everyone and p.name not in levels and p.name not in cfg.enforcement
        }
        if levels or rest:
            cfg = type(cfg).model_validate({**cfg.model_dump(), "enforcement": {**cfg.enforcement, **levels, **rest}})
    except ValidationError as e:
        problems += error_lines(e)
    except PolicyConfigError as e:
        problems += e.lines
    if problems:
        raise AuditInputError(bounded(problems, f"{source_label(config_path)}: "))
    return cfg


def _name(name: Any) -> str:
    """A policy name as it is when it is one of the pack's, else shortened (and quoted)."""
    from .policy import level_problem

    return str(name) if level_problem(name, "advisory") is None else shortened(name)


_ALL = "all"  # Pulumi's policy config key for the level of every policy (`pulumi preview --policy-pack-config`)


def _one_config(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str], str | None, list[str]]:
    """A per-policy config as one config: each property from whichever policy gives it, each policy's
    `enforcementLevel` (or the level alone, `"gpu-budget": "advisory"`), the level `all` gives, and what is wrong.

    Every policy reads the same properties, so one given different values under two policies is refused; the
    `enforcement` property's entries are merged across policies, and only an entry given two levels is refused.
    Also refused: policy names the pack does not have, levels a policy does not take, a policy's level that
    differs from its entry in `enforcement`, and flat properties beside the policies."""
    from .policy import level_problem
    from .policy.config import Enforcement

    every_policys = [e.value for e in Enforcement if e is not Enforcement.REMEDIATE]  # remediate: one policy only
    problems: list[str] = []
    merged: dict[str, tuple[str, Any]] = {}
    levels: dict[str, str] = {}
    entries: dict[str, tuple[str, Any]] = {}  # `enforcement` entries: policy -> (the policy giving it, its level)
    everyone: str | None = None
    for policy, props in raw.items():
        if policy == _ALL:
            level = (
                props.get("enforcementLevel")
                if isinstance(props, dict) and set(props) == {"enforcementLevel"}
                else props
            )
            if level in every_policys:
                everyone = level
            else:
                problems.append(
                    f"policy config all: {shortened(props)}; allowed: a level every policy takes "
                    f"({', '.join(every_policys)}), alone or as {{enforcementLevel: ...}}"
                )
            continue
        if not policy.startswith("gpu-"):
            problems.append(
                f"policy config {shortened(policy)}: a property beside per-policy objects; allowed: policies (gpu-...) "
                "holding the properties, or the properties alone (the flat format)"
            )
            continue
        if (problem := level_problem(policy, "advisory")) is not None:
            problems.append(f"policy config: {problem}")
            continue
        if isinstance(props, str):  # a level alone, as Pulumi's policy config allows
            props = {"enforcementLevel": props}
        if not isinstance(props, dict):
            problems.append(
                f"policy config {policy}: {shortened(props)}; allowed: an object of the pack's properties, or a level"
            )
            continue
        for key, value in props.items():
            if key == "enforcementLevel":
                if (problem := level_problem(policy, value)) is not None:
                    problems.append(f"policy config {policy}.enforcementLevel: {problem}")
                else:
                    levels[policy] = value
                continue
            if key == "enforcement" and isinstance(value, dict):
                for name, level in value.items():
                    first_entry = entries.setdefault(name, (policy, level))
                    if first_entry[0] != policy and not _same(first_entry[1], level):
                        problems.append(
                            f"policy config enforcement.{_name(name)} is {shortened(first_entry[1])} under "
                            f"{first_entry[0]} and {shortened(level)} under {policy}; give one level"
                        )
                merged.setdefault(key, (policy, {}))
                continue
            first = merged.setdefault(key, (policy, value))
            if first[0] != policy and not _same(first[1], value):
                problems.append(
                    f"policy config {shortened(key)} is {shortened(first[1])} under {first[0]} and "
                    f"{shortened(value)} under {policy}; every policy reads the same properties: give one value"
                )
    if "enforcement" in merged and isinstance(merged["enforcement"][1], dict):
        merged["enforcement"] = (merged["enforcement"][0], {name: level for name, (_, level) in entries.items()})
    # A policy's level given twice, as its `enforcementLevel` and in the `enforcement` property, must agree: which
    # of two levels the pack would take is not for a reader of the file to guess.
    for policy, level in levels.items():
        if policy in entries and isinstance(entries[policy][1], str) and entries[policy][1] != level:
            problems.append(
                f"policy config {policy}.enforcementLevel is {shortened(level)} and enforcement.{policy} is "
                f"{shortened(entries[policy][1])}; give the level once, or the same level in both"
            )
    return {key: value for key, (_, value) in merged.items()}, levels, everyone, problems


def _same(a: Any, b: Any, depth: int = 0) -> bool:
    """Whether two JSON values are the same (`true` is not 1, 500 is 500.0); past 64 levels they count as the
    same (the config's own check refuses such nesting)."""
    if depth > 64:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    return (numbers or type(a) is type(b)) and a == b


def _where(urn: str) -> str:
    parts = urn.split("::")
    return f"{parts[-2].rsplit(':', 1)[-1]} {parts[-1]}" if len(parts) >= 3 else (urn or "(stack)")


def violations_table(violations: list[Violation], title: str) -> Table:
    """A table of violations: policy, level, resource, message."""
    from .policy.config import Enforcement

    table = Table(title=escape(title), title_justify="left", show_lines=True)
    for col in ("policy", "level", "resource", "message"):
        table.add_column(col, overflow="fold")
    for v in violations:
        style = "red" if v.enforcement is Enforcement.MANDATORY else "yellow"
        # resource names and messages come from the audited document: text, never markup
        table.add_row(escape(v.policy), f"[{style}]{v.enforcement.value}[/]", escape(_where(v.urn)), escape(v.message))
    return table


# Resources (export states or preview steps) one `audit` checks: about 2-3 s of CPU on the machine of
# benchmarks/RESULTS.md ("Hostile and extreme inputs"), under 10 s with that machine's usual load (30,000 took 4 s of
# CPU and 12.6 s at load 5). The engine itself (`pulumi preview --policy-pack`) has no such limit.
MAX_AUDIT_RESOURCES = 20_000

TABLE_ROWS = 200  # above this many violations, one plain line each (a table of thousands takes minutes to lay out)


def print_violations(violations: list[Violation], title: str) -> None:
    """A table of the violations, or one `policy level resource: message` line each when there are many."""
    if len(violations) <= TABLE_ROWS:
        print_table(violations_table(violations, title))
        return
    lines = [title] + [f"{v.policy} {v.enforcement.value} {_where(v.urn)}: {v.message}" for v in violations]
    click.echo("\n".join(lines))


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--spec",
    "spec_path",
    type=click.Path(dir_okay=False),
    help="Take label domain, tiers, prices and budget from this spec (Pulumi.<stack>.yaml or a plain spec; - for "
    "standard input).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="A policy pack config JSON (as for --policy-pack-config; - for standard input), instead of --spec.",
)
def audit(file: str, spec_path: str | None, config_path: str | None) -> None:
    """Run the policy pack over FILE (`pulumi stack export` or `pulumi preview --json`; - for standard input); exit
    1 on a mandatory one."""
    from .policy.budget import pool_costs
    from .policy.config import Enforcement
    from .policy.resources import UnsupportedDocumentError, from_document
    from .policy.runner import run_policies

    if spec_path and config_path:  # the spec makes the whole config: a config file beside it would be ignored
        raise click.UsageError("give --spec or --config, not both: --spec makes the pack config from the spec")
    if file == "-" and "-" in (spec_path, config_path):
        raise click.UsageError("FILE and --spec (or --config) cannot both be -: standard input holds one file")
    try:
        cfg = load_config(spec_path, config_path)
        resources = from_document(_read_json(file, "document"), MAX_AUDIT_RESOURCES)
    except UnsupportedDocumentError as e:
        fail(AuditInputError(f"{source_label(file)}: {e}"))
    except GpuPlatformError as e:
        fail(e)
    if not spec_path and not config_path:  # say so: a fleet with its own label domain would see every pool flagged
        err.print(
            f"[cyan]note[/]: no --spec or --config: the pack's defaults apply (labelDomain {cfg.label_domain}); "
            "give the stack's spec with --spec SPEC"
        )
    violations = run_policies(resources, cfg)
    mandatory = [v for v in violations if v.enforcement is Enforcement.MANDATORY]
    if violations:
        print_violations(violations, f"{source_label(file)}: {len(violations)} policy violation(s)")
    costs = pool_costs(resources, cfg)
    if costs and cfg.budget_hourly is None:
        total = sum(c.hourly or 0 for c in costs)
        err.print(f"[cyan]note[/]: no budgetHourly set; GPU node pools at max size cost ${total:,.2f}/hour")
    summary = f"{len(resources)} resources, {len(mandatory)} mandatory and {len(violations) - len(mandatory)} advisory"
    if mandatory:
        err.print(f"[red]audit failed[/]: {summary} violation(s)")
        sys.exit(1)
    out.print(f"[green]audit passed[/]: {summary} violation(s)")
