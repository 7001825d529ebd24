"""Kueue as explain sees it at admission: its installation, read from the rendered objects (the Helm release
values' manager configuration and webhook reinvocation policy, ResourceFlavors, ClusterQueues, LocalQueues), and
its mutating webhook's effect (`flavors` assigns the flavor once the Workload exists).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import jsonpatch
import yaml

from ..contract import NAMESPACE_NAME_LABEL, SYSTEM_NAMESPACE
from ..queues.kueue import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from ..spec import KueueSpec
from .admission import Hook, Request, Step
from .selectors import label_selector_matches
from .workloads import KINDS, get_path, pod_templates

__all__ = ["ADMISSION_GATE", "KueueSetup", "kueue_hook", "kueue_setup"]

ADMISSION_GATE = "kueue.x-k8s.io/admission"  # kueue v0.19.2 pkg/controller/jobs/pod/constants SchedulingGateName
_MANAGED_LABEL = "kueue.x-k8s.io/managed"  # pkg/constants/constants.go ManagedByKueueLabelKey (also the finalizer)
_SUSPENDED_BY_PARENT = "kueue.x-k8s.io/pod-suspending-parent"  # pod/constants SuspendedByParentAnnotation


@dataclass(frozen=True)
class KueueSetup:
    """The rendered Kueue installation: webhook settings, manager configuration and queue objects."""

    webhook_configuration: str
    reinvocation: str
    frameworks: tuple[str, ...]
    manage_without_queue_name: bool
    namespace_selector: dict[str, Any]
    exclude_prefixes: tuple[str, ...]
    flavors: dict[str, dict[str, Any]]
    cluster_queues: dict[str, dict[str, Any]]
    local_queues: dict[tuple[str, str], dict[str, Any]]


def kueue_setup(release: dict[str, Any] | None, objects: list[dict[str, Any]]) -> KueueSetup | None:
    """Read the Kueue release values and objects, or None when Kueue is not installed.

    The webhook configuration is `<fullname>-mutating-webhook-configuration` with each webhook's
    namespaceSelector the manager's managedJobsNamespaceSelector (else NotIn kube-system and the release
    namespace) and reinvocationPolicy `mutatingWebhook.reinvocationPolicy` (default Never): kueue v0.19.2
    charts/kueue/templates/webhook/manifests.yaml, charts/kueue/values.yaml.
    """
    if not release:
        return None
    values = release.get("values") or {}
    config = yaml.safe_load((values.get("managerConfig") or {}).get("controllerManagerConfigYaml") or "") or {}
    default_ns = {
        "matchExpressions": [
            {
                "key": NAMESPACE_NAME_LABEL,
                "operator": "NotIn",
                "values": [SYSTEM_NAMESPACE, release.get("namespace", KueueSpec.model_fields["namespace"].default)],
            }
        ]
    }
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for d in objects:
        by_kind.setdefault(d.get("kind", ""), []).append(d)
    return KueueSetup(
        webhook_configuration=f"{release.get('name', 'kueue')}-mutating-webhook-configuration",
        reinvocation=(values.get("mutatingWebhook") or {}).get("reinvocationPolicy", "Never"),
        frameworks=tuple((config.get("integrations") or {}).get("frameworks") or ()),
        manage_without_queue_name=bool(config.get("manageJobsWithoutQueueName", False)),
        namespace_selector=config.get("managedJobsNamespaceSelector") or default_ns,
        exclude_prefixes=tuple((config.get("resources") or {}).get("excludeResourcePrefixes") or ()),
        flavors={d["metadata"]["name"]: d for d in by_kind.get("ResourceFlavor", [])},
        cluster_queues={d["metadata"]["name"]: d for d in by_kind.get("ClusterQueue", [])},
        local_queues={
            (d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in by_kind.get("LocalQueue", [])
        },
    )


def _map_at(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]` as a mutable map (absent or null: a new empty one)."""
    if parent.get(key) is None:
        parent[key] = {}
    found: dict[str, Any] = parent[key]
    return found


def _labels(meta: dict[str, Any]) -> dict[str, str]:
    return _map_at(meta, "labels")


def _owned_by_managed(obj: dict[str, Any], setup: KueueSetup, parent: dict[str, Any] | None = None) -> bool:
    """Kueue v0.19.2 pkg/controller/jobframework FindAncestorJobManagedByKueue: an ancestor of an enabled
    integration that Kueue manages (a queue-name label, or manageJobsWithoutQueueName). With the workload that
    created the pod known, it is checked; otherwise a controller of an enabled integration's kind counts."""
    if parent is not None:
        kind = KINDS.get(parent.get("kind", ""))
        labels = (parent.get("metadata") or {}).get("labels") or {}
        return bool(
            kind
            and kind.framework in setup.frameworks
            and (labels.get(QUEUE_NAME_LABEL) or setup.manage_without_queue_name)
        )
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        kind = KINDS.get(ref.get("kind", ""))
        if ref.get("controller") and kind and kind.framework in setup.frameworks:
            return True
        if ref.get("controller") and ref.get("kind") == "Job" and "batch/job" in setup.frameworks:
            return True
    return False


