"""Explain one workload object stage by stage: admission, the pods it makes, Kueue, the scheduler, priority, cost."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..contract import NVIDIA_RESOURCE_PREFIX
from ..queues.kueue import QUEUE_NAME_LABEL
from .admission import AdmissionResult, Request
from .cluster import RenderedPlatform
from .flavors import FlavorResult, assign_flavor, assign_workload, merge_podset_info
from .kueue import ADMISSION_GATE
from .scheduler import NOT_MODELLED, schedule
from .shape import resources_problem, shape_problem
from .workloads import (
    KINDS,
    PodTemplate,
    container_requests,
    get_path,
    pod_from_template,
    pod_requests,
    pod_templates,
    with_default_requests,
)

__all__ = ["Entry", "explain_object"]


@dataclass
class Entry:
    """What happens to one pod template of one workload (or to an object explain does not model)."""

    kind: str
    name: str
    namespace: str
    template: str | None
    pods: int = 0
    pool: str | None = None
    local_queue: str | None = None
    cluster_queue: str | None = None
    flavor: str | None = None
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    priority_class: str | None = None
    priority: int | None = None
    denied: str | None = None
    schedulable: bool | None = None
    hourly: float | None = None
    outside_quota: bool = False  # the pods start without Kueue admitting them
    stages: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The entry of `explain --format json`."""
        return {
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "template": self.template,
            "pods": self.pods,
            "pool": self.pool,
            "localQueue": self.local_queue,
            "clusterQueue": self.cluster_queue,
            "flavor": self.flavor,
            "resources": self.resources,
            "priorityClass": self.priority_class,
            "priority": self.priority,
            "denied": self.denied,
            "schedulable": self.schedulable,
            "outsideQuota": self.outside_quota,
            "hourly": None if self.hourly is None else round(self.hourly, 4),
            "stages": self.stages,
        }


def _admission_stage(stage: str, obj: dict[str, Any], result: AdmissionResult) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {
        "stage": stage,
        "object": f"{obj.get('kind')}/{meta.get('name', '')}",
        "steps": [s.to_json() for s in result.steps],
        "denied": result.denied,
    }


def _request(
    platform: RenderedPlatform, obj: dict[str, Any], namespace: str, parent: dict[str, Any] | None = None
) -> Request:
    kind = KINDS[obj["kind"]]
    version = obj["apiVersion"].rpartition("/")[2]
    return Request(
        namespace,
        platform.namespace_object(namespace),
        kind,
        version,
        (obj.get("metadata") or {}).get("name", ""),
        parent,
    )


def _not_modelled(obj: dict[str, Any], namespace: str, why: str) -> Entry:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return Entry(
        str(obj.get("kind")), str(meta.get("name", "")), namespace, None, stages=[{"stage": "kind", "note": why}]
    )


def _modelled(obj: dict[str, Any]) -> str | None:
    """Why explain cannot model `obj`, or None when it can."""
    kind = KINDS.get(obj.get("kind", ""))
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    if kind is None:
        return f"kind {obj.get('kind')} is not modelled; explain models {', '.join(KINDS)}"
    if group != kind.group or version not in kind.versions:
        return (
            f"{obj.get('apiVersion')} {kind.kind} is not modelled; "
            f"explain models {kind.group or 'core'}/{kind.versions[0]}"
        )
    return None


