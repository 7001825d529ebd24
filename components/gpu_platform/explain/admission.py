"""A generic admission chain: whatever MutatingAdmissionPolicies, webhooks (Kyverno MutatingPolicies, Kueue)
and ValidatingAdmissionPolicies the platform renders, run in the API server's order on one object.

Order (kubernetes v1.33.0 pkg/kubeapiserver/options/plugins.go AllOrderedPlugins): the MutatingAdmissionPolicy
plugin, then MutatingAdmissionWebhook (configurations called sorted by name: k8s.io/apiserver v0.33.0
pkg/admission/plugin/webhook/mutating/dispatcher.go over the sorted hook list), then one reinvocation of the
hooks with `reinvocationPolicy: IfNeeded` that ran before a later change (k8s.io/apiserver v0.33.0
pkg/admission/reinvocation.go, pkg/admission/plugin/webhook/mutating/reinvocationcontext.go), then
ValidatingAdmissionPolicy on the final object. Nothing here knows what a policy does: its CEL is evaluated.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonpatch

from .cel import CelError, activation, evaluate, to_plain
from .selectors import label_selector_matches
from .workloads import WorkloadKind

__all__ = ["AdmissionChain", "AdmissionResult", "Hook", "Request", "Step", "build_chain", "constraints_match"]

# kyverno v1.17.2 pkg/config/config.go MutatingWebhookConfigurationName: the configuration Kyverno registers for
# resource mutation; its webhooks are `reinvocationPolicy: IfNeeded` (pkg/controllers/webhook/controller.go
# buildResourceMutatingWebhookRules).
KYVERNO_WEBHOOK_CONFIGURATION = "kyverno-resource-mutating-webhook-cfg"
_MUTATING_KINDS = ("MutatingAdmissionPolicy",)


@dataclass(frozen=True)
class Request:
    """An admission request: namespace, its object, the kind, and the operation (CREATE unless an old object)."""

    namespace: str
    namespace_object: dict[str, Any]
    kind: WorkloadKind
    version: str
    name: str
    parent: dict[str, Any] | None = None  # the workload whose controller creates this pod, when known
    old_object: dict[str, Any] | None = None  # set for an UPDATE

    @property
    def operation(self) -> str:
        """CREATE, or UPDATE when there is an old object."""
        return "CREATE" if self.old_object is None else "UPDATE"

    def cel(self) -> dict[str, Any]:
        """`request` as CEL sees it (admission.k8s.io AdmissionRequest fields)."""
        k = self.kind
        return {
            "namespace": self.namespace,
            "operation": self.operation,
            "name": self.name,
            "kind": {"group": k.group, "version": self.version, "kind": k.kind},
            "resource": {"group": k.group, "version": self.version, "resource": k.resource},
            "subResource": "",
            "dryRun": False,
        }


@dataclass
class Step:
    """One admission hook or policy that matched: what it changed, or why it denied or was skipped."""

    plugin: str
    name: str
    via: str = ""  # the webhook configuration a Kyverno or Kueue hook runs in
    patches: list[dict[str, Any]] = field(default_factory=list)
    denied: str | None = None  # the API server's whole message
    note: str | None = None
    reinvoked: bool = False
    message: str | None = None  # the policy's own message (validations) or the error

    def to_json(self) -> dict[str, Any]:
        """The step in explain's JSON output."""
        out: dict[str, Any] = {"plugin": self.plugin, "name": self.name, "patches": self.patches}
        if self.via:
            out["webhookConfiguration"] = self.via
        for key in ("denied", "message", "note"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.reinvoked:
            out["reinvoked"] = True
        return out


@dataclass
class Hook:
    """A mutating hook: one MutatingAdmissionPolicy, or one webhook configuration (Kyverno, Kueue)."""

    plugin: str
    name: str
    reinvocation: str
    call: Callable[[dict[str, Any], Request], tuple[dict[str, Any], list[Step]]]


@dataclass
class AdmissionResult:
    """The object after admission, the steps that matched, and the denial message if any."""

    object: dict[str, Any]
    steps: list[Step]
    denied: str | None


def _rule_matches(rule: dict[str, Any], req: Request) -> bool:
    """One RuleWithOperations (k8s.io/apiserver v0.33.0 pkg/admission/plugin/webhook/predicates/rules/rules.go)."""

    def has(values: list[str] | None, value: str) -> bool:
        if not values:
            return False
        return "*" in values or value in values

    return (
        has(rule.get("operations"), req.operation)
        and has(rule.get("apiGroups"), req.kind.group)
        and has(rule.get("apiVersions"), req.version)
        and has(rule.get("resources"), req.kind.resource)
    )


def constraints_match(match: dict[str, Any] | None, obj: dict[str, Any], req: Request, rules_required: bool) -> bool:
    """MatchResources: resource rules (any), exclusions (none), namespace and object label selectors.

    k8s.io/apiserver v0.33.0 pkg/admission/plugin/policy/matching/matching.go Matcher.Matches; absent
    resourceRules in a binding mean "what the policy matches".
    """
    match = match or {}
    rules = match.get("resourceRules")
    if (rules is not None or rules_required) and not any(_rule_matches(r, req) for r in rules or []):
        return False
    if any(_rule_matches(r, req) for r in match.get("excludeResourceRules") or []):
        return False
    ns_labels = (req.namespace_object.get("metadata") or {}).get("labels") or {}
    obj_labels = (obj.get("metadata") or {}).get("labels") or {}
    return label_selector_matches(match.get("namespaceSelector"), ns_labels) and label_selector_matches(
        match.get("objectSelector"), obj_labels
    )


def _activation(obj: dict[str, Any], req: Request, variables: list[dict[str, str]] | None) -> dict[str, Any]:
    return activation(
        {
            "object": obj,
            "oldObject": req.old_object,
            "request": req.cel(),
            "namespaceObject": req.namespace_object,
            "params": None,
        },
        variables,
    )


def _conditions_hold(spec: dict[str, Any], obj: dict[str, Any], req: Request) -> bool:
    """matchConditions: all must be true (an error propagates to the failure policy)."""
    for cond in spec.get("matchConditions") or []:
        if not bool(evaluate(cond["expression"], _activation(obj, req, None))):
            return False
    return True


def _apply(obj: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 with python-jsonpatch; a failed operation is an error like the API server's."""
    try:
        patched: dict[str, Any] = jsonpatch.apply_patch(obj, ops)
        return patched
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError, IndexError) as e:
        raise CelError(str(ops), f"JSONPatch does not apply: {e}") from None


def _mutate(policy: dict[str, Any], obj: dict[str, Any], req: Request) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Each JSONPatch mutation in order, each seeing the object the previous ones produced.

    k8s.io/apiserver v0.33.0 pkg/admission/plugin/policy/mutating/dispatcher.go (variables are re-composed
    per mutation; ApplyConfiguration mutations are not modelled and raise).
    """
    spec, applied = policy["spec"], []
    for m in spec.get("mutations") or []:
        if m.get("patchType") != "JSONPatch":
            raise CelError("", f"patchType {m.get('patchType')!r} is not modelled (only JSONPatch)")
        ops = to_plain(evaluate(m["jsonPatch"]["expression"], _activation(obj, req, spec.get("variables"))))
        if ops:
            obj = _apply(obj, ops)
            applied += ops
    return obj, applied


def _run_mutating(
    policy: dict[str, Any], obj: dict[str, Any], req: Request, plugin: str, via: str
) -> tuple[dict[str, Any], Step | None]:
    """One mutating policy whose constraints and bindings matched: conditions, then mutations."""
    spec, name = policy["spec"], policy["metadata"]["name"]
    try:
        if not _conditions_hold(spec, obj, req):
            return obj, None
        new, ops = _mutate(policy, obj, req)
    except CelError as e:
        if spec.get("failurePolicy", "Fail") == "Ignore":
            return obj, Step(plugin, name, via, note=f"failed open (failurePolicy Ignore): {e.reason}")
        return obj, Step(plugin, name, via, denied=f"{plugin} '{name}' failed: {e.reason}", message=e.reason)
    return new, Step(plugin, name, via, patches=ops)


def _bound(
    policy: dict[str, Any], bindings: list[dict[str, Any]], obj: dict[str, Any], req: Request
) -> list[dict[str, Any]]:
    """The bindings of `policy` whose matchResources select the object (policy constraints checked too)."""
    if not constraints_match(policy["spec"].get("matchConstraints"), obj, req, rules_required=True):
        return []
    name = policy["metadata"]["name"]
    return [
        b
        for b in bindings
        if b["spec"].get("policyName") == name
        and constraints_match(b["spec"].get("matchResources"), obj, req, rules_required=False)
    ]


def _map_hook(policy: dict[str, Any], bindings: list[dict[str, Any]]) -> Hook:
    def call(obj: dict[str, Any], req: Request) -> tuple[dict[str, Any], list[Step]]:
        if not _bound(policy, bindings, obj, req):
            return obj, []
        new, step = _run_mutating(policy, obj, req, "MutatingAdmissionPolicy", "")
        return new, [step] if step else []

    return Hook(
        "MutatingAdmissionPolicy", policy["metadata"]["name"], policy["spec"].get("reinvocationPolicy", "Never"), call
    )


def _kyverno_hook(policies: list[dict[str, Any]]) -> Hook:
    """Kyverno's resource webhook: its MutatingPolicies one after the other, each on the previous result.

    kyverno v1.17.2 pkg/cel/policies/mpol/engine/engine.go Handle (policies in provider order, modelled as
    sorted by name; constraints include the policy's own namespace and object selectors).
    """

    def call(obj: dict[str, Any], req: Request) -> tuple[dict[str, Any], list[Step]]:
        steps = []
        for p in policies:
            if constraints_match(p["spec"].get("matchConstraints"), obj, req, rules_required=True):
                obj, step = _run_mutating(p, obj, req, "MutatingPolicy", KYVERNO_WEBHOOK_CONFIGURATION)
                steps += [step] if step else []
        return obj, steps

    return Hook("MutatingAdmissionWebhook", KYVERNO_WEBHOOK_CONFIGURATION, "IfNeeded", call)


@dataclass
class AdmissionChain:
    """Mutating hooks in the API server's order, then the validating policies and their bindings."""

    mutating: list[Hook]
    validating: list[dict[str, Any]]
    validating_bindings: list[dict[str, Any]]

    def admit(
        self, obj: dict[str, Any], req: Request, check: Callable[[dict[str, Any]], str | None] | None = None
    ) -> AdmissionResult:
        """Run the whole chain on `obj`: mutation (with reinvocation), the object's own validation (`check`, what
        the API server's registry validates between the two phases), then the validating policies."""
        mutated = self.mutate(obj, req)
        if mutated.denied:
            return mutated
        problem = check(mutated.object) if check else None
        if problem:
            denied = f'{req.kind.kind} "{req.name}" is invalid: {problem}'
            step = Step("validation", req.kind.kind, denied=denied, message=problem)
            return AdmissionResult(mutated.object, [*mutated.steps, step], denied)
        return self.validate(mutated.object, req, mutated.steps)

    def mutate(self, obj: dict[str, Any], req: Request) -> AdmissionResult:
        """The mutating phase only: every hook in order, then one reinvocation round."""
        obj, steps, after = copy.deepcopy(obj), [], {}
        for hook in self.mutating:
            obj, new = hook.call(obj, req)
            steps += new
            if any(s.denied for s in new):
                return AdmissionResult(obj, steps, next(s.denied for s in new if s.denied))
            after[hook.name] = copy.deepcopy(obj)
        obj, steps, denied = self._reinvoke(obj, req, steps, after)
        return AdmissionResult(obj, steps, denied)

    def _reinvoke(
        self, obj: dict[str, Any], req: Request, steps: list[Step], after: dict[str, dict[str, Any]]
    ) -> tuple[dict[str, Any], list[Step], str | None]:
        """Once more, in order, each IfNeeded hook that matched and was followed by a change."""
        called = {s.via or s.name for s in steps}
        again = [
            h for h in self.mutating if h.reinvocation == "IfNeeded" and h.name in called and after.get(h.name) != obj
        ]
        for hook in again:
            obj, new = hook.call(obj, req)
            for s in new:
                s.reinvoked = True
            steps += new
            denied = next((s.denied for s in new if s.denied), None)
            if denied:
                return obj, steps, denied
        return obj, steps, None

    def validate(self, obj: dict[str, Any], req: Request, steps: list[Step] | None = None) -> AdmissionResult:
        """The validating phase only: each ValidatingAdmissionPolicy through each of its matching bindings."""
        steps = list(steps or [])
        for policy in self.validating:
            for binding in _bound(policy, self.validating_bindings, obj, req):
                step = _validate_one(policy, binding, obj, req)
                if step:
                    steps.append(step)
                    if step.denied:
                        return AdmissionResult(obj, steps, step.denied)
        return AdmissionResult(obj, steps, None)


def _message(rule: dict[str, Any], act: dict[str, Any]) -> str:
    """messageExpression, else message, else the failed expression (validating/validator.go)."""
    if rule.get("messageExpression"):
        try:
            return str(to_plain(evaluate(rule["messageExpression"], act)))
        except CelError:
            pass
    return rule.get("message") or f"failed expression: {rule['expression']}"


def _validate_one(policy: dict[str, Any], binding: dict[str, Any], obj: dict[str, Any], req: Request) -> Step | None:
    """One policy through one binding; `Deny` in validationActions turns a failed validation into a denial.

    k8s.io/apiserver v0.33.0 pkg/admission/plugin/policy/validating/dispatcher.go (message format) and
    validator.go (a failed expression, or an error under failurePolicy Fail, is a violation).
    """
    spec, name = policy["spec"], policy["metadata"]["name"]
    prefix = f"ValidatingAdmissionPolicy '{name}' with binding '{binding['metadata']['name']}' denied request: "
    fail_closed = spec.get("failurePolicy", "Fail") == "Fail"
    try:
        if not _conditions_hold(spec, obj, req):
            return None
    except CelError as e:
        return (
            Step("ValidatingAdmissionPolicy", name, denied=prefix + e.reason, message=e.reason) if fail_closed else None
        )
    act = _activation(obj, req, spec.get("variables"))
    for rule in spec.get("validations") or []:
        try:
            ok = bool(evaluate(rule["expression"], act))
            message = None if ok else _message(rule, act)
        except CelError as e:
            if not fail_closed:
                continue
            message = f"expression '{rule['expression'][:80]}' resulted in error: {e.reason}"
        if message is not None:
            actions = binding["spec"].get("validationActions") or []
            if "Deny" in actions:
                return Step("ValidatingAdmissionPolicy", name, denied=prefix + message, message=message)
            kind = "warning" if "Warn" in actions else "audit annotation"
            return Step("ValidatingAdmissionPolicy", name, note=f"{kind}: {message}", message=message)
    return Step("ValidatingAdmissionPolicy", name, note="allowed")


def build_chain(docs: list[dict[str, Any]], webhooks: list[Hook]) -> AdmissionChain:
    """The chain of rendered admission objects plus other webhook configurations (e.g. Kueue's)."""

    def kind(k: str) -> list[dict[str, Any]]:
        return sorted((d for d in docs if d.get("kind") == k), key=lambda d: d["metadata"]["name"])

    maps = [_map_hook(p, kind("MutatingAdmissionPolicyBinding")) for p in kind("MutatingAdmissionPolicy")]
    hooks = list(webhooks)
    if kind("MutatingPolicy"):
        hooks.append(_kyverno_hook(kind("MutatingPolicy")))
    return AdmissionChain(
        maps + sorted(hooks, key=lambda h: h.name),
        kind("ValidatingAdmissionPolicy"),
        kind("ValidatingAdmissionPolicyBinding"),
    )
