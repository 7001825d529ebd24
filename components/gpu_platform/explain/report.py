"""explain's output: a table per pod template for people, a JSON list for tools."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape
from rich.table import Table

from .core import Entry

__all__ = ["entry_table"]

_VALUE_WIDTH = 60


def _patch(op: dict[str, Any]) -> str:
    text = f"{op.get('op')} {op.get('path')}"
    if "value" in op:
        value = json.dumps(op["value"], separators=(",", ":"))
        text += " " + (value if len(value) <= _VALUE_WIDTH else value[: _VALUE_WIDTH - 3] + "...")
    return text


def _steps(stage: dict[str, Any]) -> tuple[str, str]:
    lines = []
    for s in stage["steps"]:
        where = f" (in {s['webhookConfiguration']})" if s.get("webhookConfiguration") else ""
        again = " [reinvoked]" if s.get("reinvoked") else ""
        lines.append(f"{s['plugin']} {s['name']}{where}{again}")
        lines += [f"  {_patch(p)}" for p in s["patches"]]
        lines += [f"  {s[k]}" for k in ("denied", "note") if s.get(k)]
    outcome = "DENIED" if stage["denied"] else ("mutated" if any(s["patches"] for s in stage["steps"]) else "admitted")
    return f"{stage['object']}: {outcome}", "\n".join(lines) or "no policy or webhook matched"


def _kueue(stage: dict[str, Any]) -> tuple[str, str]:
    if "clusterQueue" not in stage:
        return "-", stage["note"]
    chain = f"LocalQueue {stage['localQueue']} -> ClusterQueue {stage['clusterQueue'] or '?'}"
    chain += f" -> flavor {stage['flavor']}" if stage["flavor"] else ""
    if stage["quotaHolds"]:
        outcome = "quota holds" + (" (borrowing)" if stage["borrowing"] else "")
    else:
        outcome = "quota does not hold"
    return outcome, "\n".join([chain, stage["note"], *stage["reasons"]])


def _scheduler(stage: dict[str, Any]) -> tuple[str, str]:
    if "pools" not in stage:
        return "-", stage["note"]
    fits = [p["pool"] for p in stage["pools"] if p["fits"]]
    requests = ", ".join(f"{r} {n:g}" for r, n in stage["requests"].items())
    lines = [f"per pod: {requests}"] + [f"{p['pool']}: {p['reason']}" for p in stage["pools"]]
    return (f"pool {fits[0]}" if fits else "no pool accepts the pod"), "\n".join(lines + [stage["notModelled"]])


def stage_rows(entry: Entry) -> list[tuple[str, str, str]]:
    """(stage, outcome, detail) rows of one entry, in pipeline order."""
    rows = []
    for stage in entry.stages:
        name = stage["stage"]
        if name in ("admission", "pod admission"):
            rows.append((name, *_steps(stage)))
        elif name == "kueue":
            rows.append((name, *_kueue(stage)))
        elif name == "scheduler":
            rows.append((name, *_scheduler(stage)))
        elif name == "priority":
            value = "" if stage["value"] is None else f" ({stage['value']})"
            rows.append((name, f"{stage['priorityClass'] or 'none'}{value}", stage.get("note") or ""))
        elif name == "cost":
            rows.append(
                (
                    name,
                    f"${stage['hourly']:,.2f}/h",
                    f"{stage['pods']} pod(s) x ${stage['hourlyPerPod']:,.4f}/h on {stage['pool']}",
                )
            )
        else:
            rows.append((name, "-", stage.get("note", "")))
    return rows


def verdict(entry: Entry) -> str:
    """One line: runs, denied, never schedules, or not modelled."""
    if entry.template is None and entry.schedulable is None:
        return "not modelled"
    if entry.denied:
        return "DENIED"
    if not entry.schedulable:
        return "NEVER SCHEDULES"
    where = f"runs on {entry.pool}" if entry.pool else "runs (no GPU)"
    return where + (", outside Kueue's quota" if entry.outside_quota else "")


def entry_table(entry: Entry) -> Table:
    """The rich table of one entry."""
    title = f"{entry.kind}/{entry.name} in {entry.namespace}" + (f": {entry.template}" if entry.template else "")
    table = Table(
        title=escape(title), title_justify="left", caption=f"verdict: {verdict(entry)}", caption_justify="left"
    )
    for col in ("stage", "outcome", "detail"):
        table.add_column(col)
    for row in stage_rows(entry):
        table.add_row(*(escape(c) for c in row))
    return table
