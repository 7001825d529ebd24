"""Pure render of the workload routes: what Kueue reads from a workload object, set at creation (no pulumi import).

Kueue builds a Workload from the workload object (a Job, a JobSet, a Deployment...), not from its pods, and
assigns a flavor from the pod templates' node selector (kubernetes-sigs/kueue v0.19.2
pkg/scheduler/flavorassigner/flavorassigner.go `flavorSelector`: only a selector on the flavors' node-label
keys narrows the choice; without one, the first flavor with quota wins). So one route per workload kind, on
CREATE in a namespace granted the template's tier, writes into every pod template that carries a tier label
the same placement the pod routes write into pods: the pool's node selector, the pool and GPU tolerations, and
the tier's resource in place of `nvidia.com/gpu` (a MIG tier's ClusterQueue covers only its MIG resource).
On the object it adds the team's LocalQueue (`kueue.x-k8s.io/queue-name`, read from the namespace's team
label) when absent, and the tier's WorkloadPriorityClass when the tiered templates agree on one tier. It never
overwrites a label the user set, and fails open like the pod routes (Kueue then holds the workload: see
`queues.releases.kueue_manager_config`, manageJobsWithoutQueueName).

Each policy's size is independent of the number of teams and namespaces: the team and the tiers granted come
from the namespace's labels (the `namespaceObject` of admission CEL), set by the platform on team namespaces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..contract import (
    GPU_RESOURCE,
    GPU_TAINT,
    KUEUE_PRIORITY_LABEL,
    KUEUE_QUEUE_LABEL,
    pool_label_key,
    team_label_key,
    tier_grant_prefix,
    tier_label_key,
)
from ..queues.priorities import priority_class_name
from ..spec import PlatformSpec, Tier
from .cel import MAX_CONTAINERS, cel_get, cel_has_path, cel_list, cel_literal, cel_map, cel_str, json_pointer, jsonpatch

__all__ = [
    "JOB_KINDS",
    "PRIORITY_LABEL",
    "QUEUE_PODS_ROUTE",
    "granted",
    "job_kinds",
    "queue_pods_spec",
    "route_name",
    "workload_route_spec",
]

QUEUE_LABEL = KUEUE_QUEUE_LABEL
PRIORITY_LABEL = KUEUE_PRIORITY_LABEL
QUEUE_PODS_ROUTE = "gpu-platform-queue-pods"
# JobSet replicated jobs and Ray worker groups routed per object (CEL has no index loop: one slot each).
MAX_TEMPLATE_GROUPS = 8
_GPU = cel_str(GPU_RESOURCE)


@dataclass(frozen=True)
class Slot:
    """One pod template of a workload: when it exists (CEL), its expression, and its JSON pointer."""

    exists: str
    expr: str
    pointer: str


@dataclass(frozen=True)
class JobKind:
    """A Kueue integration's workload kind: its API and its pod templates."""

    group: str
    version: str
    resource: str
    kind: str
    slots: tuple[Slot, ...]
    every: str | None = None  # CEL list of every pod template, when `slots` stop at MAX_TEMPLATE_GROUPS

    @property
    def templates(self) -> str:
        """CEL list of the object's pod templates that routes can patch (indexed up to MAX_TEMPLATE_GROUPS)."""
        return " + ".join(f"({s.exists} ? [{s.expr}] : [])" for s in self.slots)

    @property
    def all_templates(self) -> str:
        """CEL list of every pod template of the object (checked by the deny: a ninth JobSet replicated job or
        Ray worker group is no way around it)."""
        return self.every or self.templates


def _one(path: str) -> Slot:
    """The single template at `path` (dotted, below `object`)."""
    return Slot(cel_has_path("object", path), f"object.{path}", json_pointer(*path.split(".")))


def _indexed(items: str, below: str) -> tuple[Slot, ...]:
    """Templates at `object.<items>[i].<below>` for i < MAX_TEMPLATE_GROUPS."""
    parts = items.split(".")
    has = cel_has_path("object", items)
    return tuple(
        Slot(
            f"{has} && size(object.{items}) > {i}",
            f"object.{items}[{i}].{below}",
            json_pointer(*parts, str(i), *below.split(".")),
        )
        for i in range(MAX_TEMPLATE_GROUPS)
    )