def explain_object(platform: RenderedPlatform, obj: dict[str, Any], namespace: str | None) -> list[Entry]:
    """One entry per pod template of `obj` in `namespace` (default: its own, else `default`)."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns = namespace or (meta.get("namespace") if isinstance(meta.get("namespace"), str) else None) or "default"
    why = _modelled(obj)
    if why:
        return [_not_modelled(obj, ns, why)]
    problem = shape_problem(obj)
    if problem:
        entry = _not_modelled(obj, ns, f"the API server cannot decode the object: {problem}")
        entry.stages[0]["stage"] = "decode"
        entry.denied, entry.schedulable = f"the API server rejects the object: {problem}", False
        return [entry]
    obj = copy.deepcopy(obj)
    obj["metadata"] = dict(obj.get("metadata") or {}, namespace=ns)
    if obj["kind"] == "Pod":
        obj = with_default_requests(obj)
    admitted = platform.chain.admit(obj, _request(platform, obj, ns), _check_templates)
    stage = _admission_stage("admission", obj, admitted)
    templates = pod_templates(admitted.object)
    if not templates:
        entry = Entry(obj["kind"], meta.get("name", ""), ns, None, stages=[stage], schedulable=False)
        entry.stages.append({"stage": "pods", "note": "no pod template found in the object"})
        return [entry]
    queued = _workload_queue(platform, admitted, templates, ns)
    return [_template(platform, admitted, stage, t, ns, q) for t, q in zip(templates, queued, strict=True)]


def _check_templates(obj: dict[str, Any]) -> str | None:
    """The API server's validation of the (mutated) object's pod templates, or of the Pod itself."""
    for t in pod_templates(obj):
        tmpl = get_path(obj, t.path) if t.path else obj
        problem = resources_problem((tmpl or {}).get("spec") or {}, f"{t.display}.spec" if t.path else "spec")
        if problem:
            return problem
    return None


def _workload_queue(
    platform: RenderedPlatform, admitted: AdmissionResult, templates: list[PodTemplate], ns: str
) -> list[FlavorResult | None]:
    """Kueue's Workload of a suspended job: one pod set per template, assigned together (None: not queued)."""
    obj = admitted.object
    if admitted.denied or platform.kueue is None or not _kueue_managed(platform, obj):
        return [None] * len(templates)
    podsets = [(((get_path(obj, t.path) or {}).get("spec") or {}), t.count) for t in templates]
    return list(assign_workload(platform.kueue, ns, _queue_of(obj), podsets))


