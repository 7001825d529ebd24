"""Admission requests run through explain's admission chain: the dev stack's namespaces, sample pods, and a deny
policy's verdict (shared by the admission, links, node pool and job tests)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from gpu_platform.admission.render import DENY_POLICY
from gpu_platform.explain.admission import Request, build_chain, constraints_match
from gpu_platform.explain.workloads import KINDS, WorkloadKind
from gpu_platform.load import parse_spec, read_spec_data
from gpu_platform.queues.render import render_namespaces

DEV_STACK = Path(__file__).resolve().parents[2] / "Pulumi.dev.yaml"

__all__ = [
    "NAMESPACES",
    "QUEUE",
    "TIER",
    "admit",
    "gpu_pod",
    "matches",
    "mutate",
    "namespace_object",
    "request",
    "validate",
]

TIER = "gpu.example.com/gpu-tier"
QUEUE = "kueue.x-k8s.io/queue-name"
_NAME_LABEL = "kubernetes.io/metadata.name"


def _dev_namespaces() -> dict[str, Any]:
    return {d["metadata"]["name"]: d for d in render_namespaces(parse_spec(read_spec_data(DEV_STACK)))}


NAMESPACES = _dev_namespaces()


def namespace_object(namespace, namespaces=None):
    """The namespace as the platform labels it (a team namespace of the dev stack unless `namespaces`, the
    rendered Namespaces of another spec, are given), or a bare one; the API server adds the name label."""
    known = NAMESPACES if namespaces is None else {d["metadata"]["name"]: d for d in namespaces}
    ns = copy.deepcopy(
        known.get(namespace) or {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    ns["metadata"].setdefault("labels", {})[_NAME_LABEL] = namespace
    return ns


def _kind(obj):
    group, _, version = obj["apiVersion"].rpartition("/")
    known = KINDS.get(obj["kind"])
    if known and known.group == group:
        return known, version
    return WorkloadKind(obj["kind"], group, (version,), obj["kind"].lower() + "s", "", None, ""), version


def request(obj, namespace, old=None, namespaces=None):
    """The admission request of a CREATE of `obj` in `namespace` (an UPDATE from `old`)."""
    kind, version = _kind(obj)
    return Request(
        namespace,
        namespace_object(namespace, namespaces),
        kind,
        version,
        obj["metadata"].get("name", ""),
        old_object=old,
    )


def matches(doc, obj, operation="CREATE"):
    """The policy's resource rules match a CREATE (or an UPDATE) of `obj`."""
    rules = {"resourceRules": doc["spec"]["matchConstraints"]["resourceRules"]}
    old = obj if operation == "UPDATE" else None
    return constraints_match(rules, obj, request(obj, "research", old), rules_required=True)


def mutate(docs, obj, namespace, namespaces=None):
    """The object after every mutating policy of `docs`, run by explain's admission chain (no other webhook)."""
    return build_chain(docs, []).mutate(obj, request(obj, namespace, namespaces=namespaces)).object


def validate(docs, pod, namespace, old=None, policy_name=DENY_POLICY, namespaces=None):
    """A deny policy's verdict on a CREATE (or an UPDATE from `old`): None when admitted, else its message."""
    policy = next(d for d in docs if d["kind"] == "ValidatingAdmissionPolicy" and d["metadata"]["name"] == policy_name)
    bindings = [
        d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding" and d["spec"]["policyName"] == policy_name
    ]
    result = build_chain([policy, *bindings], []).validate(pod, request(pod, namespace, old, namespaces))
    return next((s.message for s in result.steps if s.denied), None)


def admit(docs, pod, namespace):
    return validate(docs, mutate(docs, pod, namespace), namespace)


def gpu_pod(labels=None, resources=None, **spec):
    res = resources or {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": labels or {}},
        "spec": {"containers": [{"name": "main", "image": "python:3.11", "resources": res}], **spec},
    }