def _every(items: str, below: str) -> str:
    """CEL list of `object.<items>[*].<below>` for every item that has it."""
    has, inner = cel_has_path("object", items), cel_has_path("x", below)
    return f"({has} ? object.{items}.filter(x, {inner}).map(x, x.{below}) : [])"


def _keyed(items: str, key: str, below: str) -> Slot:
    """The template at `object.<items>[<key>].<below>` (a map keyed by replica type)."""
    return Slot(
        f"has(object.{items}) && {cel_str(key)} in object.{items}",
        f"object.{items}[{cel_str(key)}].{below}",
        json_pointer(*items.split("."), key, *below.split(".")),
    )


# Kueue 0.19 integration name -> the API version it watches and where the pod templates are (jobset v1alpha2,
# training-operator v1 PyTorchJob replica types Master/Worker, kuberay v1, apps/v1, LeaderWorkerSet v1).
JOB_KINDS: dict[str, JobKind] = {
    "batch/job": JobKind("batch", "v1", "jobs", "Job", (_one("spec.template"),)),
    "jobset.x-k8s.io/jobset": JobKind(
        "jobset.x-k8s.io",
        "v1alpha2",
        "jobsets",
        "JobSet",
        _indexed("spec.replicatedJobs", "template.spec.template"),
        _every("spec.replicatedJobs", "template.spec.template"),
    ),
    "kubeflow.org/pytorchjob": JobKind(
        "kubeflow.org",
        "v1",
        "pytorchjobs",
        "PyTorchJob",
        tuple(_keyed("spec.pytorchReplicaSpecs", r, "template") for r in ("Master", "Worker")),
    ),
    "ray.io/rayjob": JobKind(
        "ray.io",
        "v1",
        "rayjobs",
        "RayJob",
        (
            _one("spec.rayClusterSpec.headGroupSpec.template"),
            *_indexed("spec.rayClusterSpec.workerGroupSpecs", "template"),
        ),
        "(has(object.spec) && has(object.spec.rayClusterSpec) && has(object.spec.rayClusterSpec"
        ".headGroupSpec) && has(object.spec.rayClusterSpec.headGroupSpec.template) ? "
        "[object.spec.rayClusterSpec.headGroupSpec.template] : []) + "
        + _every("spec.rayClusterSpec.workerGroupSpecs", "template"),
    ),
    "deployment": JobKind("apps", "v1", "deployments", "Deployment", (_one("spec.template"),)),
    "statefulset": JobKind("apps", "v1", "statefulsets", "StatefulSet", (_one("spec.template"),)),
    "leaderworkerset.x-k8s.io/leaderworkerset": JobKind(
        "leaderworkerset.x-k8s.io",
        "v1",
        "leaderworkersets",
        "LeaderWorkerSet",
        (_one("spec.leaderWorkerTemplate.leaderTemplate"), _one("spec.leaderWorkerTemplate.workerTemplate")),
    ),
}


def job_kinds(spec: PlatformSpec) -> list[JobKind]:
    """The workload kinds of the enabled Kueue integrations routed here (none when Kueue is disabled)."""
    kueue = spec.scheduling.kueue
    return [JOB_KINDS[i] for i in kueue.integrations if i in JOB_KINDS] if kueue.enabled else []


def route_name(kind: JobKind) -> str:
    """Name of the route policy of one workload kind."""
    return f"gpu-platform-route-{kind.kind.lower()}"


def namespace_team(spec: PlatformSpec) -> str:
    """CEL: the team named by the request namespace's team label, '' when it is not a team namespace."""
    labels, key = "namespaceObject.metadata.labels", cel_str(team_label_key(spec.label_domain))
    return f"(has({labels}) && {key} in {labels} ? {labels}[{key}] : '')"


def granted(spec: PlatformSpec, tier: str) -> str:
    """CEL: the request namespace may run pods of `tier` (a CEL string). Without teams every namespace may."""
    if not spec.teams:
        return "true"
    labels, key = "namespaceObject.metadata.labels", f"({cel_str(tier_grant_prefix(spec.label_domain))} + {tier})"
    return f"(has({labels}) && {key} in {labels} && {labels}[{key}] == 'true')"


def _template_tier(key: str) -> str:
    return cel_get("t.metadata.labels", cel_str(key), guards=["t.metadata", "t.metadata.labels"])