def _resources(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for field_name in ("initContainers", "containers"):
        for c in spec.get(field_name) or []:
            out[str(c.get("name", "?"))] = container_requests(c)
    return out


def _kueue_managed(platform: RenderedPlatform, obj: dict[str, Any]) -> bool:
    """The job is suspended at creation (so Kueue admits it) when its kind has a suspend field set to true."""
    kind = KINDS[obj["kind"]]
    return bool(kind.suspend and get_path(obj, kind.suspend) is True)


def _queue_of(*objs: dict[str, Any]) -> str:
    for o in objs:
        q = ((o.get("metadata") or {}).get("labels") or {}).get(QUEUE_NAME_LABEL)
        if q:
            return str(q)
    return ""


def _kueue_stage(result: FlavorResult | None, note: str) -> dict[str, Any]:
    out: dict[str, Any] = {"stage": "kueue", "note": note}
    if result:
        out.update(
            {
                "localQueue": result.local_queue,
                "clusterQueue": result.cluster_queue,
                "flavor": result.flavor,
                "requests": result.requests,
                "quotaHolds": result.admitted,
                "borrowing": result.borrowing,
                "reasons": result.reasons,
            }
        )
    return out


def _template(
    platform: RenderedPlatform,
    admitted: AdmissionResult,
    stage: dict[str, Any],
    t: PodTemplate,
    ns: str,
    queued: FlavorResult | None,
) -> Entry:
    obj = admitted.object
    meta = obj.get("metadata") or {}
    entry = Entry(obj["kind"], meta.get("name", ""), ns, t.display, pods=t.count, stages=[dict(stage)])
    if admitted.denied:
        entry.denied, entry.schedulable = admitted.denied, False
        entry.resources = _resources(
            (get_path(obj, t.path) or {}).get("spec") or {} if t.path else obj.get("spec") or {}
        )
        return entry
    obj = copy.deepcopy(obj)
    job_like = obj["kind"] != "Pod" and KINDS[obj["kind"]].suspend is not None
    if job_like and _job_queue(platform, entry, obj, t, queued) is False:
        return entry
    pod = obj if t.path == () else with_default_requests(pod_from_template(obj, t, ns))
    if t.path != ():
        result = platform.chain.admit(pod, _request(platform, pod, ns, parent=obj), _check_templates)
        entry.stages.append(_admission_stage("pod admission", pod, result))
        pod = result.object
        if result.denied:
            entry.denied, entry.schedulable = result.denied, False
            entry.resources = _resources(pod.get("spec") or {})
            return entry
    if pod.get("spec") is None:
        pod["spec"] = {}
    spec = pod["spec"]
    if (
        not job_like
        and platform.kueue
        and any(g.get("name") == ADMISSION_GATE for g in spec.get("schedulingGates") or [])
    ):
        _pod_queue(platform, entry, obj, pod, ns)
    elif not job_like:
        entry.outside_quota = platform.kueue is not None
        entry.stages.append(
            _kueue_stage(
                None,
                "Kueue is not installed"
                if platform.kueue is None
                else "not managed by Kueue: the pods start outside the team's quota",
            )
        )
    entry.resources = _resources(spec)
    _schedule(platform, entry, pod, t)
    return entry


def _job_queue(
    platform: RenderedPlatform, entry: Entry, obj: dict[str, Any], t: PodTemplate, result: FlavorResult | None
) -> Any:
    """A job-like workload: Kueue admits the suspended job on a flavor and merges it into the template."""
    if result is None:
        why = (
            "Kueue is not installed"
            if platform.kueue is None
            else "not suspended at creation: the job starts at once, outside the team's quota"
        )
        entry.outside_quota = platform.kueue is not None
        entry.stages.append(_kueue_stage(None, why))
        return None
    tmpl = get_path(obj, t.path)
    if tmpl.get("spec") is None:
        tmpl["spec"] = {}
    spec = tmpl["spec"]
    _record_queue(entry, result)
    if not result.admitted:
        entry.stages.append(_kueue_stage(result, "stays suspended: Kueue cannot admit it"))
        entry.schedulable = False
        return False
    conflict = merge_podset_info(spec, result)
    note = (
        f"admitted on flavor {result.flavor}; unsuspended with the flavor's node labels and tolerations"
        if result.flavor
        else "admitted with the workload; unsuspended"
    )
    entry.stages.append(_kueue_stage(result, conflict or note))
    if conflict:
        entry.schedulable = False
        return False
    return result


def _pod_queue(platform: RenderedPlatform, entry: Entry, obj: dict[str, Any], pod: dict[str, Any], ns: str) -> None:
    """A gated pod (plain pods and the pod-based integrations): Kueue admits it, then ungates it."""
    if platform.kueue is None:
        return
    result = assign_flavor(platform.kueue, ns, _queue_of(pod, obj), pod["spec"], entry.pods)
    _record_queue(entry, result)
    if not result.admitted:
        entry.stages.append(_kueue_stage(result, "stays gated: Kueue cannot admit it"))
        return
    conflict = merge_podset_info(pod["spec"], result)
    entry.stages.append(
        _kueue_stage(
            result,
            conflict or f"admitted on flavor {result.flavor}; ungated with the flavor's node labels and tolerations",
        )
    )


def _record_queue(entry: Entry, result: FlavorResult) -> None:
    entry.local_queue, entry.cluster_queue, entry.flavor = (
        result.local_queue or None,
        result.cluster_queue,
        result.flavor,
    )


def _schedule(platform: RenderedPlatform, entry: Entry, pod: dict[str, Any], t: PodTemplate) -> None:
    spec = pod["spec"]
    name = spec.get("priorityClassName")
    entry.priority_class = name
    entry.priority = platform.priority_classes.get(name) if name else spec.get("priority")
    entry.stages.append(
        {
            "stage": "priority",
            "priorityClass": name,
            "value": entry.priority,
            "note": None
            if not name or name in platform.priority_classes
            else f"PriorityClass {name} is not rendered by the platform",
        }
    )
    if any(g.get("name") == ADMISSION_GATE for g in spec.get("schedulingGates") or []):
        entry.schedulable = False
        entry.stages.append({"stage": "scheduler", "note": f"gated by {ADMISSION_GATE} until Kueue admits it"})
        return
    requests = pod_requests(spec)
    if not requests:
        entry.schedulable, entry.outside_quota = True, False
        entry.stages.append(
            {
                "stage": "scheduler",
                "note": f"no {NVIDIA_RESOURCE_PREFIX}* request: runs outside the GPU pools "
                "(CPU nodes are not modelled)",
            }
        )
        return
    verdicts = schedule(platform.nodes, spec)
    fits = [v.pool for v in verdicts if v.fits]
    entry.pool = fits[0] if fits else None
    entry.schedulable = bool(fits)
    scheduler = spec.get("schedulerName") or "default-scheduler"
    other = (
        ""
        if scheduler == "default-scheduler"
        else (
            f"; scheduled by {scheduler}: its queues and gangs are not modelled, only the node filters it shares "
            "with kube-scheduler"
        )
    )
    entry.stages.append(
        {
            "stage": "scheduler",
            "scheduler": scheduler,
            "requests": requests,
            "pools": [{"pool": v.pool, "fits": v.fits, "reason": v.reason} for v in verdicts],
            "notModelled": NOT_MODELLED + other,
        }
    )
    if entry.pool:
        per_pod = sum(platform.unit_hourly(entry.pool, r) * n for r, n in requests.items())
        entry.hourly = per_pod * t.count
        entry.stages.append(
            {
                "stage": "cost",
                "pool": entry.pool,
                "hourlyPerPod": round(per_pod, 4),
                "pods": t.count,
                "hourly": round(entry.hourly, 4),
            }
        )
