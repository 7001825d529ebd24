"""Admission checks run by `validate`: the routing engine must exist for the spec's Kubernetes version."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ..errors import Finding, RenderError, Severity
from ..spec import MutationEngine, PlatformSpec
from .jobs import JOB_KINDS
from .render import engine_notes, exempt_namespaces, mutation_engine

__all__ = ["check_admission"]


def check_admission(spec: PlatformSpec) -> Iterator[Finding]:
    """An engine the cluster cannot serve is an error; one that needs extra cluster setup is a warning."""
    try:
        mutation_engine(spec)
    except RenderError as e:
        yield from e.findings
        return
    for note in engine_notes(spec):
        if note.severity == Severity.WARNING:
            yield replace(note, path="admission.mutation")
    yield from _unrouted_integrations(spec)
    yield from _exempt_team_namespaces(spec)


def _exempt_team_namespaces(spec: PlatformSpec) -> Iterator[Finding]:
    """A team namespace admission skips: its pods would be neither denied nor routed, and the team's grant labels
    would sit on a namespace where nothing reads them (e.g. `kube-system`)."""
    if not spec.admission.deny_unclassified and spec.admission.mutation == MutationEngine.NONE:
        return
    exempt = set(exempt_namespaces(spec))
    for i, team in enumerate(spec.teams):
        for j, ns in enumerate(team.namespaces):
            if ns in exempt:
                yield Finding(
                    f"teams[{i}].namespaces[{j}]",
                    f"{ns!r} is exempt from admission ({', '.join(sorted(exempt))}): GPU pods there would "
                    f"be neither checked nor routed to the tiers of team {team.name!r}; use another "
                    "namespace, or leave it out of admission.exemptNamespaces / additionalExemptNamespaces",
                )


def _unrouted_integrations(spec: PlatformSpec) -> Iterator[Finding]:
    """Enabled Kueue integrations whose workloads admission does not label with the team queue."""
    kueue = spec.scheduling.kueue
    if not kueue.enabled or spec.admission.mutation == MutationEngine.NONE:
        return
    for i, name in enumerate(kueue.integrations):
        if name not in JOB_KINDS and name != "pod":
            yield Finding(
                f"scheduling.kueue.integrations[{i}]",
                f"{name!r} workloads are not given the team's kueue.x-k8s.io/queue-name nor their tier's "
                f"placement by admission (routed: pods, {', '.join(JOB_KINDS)}); set both on them, or "
                "Kueue holds them (manageJobsWithoutQueueName) or picks any flavor with quota",
                Severity.WARNING,
            )