def _should_suspend(obj: dict[str, Any], setup: KueueSetup) -> bool:
    """Kueue v0.19.2 pkg/controller/jobframework/utils.go WorkloadShouldBeSuspended (namespace already matched)."""
    if _owned_by_managed(obj, setup):
        return False
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(QUEUE_NAME_LABEL)) or setup.manage_without_queue_name


def _suspend_job(obj: dict[str, Any], path: tuple[str, ...]) -> None:
    target = obj
    for p in path[:-1]:
        target = _map_at(target, p)
    target[path[-1]] = True


def _gate_template_parent(obj: dict[str, Any], framework: str, with_labels: bool) -> None:
    """Deployment / StatefulSet / LeaderWorkerSet webhooks: mark the pod templates as suspended by the parent.

    kueue v0.19.2 pkg/controller/jobs/deployment/deployment_webhook.go, statefulset/statefulset_webhook.go,
    leaderworkerset/leaderworkerset_webhook.go Default.
    """
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for t in pod_templates(obj):
        tmpl = get_path(obj, t.path)
        if not isinstance(tmpl, dict):
            continue
        meta = _map_at(tmpl, "metadata")
        _map_at(meta, "annotations")[_SUSPENDED_BY_PARENT] = framework
        if with_labels:
            if obj["kind"] == "Deployment":
                _labels(meta)[_MANAGED_LABEL] = "true"
            for key in (QUEUE_NAME_LABEL, PRIORITY_CLASS_LABEL):
                if labels.get(key):
                    _labels(meta)[key] = labels[key]


def _gate_pod(pod: dict[str, Any], setup: KueueSetup, parent: dict[str, Any] | None) -> None:
    """Kueue v0.19.2 pkg/controller/jobs/pod/pod_webhook.go Default: managed label, finalizer, admission gate."""
    meta = _map_at(pod, "metadata")
    by_parent = _SUSPENDED_BY_PARENT in (meta.get("annotations") or {})
    if not by_parent:
        if _owned_by_managed(pod, setup, parent):
            return
        if not (_labels(meta).get(QUEUE_NAME_LABEL) or setup.manage_without_queue_name):
            return
        _labels(meta)[_MANAGED_LABEL] = "true"
        finalizers = list(meta.get("finalizers") or [])
        meta["finalizers"] = finalizers + ([] if _MANAGED_LABEL in finalizers else [_MANAGED_LABEL])
    spec = _map_at(pod, "spec")
    gates = spec["schedulingGates"] = list(spec.get("schedulingGates") or [])
    if not any(g.get("name") == ADMISSION_GATE for g in gates):
        gates.append({"name": ADMISSION_GATE})


def _default(obj: dict[str, Any], setup: KueueSetup, parent: dict[str, Any] | None) -> dict[str, Any]:
    """The object after Kueue's defaulting webhook for its kind."""
    kind = KINDS[obj["kind"]]
    new = copy.deepcopy(obj)
    if kind.kind == "Pod":
        _gate_pod(new, setup, parent)
    elif _should_suspend(new, setup):
        if kind.suspend:
            _suspend_job(new, kind.suspend)
        else:
            _gate_template_parent(new, kind.framework, kind.kind != "StatefulSet")
    return new


def _unchanged(obj: dict[str, Any], req: Request, setup: KueueSetup) -> str:
    """Why Kueue's webhook left the object as it was."""
    kind = req.kind
    gated = any(g.get("name") == ADMISSION_GATE for g in get_path(obj, ("spec", "schedulingGates")) or [])
    if (kind.suspend and get_path(obj, kind.suspend) is True) or gated:
        return "already held for Kueue"
    if _owned_by_managed(obj, setup, req.parent):
        return "not held: Kueue manages the workload that owns it"
    return "not held: no queue-name label and manageJobsWithoutQueueName is off"


def kueue_hook(setup: KueueSetup) -> Hook:
    """Kueue's mutating webhook configuration as a hook of the admission chain."""

    def call(obj: dict[str, Any], req: Request) -> tuple[dict[str, Any], list[Step]]:
        ns_labels = (req.namespace_object.get("metadata") or {}).get("labels") or {}
        if req.kind.framework not in setup.frameworks or not label_selector_matches(
            setup.namespace_selector, ns_labels
        ):
            return obj, []
        new = _default(obj, setup, req.parent)
        ops = jsonpatch.make_patch(obj, new).patch
        return new, [
            Step(
                "MutatingAdmissionWebhook",
                f"m{req.kind.kind.lower()}.kb.io",
                setup.webhook_configuration,
                patches=ops,
                note=None if ops else _unchanged(new, req, setup),
            )
        ]

    return Hook("MutatingAdmissionWebhook", setup.webhook_configuration, setup.reinvocation, call)
