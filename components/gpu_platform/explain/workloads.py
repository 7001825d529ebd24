"""The workload kinds explain models: their API, Kueue integration, suspend field and pod templates.

A template is found by a path of keys into the object; the Pod a controller creates from it carries the
template's labels and annotations, its spec, the namespace and an owner reference to the controller's kind.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..catalog.resources import NVIDIA_RESOURCE_PREFIX
from .quantity import QuantityError, parse_quantity

__all__ = [
    "KINDS",
    "PodTemplate",
    "WorkloadKind",
    "container_requests",
    "get_path",
    "pod_from_template",
    "pod_requests",
    "pod_templates",
    "with_default_requests",
]


@dataclass(frozen=True)
class WorkloadKind:
    """A modelled kind: API group, versions, plural resource, Kueue integration name, suspend field."""

    kind: str
    group: str
    versions: tuple[str, ...]
    resource: str
    framework: str  # Kueue 0.19.2 integration name (charts/kueue/values.yaml integrations.frameworks)
    suspend: tuple[str, ...] | None  # the job's suspend field; None: Kueue gates the pods instead
    pod_owner: str  # the kind of the object that owns the pods (its controller)


# Suspend fields: batch/v1 JobSpec.suspend, jobset v1alpha2 JobSetSpec.suspend, kubeflow v1
# RunPolicy.suspend, kuberay v1 RayJobSpec.suspend; the pod-based integrations (pod, deployment, statefulset,
# leaderworkerset) gate pods instead (kueue v0.19.2 pkg/controller/jobs/*/..._webhook.go Default).
KINDS: dict[str, WorkloadKind] = {
    k.kind: k
    for k in (
        WorkloadKind("Pod", "", ("v1",), "pods", "pod", None, ""),
        WorkloadKind("Job", "batch", ("v1",), "jobs", "batch/job", ("spec", "suspend"), "Job"),
        WorkloadKind(
            "JobSet", "jobset.x-k8s.io", ("v1alpha2",), "jobsets", "jobset.x-k8s.io/jobset", ("spec", "suspend"), "Job"
        ),
        WorkloadKind(
            "PyTorchJob",
            "kubeflow.org",
            ("v1",),
            "pytorchjobs",
            "kubeflow.org/pytorchjob",
            ("spec", "runPolicy", "suspend"),
            "PyTorchJob",
        ),
        WorkloadKind("RayJob", "ray.io", ("v1",), "rayjobs", "ray.io/rayjob", ("spec", "suspend"), "RayCluster"),
        WorkloadKind("Deployment", "apps", ("v1",), "deployments", "deployment", None, "ReplicaSet"),
        WorkloadKind("StatefulSet", "apps", ("v1",), "statefulsets", "statefulset", None, "StatefulSet"),
        WorkloadKind(
            "LeaderWorkerSet",
            "leaderworkerset.x-k8s.io",
            ("v1",),
            "leaderworkersets",
            "leaderworkerset.x-k8s.io/leaderworkerset",
            None,
            "StatefulSet",
        ),
    )
}


@dataclass(frozen=True)
class PodTemplate:
    """One pod template of a workload: where it is, its role name and how many pods it makes."""

    path: tuple[str | int, ...]  # keys into the workload object; () for a Pod itself
    role: str
    count: int

    @property
    def display(self) -> str:
        """The path as people write it: `spec.replicatedJobs[0].template.spec.template`."""
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
        return out or "(the pod)"


def get_path(obj: Any, path: tuple[str | int, ...]) -> Any:
    """The value at `path`, or None when any step is missing."""
    for p in path:
        if isinstance(p, int):
            obj = obj[p] if isinstance(obj, list) and p < len(obj) else None
        else:
            obj = obj.get(p) if isinstance(obj, dict) else None
        if obj is None:
            return None
    return obj


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def pod_templates(obj: dict[str, Any]) -> list[PodTemplate]:
    """Every pod template of a modelled workload, with the pod count Kueue's PodSet would carry."""
    kind, spec = obj.get("kind"), obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    if kind == "Pod":
        return [PodTemplate((), "main", 1)]
    if kind == "Job":
        return [PodTemplate(("spec", "template"), "main", _int(spec.get("parallelism"), 1))]
    if kind in ("Deployment", "StatefulSet"):
        return [PodTemplate(("spec", "template"), "main", _int(spec.get("replicas"), 1))]
    if kind == "JobSet":
        jobs = spec.get("replicatedJobs")
        return [
            PodTemplate(
                ("spec", "replicatedJobs", i, "template", "spec", "template"),
                str(r.get("name", i)),
                _int(r.get("replicas"), 1) * _int(get_path(r, ("template", "spec", "parallelism")), 1),
            )
            for i, r in enumerate(jobs if isinstance(jobs, list) else [])
            if isinstance(r, dict)
        ]
    if kind == "PyTorchJob":
        roles = spec.get("pytorchReplicaSpecs")
        return [
            PodTemplate(
                ("spec", "pytorchReplicaSpecs", role, "template"), str(role).lower(), _int(r.get("replicas"), 1)
            )
            for role, r in (roles.items() if isinstance(roles, dict) else ())
            if isinstance(r, dict)
        ]
    if kind == "RayJob":
        out = [PodTemplate(("spec", "rayClusterSpec", "headGroupSpec", "template"), "head", 1)]
        workers = get_path(spec, ("rayClusterSpec", "workerGroupSpecs"))
        workers = workers if isinstance(workers, list) else []
        return out + [
            PodTemplate(
                ("spec", "rayClusterSpec", "workerGroupSpecs", i, "template"),
                str(w.get("groupName", i)),
                _int(w.get("replicas"), 1),
            )
            for i, w in enumerate(workers)
            if isinstance(w, dict)
        ]
    if kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate")
        lwt = lwt if isinstance(lwt, dict) else {}
        replicas, size = _int(spec.get("replicas"), 1), max(_int(lwt.get("size"), 1), 1)
        out = []
        if lwt.get("leaderTemplate"):
            out.append(PodTemplate(("spec", "leaderWorkerTemplate", "leaderTemplate"), "leader", replicas))
            size -= 1
        return out + [PodTemplate(("spec", "leaderWorkerTemplate", "workerTemplate"), "worker", replicas * size)]
    return []