def _patch(op: str, path: str, value: str | None = None) -> str:
    """A CEL JSONPatch literal, `op` double-quoted; `path` is a CEL string expression."""
    return jsonpatch(op, path, value, quote='"')


def _quoted_keys(**fields: str) -> list[tuple[str, str]]:
    """Map entries keyed by single-quoted CEL strings of the field names, values CEL expressions."""
    return [(cel_str(k, "'"), v) for k, v in fields.items()]


def _resource_patches(pointer: str, field: str, section: str) -> str:
    """Move `nvidia.com/gpu` to the tier's resource in one resources section of every container of `field`."""
    c = f"t.spec.{field}[i]"
    cond = (
        f"has(t.spec.{field}) && i < size(t.spec.{field}) && has({c}.resources) && has({c}.resources.{section}) "
        f"&& {_GPU} in {c}.resources.{section}"
    )
    base = f"{cel_str(f'{pointer}/spec/{field}/')} + string(i) + {cel_str(f'/resources/{section}/')}"
    add = _patch("add", f"{base} + variables.resourcePointers[tier]", f"{c}.resources.{section}[{_GPU}]")
    remove = _patch("remove", f"{base} + {cel_str(json_pointer(GPU_RESOURCE)[1:])}")
    pick = f"variables.idx.filter(i, {cond})"
    return f"{pick}.map(i, {add}) + {pick}.map(i, {remove})"


def _placement_patches(spec: PlatformSpec, slot: Slot) -> str:
    """CEL list of JSONPatch placing template `t` (of tier `tier`) on its pool, like the pod routes."""
    key, p = pool_label_key(spec.label_domain), slot.pointer
    pool = "variables.pools[tier]"
    tols = cel_list(
        [
            cel_map(_quoted_keys(key=cel_str(key), operator="'Equal'", value=pool, effect="'NoSchedule'")),
            cel_map(_quoted_keys(key=cel_str(GPU_TAINT["key"]), operator="'Exists'", effect="'NoSchedule'")),
        ]
    )
    into_selector = _patch("add", cel_str(p + "/spec/nodeSelector" + json_pointer(key)), pool)
    new_selector = _patch("add", cel_str(p + "/spec/nodeSelector"), cel_map([(cel_str(key), pool)]))
    selector = f"(has(t.spec.nodeSelector) ? {cel_list([into_selector])} : {cel_list([new_selector])})"
    append, create = (
        _patch("add", cel_str(p + "/spec/tolerations/-"), "x"),
        _patch("add", cel_str(p + "/spec/tolerations"), tols),
    )
    tolerations = (
        f"(has(t.spec.tolerations) ? {tols}.filter(x, !t.spec.tolerations.exists(y, has(y.key) && "
        f"y.key == x['key'])).map(x, {append}) : {cel_list([create])})"
    )
    resources = " + ".join(
        _resource_patches(p, f, s) for f in ("containers", "initContainers") for s in ("limits", "requests")
    )
    return f"{selector} + {tolerations} + (variables.resources[tier] == {_GPU} ? [] : {resources})"


def _slot_mutation(spec: PlatformSpec, slot: Slot) -> str:
    """CEL list of JSONPatch routing one pod template by its tier label, when its namespace is granted the tier."""
    body = f"tier in variables.pools && {granted(spec, 'tier')} ? {_placement_patches(spec, slot)} : []"
    per_template = f"[{_template_tier(tier_label_key(spec.label_domain))}].map(tier, {body})[0]"
    return f"!({slot.exists}) ? [] : [{slot.expr}].map(t, {per_template})[0]"


