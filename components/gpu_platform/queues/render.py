"""Everything the queues domain renders, grouped the way `synth` writes it and the component applies it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..artifacts import Artifact, ArtifactKind
from ..contract import team_label_key, tier_grant_label_key
from ..errors import Finding, Severity
from ..spec import PlatformSpec, Team
from .kueue import render_kueue_objects
from .priorities import render_priority_classes, render_workload_priority_classes
from .releases import render_kueue_release, render_volcano_release
from .volcano import queue_name, render_volcano_queues

__all__ = [
    "VOLCANO_QUEUE_ANNOTATION",
    "QueueObjects",
    "namespace_metadata",
    "render_namespaces",
    "render_queue_artifacts",
    "render_queues",
    "team_tiers",
]

# Volcano's PodGroup webhook moves a PodGroup left in the `default` queue to the queue this namespace
# annotation names (volcano-sh/volcano v1.15.1 pkg/webhooks/admission/podgroups/mutate/mutate_podgroup.go
# createPodGroupPatch; the key is staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/labels.go).
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


@dataclass(frozen=True)
class QueueObjects:
    """The queues domain's documents: plain objects (no CRDs needed), Kueue and Volcano CRs, Helm releases."""

    namespaces: list[dict[str, Any]]  # created (`scheduling.createNamespaces`) or, when not, labels patched in
    priority_classes: list[dict[str, Any]]
    kueue: list[dict[str, Any]]  # WorkloadPriorityClasses first, then flavors, cohorts, queues
    volcano: list[dict[str, Any]]
    kueue_release: dict[str, Any] | None
    volcano_release: dict[str, Any] | None

    @property
    def cluster_queue_names(self) -> list[str]:
        """Names of the Kueue ClusterQueues, in render order."""
        return [d["metadata"]["name"] for d in self.kueue if d["kind"] == "ClusterQueue"]

    @property
    def priority_class_names(self) -> list[str]:
        """Names of the PriorityClasses, lowest tier first as rendered."""
        return [d["metadata"]["name"] for d in self.priority_classes]


def team_tiers(spec: PlatformSpec, team: Team) -> list[str]:
    """The tiers a team may run: those it has a quota for, in the spec's tier order."""
    return [t.name for t in spec.tiers if t.name in team.quotas]


def namespace_metadata(spec: PlatformSpec, team: Team, namespace: str) -> dict[str, Any]:
    """A team namespace's metadata as the platform sets it. Admission reads it as `namespaceObject`: the team
    label names the LocalQueue, one grant label per tier the team may run; Volcano reads the annotation."""
    labels = {team_label_key(spec.label_domain): team.name}
    labels |= {tier_grant_label_key(spec.label_domain, t): "true" for t in team_tiers(spec, team)}
    meta: dict[str, Any] = {"name": namespace, "labels": labels}
    if spec.scheduling.volcano.enabled:
        meta["annotations"] = {VOLCANO_QUEUE_ANNOTATION: queue_name(team)}
    return meta


def render_namespaces(spec: PlatformSpec) -> list[dict[str, Any]]:
    """The teams' namespaces with the platform's labels: created when `scheduling.createNamespaces`, otherwise
    the same labels are patched onto namespaces that exist (admission depends on them either way)."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": namespace_metadata(spec, t, ns)}
        for t in spec.teams
        for ns in t.namespaces
    ]


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
    # Without createNamespaces the documents are the labels to server-side apply onto existing namespaces.
    ns_file = "team-namespaces" if spec.scheduling.create_namespaces else "team-namespace-labels"
    for name, docs in (
        (ns_file, q.namespaces),
        ("priorities", q.priority_classes),
        ("kueue", q.kueue),
        ("volcano", q.volcano),
    ):
        if docs:
            out.append(Artifact(ArtifactKind.KUBERNETES, name, tuple(docs)))
    for release in (q.kueue_release, q.volcano_release):
        if release:
            out.append(Artifact(ArtifactKind.HELM, release["name"], (release,)))
    if out:
        out[0] = Artifact(out[0].kind, out[0].name, out[0].documents, _notes(spec, q))
    return out


def _notes(spec: PlatformSpec, q: QueueObjects) -> tuple[Finding, ...]:
    kinds: dict[str, int] = {}
    for d in q.kueue + q.volcano:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    parts = ", ".join(f"{n} {k}" for k, n in kinds.items())
    counts = f"{len(spec.teams)} teams, {len(q.priority_classes)} PriorityClasses" + (f", {parts}" if parts else "")
    return (Finding("queues", counts, Severity.INFO),)
