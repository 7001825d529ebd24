"""Pure render of the Kueue job routing: label the workloads Kueue admits with the team's queue (no pulumi import).

Kueue reads `kueue.x-k8s.io/queue-name` (and `kueue.x-k8s.io/priority-class`) from the workload object of an
enabled integration (a Job, a JobSet...), not from its pods: a Job without the label bypasses the quotas. On
CREATE in a team namespace, the mutation adds the team's LocalQueue when the object has no queue label, and the
tier's WorkloadPriorityClass when its pod templates carry one known tier label and it has no priority label.
It never overwrites a label the user set, and fails open like the pod routes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..contract import tier_label_key
from ..queues.kueue import local_queue_name
from ..queues.priorities import priority_class_name
from ..spec import PlatformSpec
from .cel import cel_str, json_pointer

__all__ = ["JOB_KINDS", "JOB_ROUTE", "PRIORITY_LABEL", "QUEUE_LABEL", "JobKind", "job_kinds", "job_route_spec", "queues_cel"]

JOB_ROUTE = "gpu-platform-queue-jobs"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


@dataclass(frozen=True)
class JobKind:
    """A Kueue integration's workload kind: its API and where its pod templates are (a CEL list expression)."""

    group: str
    version: str
    resource: str
    kind: str
    templates: str


_RAY = "object.spec.rayClusterSpec"
_PYTORCH = "object.spec.pytorchReplicaSpecs"
# Kueue 0.19 integration name -> the API version it watches (jobset v1alpha2, training-operator v1, kuberay v1).
JOB_KINDS: dict[str, JobKind] = {
    "batch/job": JobKind("batch", "v1", "jobs", "Job", "[object.spec.template]"),
    "jobset.x-k8s.io/jobset": JobKind(
        "jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet",
        "has(object.spec.replicatedJobs) ? object.spec.replicatedJobs.map(r, r.template.spec.template) : []"),
    "kubeflow.org/pytorchjob": JobKind(
        "kubeflow.org", "v1", "pytorchjobs", "PyTorchJob",
        f"has({_PYTORCH}) ? {_PYTORCH}.map(k, {_PYTORCH}[k].template) : []"),
    "ray.io/rayjob": JobKind(
        "ray.io", "v1", "rayjobs", "RayJob",
        f"has({_RAY}) ? [{_RAY}.headGroupSpec.template] + (has({_RAY}.workerGroupSpecs) ? "
        f"{_RAY}.workerGroupSpecs.map(w, w.template) : []) : []"),
}


def job_kinds(spec: PlatformSpec) -> list[JobKind]:
    """The workload kinds of the enabled Kueue integrations this route knows (none when Kueue is disabled)."""
    kueue = spec.scheduling.kueue
    return [JOB_KINDS[i] for i in kueue.integrations if i in JOB_KINDS] if kueue.enabled else []


def queues_cel(spec: PlatformSpec) -> str:
    """CEL map literal: team namespace -> the team's LocalQueue."""
    entries = ", ".join(f"{cel_str(ns)}: {cel_str(local_queue_name(t))}" for t in spec.teams for ns in t.namespaces)
    return "{" + entries + "}"


def _templates(kinds: list[JobKind]) -> str:
    """The pod templates of the object, dispatched on its kind."""
    expr = "[]"
    for k in reversed(kinds):
        expr = f"object.kind == {cel_str(k.kind)} ? ({k.templates}) : {expr}"
    return expr


def _template_tier(key: str) -> str:
    return f"has(t.metadata) && has(t.metadata.labels) && {cel_str(key)} in t.metadata.labels ? t.metadata.labels[{cel_str(key)}] : ''"


def _variables(spec: PlatformSpec, kinds: list[JobKind]) -> list[dict[str, str]]:
    priorities = "{" + ", ".join(f"{cel_str(t.name)}: {cel_str(priority_class_name(t))}" for t in spec.tiers) + "}"
    first = "variables.tiers[0]"
    pairs = (f"[[{cel_str(QUEUE_LABEL)}, {cel_str(json_pointer(QUEUE_LABEL))}, variables.queue], "
             f"[{cel_str(PRIORITY_LABEL)}, {cel_str(json_pointer(PRIORITY_LABEL))}, variables.priority]]")
    return [
        {"name": "queue", "expression": f"{queues_cel(spec)}[request.namespace]"},
        {"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
        {"name": "tiers", "expression": f"({_templates(kinds)}).map(t, {_template_tier(tier_label_key(spec.label_domain))})"
                                        ".filter(x, x != '')"},
        # One tier across the templates that carry one (e.g. Ray workers but not the head); none or a mix: no priority.
        {"name": "priority", "expression": f"size(variables.tiers) > 0 && variables.tiers.all(x, x == {first}) && "
                                           f"{first} in {priorities} ? {priorities}[{first}] : ''"},
        # [label, JSON pointer, value] of every label to add: set by the routing, absent from the object.
        {"name": "adds", "expression": f"{pairs}.filter(p, p[2] != '' && !(p[0] in variables.labels))"},
    ]


_PATCH = ("size(variables.adds) == 0 ? [] : (has(object.metadata.labels) ? [] : "
          "[JSONPatch{op: 'add', path: '/metadata/labels', value: {}}]) + "
          "variables.adds.map(p, JSONPatch{op: 'add', path: '/metadata/labels' + p[1], value: p[2]})")


def _not_owned(kinds: list[JobKind]) -> str:
    """True unless a routed workload (a JobSet, a RayJob...) controls the object: Kueue queues the parent."""
    parents = "[" + ", ".join(cel_str(k.kind) for k in kinds) + "]"
    return (f"!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(o, "
            f"has(o.controller) && o.controller && o.kind in {parents})")


def job_route_spec(spec: PlatformSpec) -> dict[str, Any] | None:
    """The mutation spec (without namespace selection) labelling new workloads with the team's queue, or None."""
    kinds = job_kinds(spec)
    if not kinds or not spec.teams:
        return None
    rules = [{"apiGroups": [g], "apiVersions": sorted({k.version for k in kinds if k.group == g}), "operations": ["CREATE"],
              "resources": sorted({k.resource for k in kinds if k.group == g})}
             for g in dict.fromkeys(k.group for k in kinds)]
    return {
        "failurePolicy": "Ignore",
        "reinvocationPolicy": "Never",
        "matchConstraints": {"resourceRules": rules},
        "matchConditions": [{"name": "team-namespace", "expression": f"request.namespace in {queues_cel(spec)}"},
                            {"name": "not-owned-by-a-queued-workload", "expression": _not_owned(kinds)}],
        "variables": _variables(spec, kinds),
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": _PATCH}}],
    }