def pod_from_template(obj: dict[str, Any], template: PodTemplate, namespace: str) -> dict[str, Any]:
    """The Pod the workload's controller creates from one template (a Pod: itself, in `namespace`)."""
    if template.path == ():
        pod = copy.deepcopy(obj)
        pod.setdefault("metadata", {})["namespace"] = namespace
        return pod
    tmpl = get_path(obj, template.path) or {}
    meta = tmpl.get("metadata") or {}
    name = (obj.get("metadata") or {}).get("name", "workload")
    owner = KINDS[obj["kind"]].pod_owner
    metadata: dict[str, Any] = {
        "name": f"{name}-{template.role}-0",
        "namespace": namespace,
        "labels": dict(meta.get("labels") or {}),
        "ownerReferences": [{"apiVersion": "v1", "kind": owner, "name": name, "uid": "explain", "controller": True}],
    }
    if meta.get("annotations"):
        metadata["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": copy.deepcopy(tmpl.get("spec") or {})}


def with_default_requests(pod: dict[str, Any]) -> dict[str, Any]:
    """A Pod as the API server decodes it: a container's missing requests default to its limits.

    kubernetes v1.33.0 pkg/apis/core/v1/defaults.go SetDefaults_Pod (Pods only, not pod templates).
    """
    pod = copy.deepcopy(pod)
    spec = pod.get("spec") or {}
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            res = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and isinstance(res.get("limits"), dict):
                requests = res.setdefault("requests", {})
                for k, v in res["limits"].items():
                    requests.setdefault(k, v)
    return pod


def _quantity(value: Any) -> float:
    """A quantity's value (`quantity.parse_quantity`: `1k` is 1000), NaN for one the API server refuses."""
    try:
        return float(parse_quantity(value))
    except QuantityError:
        return float("nan")


def container_requests(container: dict[str, Any]) -> dict[str, Any]:
    """A container's requests, its limits standing in for missing ones (Kueue and Pod defaulting agree)."""
    res = container.get("resources") or {}
    return {**(res.get("limits") or {}), **(res.get("requests") or {})}


def pod_requests(spec: dict[str, Any], prefix: str = NVIDIA_RESOURCE_PREFIX) -> dict[str, float]:
    """Pod request of each `prefix` resource: max(sum over containers, max over init containers).

    kubernetes/component-helpers v0.33.0 resource/helpers.go PodRequests, used by kubernetes v1.33.0
    pkg/scheduler/framework/plugins/noderesources/fit.go (restartable init containers are not modelled).
    """
    total: dict[str, float] = {}
    for c in spec.get("containers") or []:
        for k, v in container_requests(c).items():
            if k.startswith(prefix):
                total[k] = total.get(k, 0) + _quantity(v)
    for c in spec.get("initContainers") or []:
        for k, v in container_requests(c).items():
            if k.startswith(prefix):
                total[k] = max(total.get(k, 0), _quantity(v))
    return total
