"""Everything the queues domain renders, grouped the way `synth` writes it and the component applies it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..artifacts import Artifact
from ..spec import PlatformSpec
from .kueue import render_kueue_objects
from .priorities import render_priority_classes, render_workload_priority_classes
from .releases import render_kueue_release, render_volcano_release
from .volcano import render_volcano_queues

__all__ = ["QueueObjects", "render_queue_artifacts", "render_queues", "team_label_key", "render_namespaces"]


def team_label_key(label_domain: str) -> str:
    """Namespace label key naming the namespace's team."""
    return f"{label_domain}/team"


@dataclass(frozen=True)
class QueueObjects:
    """The queues domain's documents: plain objects (no CRDs needed), Kueue and Volcano CRs, Helm releases."""

    namespaces: list[dict[str, Any]]
    priority_classes: list[dict[str, Any]]
    kueue: list[dict[str, Any]]  # WorkloadPriorityClasses first, then flavors, cohorts, queues
    volcano: list[dict[str, Any]]
    kueue_release: dict[str, Any] | None
    volcano_release: dict[str, Any] | None


def render_namespaces(spec: PlatformSpec) -> list[dict[str, Any]]:
    """The teams' namespaces, labelled with their team (when `scheduling.createNamespaces`)."""
    if not spec.scheduling.create_namespaces:
        return []
    key = team_label_key(spec.label_domain)
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {key: t.name}}}
            for t in spec.teams for ns in t.namespaces]


def render_queues(spec: PlatformSpec) -> QueueObjects:
    """Every queues-domain document for `spec` (Kueue and Volcano parts only when enabled)."""
    kueue_on, volcano_on = spec.scheduling.kueue.enabled, spec.scheduling.volcano.enabled
    return QueueObjects(
        namespaces=render_namespaces(spec),
        priority_classes=render_priority_classes(spec),
        kueue=render_workload_priority_classes(spec) + render_kueue_objects(spec) if kueue_on else [],
        volcano=render_volcano_queues(spec) if volcano_on else [],
        kueue_release=render_kueue_release(spec) if kueue_on else None,
        volcano_release=render_volcano_release(spec) if volcano_on else None,
    )


def render_queue_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """`DIR/kubernetes/{team-namespaces,priorities,kueue,volcano}.yaml` and `DIR/helm/{kueue,volcano}.yaml`."""
    q = render_queues(spec)
    out = []
    for name, docs in (("team-namespaces", q.namespaces), ("priorities", q.priority_classes),
                       ("kueue", q.kueue), ("volcano", q.volcano)):
        if docs:
            out.append(Artifact("kubernetes", name, tuple(docs)))
    for release in (q.kueue_release, q.volcano_release):
        if release:
            out.append(Artifact("helm", release["name"], (release,)))
    if out:
        out[0] = Artifact(out[0].kind, out[0].name, out[0].documents, _notes(spec, q))
    return out


def _notes(spec: PlatformSpec, q: QueueObjects) -> tuple[str, ...]:
    kinds: dict[str, int] = {}
    for d in q.kueue + q.volcano:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    parts = ", ".join(f"{n} {k}" for k, n in kinds.items())
    return (f"queues: {len(spec.teams)} teams, {len(q.priority_classes)} PriorityClasses" + (f", {parts}" if parts else ""),)