def _variables(spec: PlatformSpec, kind: JobKind) -> list[dict[str, str]]:
    def tier_map(value: Callable[[Tier], str]) -> str:
        return cel_map((cel_str(t.name), cel_str(value(t))) for t in spec.tiers)

    first = "variables.tiers[0]"
    pairs = (
        f"[[{cel_str(QUEUE_LABEL)}, {cel_str(json_pointer(QUEUE_LABEL))}, variables.queue], "
        f"[{cel_str(PRIORITY_LABEL)}, {cel_str(json_pointer(PRIORITY_LABEL))}, variables.priority]]"
    )
    return [
        {"name": "priorities", "expression": tier_map(priority_class_name)},
        {"name": "pools", "expression": tier_map(lambda t: t.pool)},
        {"name": "resources", "expression": tier_map(spec.resource_of)},
        {"name": "resourcePointers", "expression": tier_map(lambda t: json_pointer(spec.resource_of(t))[1:])},
        {"name": "idx", "expression": cel_literal(list(range(MAX_CONTAINERS)))},
        {"name": "queue", "expression": namespace_team(spec)},
        {"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
        {
            "name": "tiers",
            "expression": f"({kind.templates}).map(t, {_template_tier(tier_label_key(spec.label_domain))})"
            ".filter(x, x != '')",
        },
        # One tier across the templates that carry one (e.g. Ray workers but not the head); none or a mix: no priority.
        {
            "name": "priority",
            "expression": f"size(variables.tiers) > 0 && variables.tiers.all(x, x == {first}) && "
            f"{first} in variables.priorities ? variables.priorities[{first}] : ''",
        },
        # [label, JSON pointer, value] of every label to add: set by the routing, absent from the object.
        {"name": "adds", "expression": f"{pairs}.filter(p, p[2] != '' && !(p[0] in variables.labels))"},
    ]


_LABEL_PATCH = (
    "size(variables.adds) == 0 ? [] : (has(object.metadata.labels) ? [] : "
    "[JSONPatch{op: 'add', path: '/metadata/labels', value: {}}]) + "
    "variables.adds.map(p, JSONPatch{op: 'add', path: '/metadata/labels' + p[1], value: p[2]})"
)


def _not_owned(kinds: list[JobKind]) -> str:
    """True unless a routed workload (a JobSet, a RayJob...) controls the object: Kueue queues the parent."""
    parents = cel_literal([k.kind for k in kinds])
    return (
        f"!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(o, "
        f"has(o.controller) && o.controller && o.kind in {parents})"
    )


def workload_route_spec(spec: PlatformSpec, kind: JobKind) -> dict[str, Any]:
    """The mutation spec (without namespace selection) routing new workloads of `kind` in team namespaces."""
    rule = {
        "apiGroups": [kind.group],
        "apiVersions": [kind.version],
        "operations": ["CREATE"],
        "resources": [kind.resource],
    }
    mutations = [_LABEL_PATCH] + [_slot_mutation(spec, s) for s in kind.slots]
    return {
        "failurePolicy": "Ignore",
        "reinvocationPolicy": "Never",
        "matchConstraints": {"resourceRules": [rule]},
        "matchConditions": [
            {"name": "team-namespace", "expression": f"{namespace_team(spec)} != ''"},
            {"name": "not-owned-by-a-queued-workload", "expression": _not_owned(job_kinds(spec))},
        ],
        "variables": _variables(spec, kind),
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": e}} for e in mutations],
    }


# Pods created by these controllers are queued through their parent (Kueue skips pods whose ancestor it
# manages: kueue v0.19.2 pkg/controller/jobframework/utils.go FindAncestorJobManagedByKueue).
_JOB_POD_OWNERS = ("Job", "PyTorchJob", "RayCluster", "RayJob")


def queue_pods_spec(spec: PlatformSpec) -> dict[str, Any]:
    """The mutation spec giving every new pod of a team namespace the team's LocalQueue (Kueue's `pod`
    integration holds pods without one, manageJobsWithoutQueueName), except pods of a queued job."""
    owners = cel_literal(_JOB_POD_OWNERS)
    owned = (
        f"has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, has(o.controller) "
        f"&& o.controller && o.kind in {owners})"
    )
    labels = "object.metadata.labels"
    team = namespace_team(spec)
    into_labels = jsonpatch("add", cel_str("/metadata/labels" + json_pointer(QUEUE_LABEL)), team)
    new_labels = jsonpatch("add", "'/metadata/labels'", cel_map([(cel_str(QUEUE_LABEL), team)]))
    add = f"has({labels}) ? {cel_list([into_labels])} : {cel_list([new_labels])}"
    return {
        "failurePolicy": "Ignore",
        "reinvocationPolicy": "Never",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
            ]
        },
        "matchConditions": [
            {"name": "team-namespace", "expression": f"{namespace_team(spec)} != ''"},
            {"name": "no-queue-name", "expression": f"!has({labels}) || !({cel_str(QUEUE_LABEL)} in {labels})"},
            {"name": "not-a-queued-job-pod", "expression": f"!({owned})"},
        ],
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": add}}],
    }
