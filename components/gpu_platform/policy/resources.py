"""Resources as the policy engine presents them: from `synth` artifacts, `pulumi stack export` or `preview --json`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..artifacts import Artifact, ArtifactKind

__all__ = ["StackResource", "UnsupportedDocumentError", "from_artifacts", "from_document"]


class UnsupportedDocumentError(ValueError):
    """A document is neither a stack export nor a preview."""


@dataclass
class StackResource:
    """One resource: Pulumi type token, URN, name and the properties the policies read."""

    type: str
    urn: str
    name: str
    props: dict[str, Any]
    parent: str | None = None
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)

    @property
    def resource_type(self) -> str:
        """The type token, under the name policy resources use."""
        return self.type


def _urn(stack: str, rtype: str, name: str) -> str:
    return f"urn:pulumi:{stack}::gpu-platform::{rtype}::{name}"


def k8s_type_token(api_version: str, kind: str) -> str:
    """Pulumi type token of a Kubernetes object: `kubernetes:<group or core>/<version>:<Kind>`."""
    group, _, version = api_version.rpartition("/")
    return f"kubernetes:{group or 'core'}/{version}:{kind}"


def _helm_props(doc: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {k: doc[k] for k in ("name", "chart", "version", "namespace", "values") if k in doc}
    if doc.get("repository"):
        props["repositoryOpts"] = {"repo": doc["repository"]}
    return props


def from_artifacts(artifacts: list[Artifact], stack: str = "dev") -> list[StackResource]:
    """What the engine would be shown for every rendered artifact (node pools, Kubernetes objects, Helm releases).

    An object written twice (a Karpenter NodePool is both a pool and a Kubernetes document) is one resource."""
    return _distinct(_from_artifacts(artifacts, stack))


def _distinct(resources: list[StackResource]) -> list[StackResource]:
    seen: set[tuple[str, str]] = set()
    out = []
    for r in resources:
        key = (r.type, json.dumps(r.props, sort_keys=True, default=str))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _from_artifacts(artifacts: list[Artifact], stack: str) -> list[StackResource]:
    out: list[StackResource] = []
    for a in artifacts:
        for doc in a.documents:
            if a.kind == ArtifactKind.NODEPOOLS and "type" in doc:
                out.extend(_node_pool_resources(doc, stack))
                continue
            if a.kind == ArtifactKind.HELM:
                rtype, name, props = "kubernetes:helm.sh/v3:Release", doc["name"], _helm_props(doc)
            elif a.kind == ArtifactKind.KUBERNETES and "kind" in doc:
                rtype = k8s_type_token(doc["apiVersion"], doc["kind"])
                meta = doc.get("metadata", {})
                name = "-".join(x for x in (meta.get("namespace"), meta.get("name")) if x)
                props = doc
            else:
                continue
            out.append(StackResource(rtype, _urn(stack, rtype, name), name, props))
    return out


def _node_pool_resources(doc: dict[str, Any], stack: str) -> list[StackResource]:
    """A rendered pool and its companion resources (launch template ...), children named `<pool>-<role>`."""
    name = str(doc.get("name"))
    main = StackResource(doc["type"], _urn(stack, doc["type"], name), name, dict(doc.get("inputs") or {}))
    out = [main]
    for sub in doc.get("resources") or []:
        if not isinstance(sub.get("inputs"), dict):
            continue  # e.g. one tag resource per list item: nothing the policies read
        sub_name = f"{name}-{sub.get('role', 'child')}"
        child = StackResource(sub["type"], _urn(stack, sub["type"], sub_name), sub_name, dict(sub["inputs"]))
        out.append(child)
        if sub["type"] == "aws:ec2/launchTemplate:LaunchTemplate" and "launchTemplate" in main.props:
            # The node group's launchTemplate.id is this template's output: the engine records the dependency.
            main.property_dependencies.setdefault("launchTemplate", []).append(child.urn)
            main.dependencies.append(child.urn)
    return out


def _check_state(state: Any, where: str) -> None:
    """Raise UnsupportedDocumentError when a resource state has the wrong shape for the fields the pack reads."""
    if not isinstance(state, dict):
        raise UnsupportedDocumentError(f"{where} is {_kind(state)}; expected a resource object")
    for key, want, ok in _STATE_FIELDS:
        if key in ("type", "urn") and key not in state:
            raise UnsupportedDocumentError(f"{where} has no {key!r}; expected {want}")
        if key in state and not ok(state[key]):
            value = state[key]
            shown = _kind(value)
            if isinstance(value, list | dict) and value:
                inner = next(iter(value.values() if isinstance(value, dict) else value))
                shown += f" holding {_kind(inner)}"
            raise UnsupportedDocumentError(f"{where}.{key} is {shown}; expected {want}")


_STATE_FIELDS: tuple[tuple[str, str, Callable[[Any], bool]], ...] = (
    ("type", "a string", lambda v: isinstance(v, str)),
    ("urn", "a string", lambda v: isinstance(v, str)),
    ("id", "a string", lambda v: v is None or isinstance(v, str)),
    ("parent", "a string", lambda v: v is None or isinstance(v, str)),
    ("inputs", "an object", lambda v: v is None or isinstance(v, dict)),
    ("outputs", "an object", lambda v: v is None or isinstance(v, dict)),
    (
        "dependencies",
        "a list of URNs",
        lambda v: v is None or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
    ),
    (
        "propertyDependencies",
        "an object of URN lists",
        lambda v: (
            v is None
            or (
                isinstance(v, dict)
                and all(isinstance(x, list) and all(isinstance(u, str) for u in x) for x in v.values())
            )
        ),
    ),
)


def _kind(value: Any) -> str:
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def _from_state(state: dict[str, Any], prefer_outputs: bool) -> StackResource | None:
    rtype, urn = state.get("type", ""), state.get("urn", "")
    if not rtype or rtype.startswith("pulumi:"):
        return None  # the stack itself and providers
    inputs, outputs = state.get("inputs") or {}, state.get("outputs") or {}
    props = {**inputs, **outputs} if prefer_outputs else {**outputs, **inputs}
    if state.get("id"):
        props.setdefault("id", state["id"])
    deps = {k: list(v) for k, v in (state.get("propertyDependencies") or {}).items()}
    return StackResource(
        rtype, urn, urn.rsplit("::", 1)[-1], props, state.get("parent"), list(state.get("dependencies") or []), deps
    )


# Preview steps whose resource will not exist after the update (a replaced resource's old copy, discards).
_GONE_OPS = frozenset({"delete", "delete-replaced", "discard", "read-discard", "remove-pending-replace"})


def _unique(states: list[dict[str, Any]]) -> list[StackResource]:
    """One resource per URN (the last state wins: a replacement's new copy), in first-seen order."""
    by_urn: dict[str, StackResource] = {}
    for s in states:
        if r := _from_state(s, prefer_outputs=False):
            by_urn.pop(r.urn, None)
            by_urn[r.urn] = r
    return list(by_urn.values())


_EXPECTED = (
    "expected a `pulumi stack export` document (with deployment.resources) or a `pulumi preview --json` "
    "document (with steps[].newState)"
)


class TooManyResourcesError(UnsupportedDocumentError):
    """A document holds more resources than the caller checks."""


def _check_count(count: int, where: str, limit: int | None) -> None:
    if limit is not None and count > limit:
        raise TooManyResourcesError(
            f"{where} holds {count:,} entries, more than the {limit:,} `gpu-platform audit` "
            "checks (about 10 s); run the pack during `pulumi preview --policy-pack` for a "
            "stack this large, or audit a preview of part of it"
        )


def from_document(doc: Any, max_resources: int | None = None) -> list[StackResource]:
    """Resources of a `pulumi stack export` (deployment.resources) or `pulumi preview --json` (steps[].newState).

    Raises UnsupportedDocumentError, naming the first field with the wrong shape, for anything else: an empty
    `deployment`, a resource without a URN, inputs that are not an object ...; TooManyResourcesError (before any
    resource is read) when there are more than `max_resources` resource states or preview steps.
    """
    if isinstance(doc, dict) and isinstance(doc.get("deployment"), dict):
        deployment = doc["deployment"]
        states = deployment.get("resources")
        if states is None and not isinstance(deployment.get("manifest"), dict):
            raise UnsupportedDocumentError(f"deployment has neither resources nor a manifest (truncated?); {_EXPECTED}")
        if states is not None and not isinstance(states, list):
            raise UnsupportedDocumentError(f"deployment.resources is {_kind(states)}; expected a list")
        _check_count(len(states or []), "deployment.resources", max_resources)
        for i, s in enumerate(states or []):
            _check_state(s, f"deployment.resources[{i}]")
        return _unique([s for s in states or [] if not s.get("delete")])  # pending deletes
    if isinstance(doc, dict) and isinstance(doc.get("steps"), list):
        _check_count(len(doc["steps"]), "steps", max_resources)
        kept = []
        for i, step in enumerate(doc["steps"]):
            if not isinstance(step, dict):
                raise UnsupportedDocumentError(f"steps[{i}] is {_kind(step)}; expected a step object")
            if step.get("op") in _GONE_OPS or not step.get("newState"):
                continue
            _check_state(step["newState"], f"steps[{i}].newState")
            kept.append(step["newState"])
        return _unique(kept)
    raise UnsupportedDocumentError(_EXPECTED)
