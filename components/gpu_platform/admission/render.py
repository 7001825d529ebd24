"""Pure render of in-cluster admission: deny unclassified GPU pods, route tiered ones (no pulumi import).

Deny: a ValidatingAdmissionPolicy + binding (admissionregistration.k8s.io/v1, GA since 1.30), fail closed.
Route: per tier, JSONPatch mutations (node selector, tolerations, resource, priority, Kueue queue label) as a
MutatingAdmissionPolicy where it is GA (Kubernetes >= 1.36) or a Kyverno MutatingPolicy before; both take the
same CEL. Mutation fails open (failurePolicy Ignore); the deny runs after every mutation, so it still holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..artifacts import Artifact, ArtifactKind, deep_merge, helm_release
from ..contract import (
    GPU_RESOURCE,
    GPU_TAINT,
    MANAGED_BY_LABEL,
    NAMESPACE_NAME_LABEL,
    NODE_CONTROL_PATHS,
    NVIDIA_RESOURCE_PREFIX,
    PART_OF_LABEL,
    PLATFORM_NAME,
    SYSTEM_NAMESPACE,
    operator_enabled,
    pool_label_key,
    team_label_key,
    tier_grant_prefix,
    tier_label_key,
)
from ..errors import Finding, RenderError, Severity
from ..queues.priorities import priority_class_name
from ..queues.render import VOLCANO_QUEUE_ANNOTATION, namespace_metadata
from ..spec import AdmissionSpec, MutationEngine, PlatformSpec, SharingMode, Tier
from .cel import (
    cel_get,
    cel_list,
    cel_literal,
    cel_map,
    cel_str,
    gpu_requested,
    json_pointer,
    jsonpatch,
    resource_patches,
    tier_label,
)
from .jobs import (
    PRIORITY_LABEL,
    QUEUE_PODS_ROUTE,
    granted,
    job_kinds,
    queue_pods_spec,
    route_name,
    workload_route_spec,
)

__all__ = [
    "DENY_POLICY",
    "DENY_EPHEMERAL_POLICY",
    "DENY_VOLCANO_QUEUES_POLICY",
    "DENY_WORKLOADS_POLICY",
    "NAMESPACE_GUARD_POLICY",
    "KEEP_ON_NODE_ANNOTATIONS",
    "engine_notes",
    "exempt_namespaces",
    "mutation_engine",
    "render_admission",
    "render_admission_artifacts",
    "render_admission_objects",
    "render_deny",
    "render_namespace_guard",
    "render_routes",
]

DENY_POLICY = "gpu-platform-deny-unclassified"
DENY_WORKLOADS_POLICY = "gpu-platform-deny-unclassified-workloads"
NAMESPACE_GUARD_POLICY = "gpu-platform-namespace-grants"
DENY_EPHEMERAL_POLICY = "gpu-platform-deny-ephemeral-device-access"
DENY_VOLCANO_QUEUES_POLICY = "gpu-platform-deny-foreign-volcano-queues"
KYVERNO_CHART = ("kyverno", "https://kyverno.github.io/kyverno/")
_MAP_GA, _MAP_BETA, _MAP_ALPHA = (1, 36), (1, 34), (1, 32)
_KYVERNO_K8S = ((1, 32), (1, 35))  # Kyverno 1.17 compatibility matrix (the default chart's release)
_KYVERNO_SERIES = ".".join(str(AdmissionSpec.model_fields["kyverno_version"].default).split(".")[:2]) + ".x"
_LABELS = {MANAGED_BY_LABEL: PLATFORM_NAME, PART_OF_LABEL: "admission"}
_POD_RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}


def mutation_engine(spec: PlatformSpec) -> tuple[MutationEngine, str | None]:
    """The engine that routes tiered pods and the MutatingAdmissionPolicy API version it uses (if any)."""
    engine, v = spec.admission.mutation, spec.kubernetes_release
    if engine == MutationEngine.AUTO:
        engine = MutationEngine.MUTATING_ADMISSION_POLICY if v >= _MAP_GA else MutationEngine.KYVERNO
    if engine != MutationEngine.MUTATING_ADMISSION_POLICY:
        return engine, None
    if v < _MAP_ALPHA:
        raise RenderError(
            "admission.mutation",
            f"mutating-admission-policy needs Kubernetes >= 1.32, kubernetesVersion is "
            f"{spec.kubernetes_version!r}; use kyverno or auto",
        )
    api = "v1" if v >= _MAP_GA else "v1beta1" if v >= _MAP_BETA else "v1alpha1"
    return engine, f"admissionregistration.k8s.io/{api}"


def exempt_namespaces(spec: PlatformSpec) -> list[str]:
    """Namespaces admission skips: the spec's list, or kube-system and the namespaces of what is installed
    (each only when installed, so an absent component's namespace is no loophole), plus the additional ones."""
    a, sched, prom = spec.admission, spec.scheduling, spec.monitoring.prometheus
    if a.exempt_namespaces is not None:
        names = list(a.exempt_namespaces)
    else:
        installed = [
            (True, SYSTEM_NAMESPACE),
            (operator_enabled(spec), spec.gpu_operator.namespace),
            (sched.kueue.enabled, sched.kueue.namespace),
            (sched.volcano.enabled, sched.volcano.namespace),
            (prom.install, prom.namespace),
        ]
        names = [ns for on, ns in installed if on]
    if mutation_engine(spec)[0] == MutationEngine.KYVERNO:
        names.append(a.kyverno_namespace)
    return list(dict.fromkeys([*names, *a.additional_exempt_namespaces]))


def _not_exempt(spec: PlatformSpec) -> dict[str, Any]:
    return {"matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": exempt_namespaces(spec)}]}


def _meta(name: str) -> dict[str, Any]:
    return {"name": name, "labels": dict(_LABELS)}


def _allowed_map(spec: PlatformSpec) -> str:
    return cel_map((cel_str(t.name), cel_literal([spec.resource_of(t)])) for t in spec.tiers)


def _not_allowed(section: str) -> str:
    """The `nvidia.com/*` keys of one resources section of container `c` its tier does not allow."""
    return (
        f"(has(c.resources) && has(c.resources.{section}) ? c.resources.{section}.filter(k, "
        f"k.startsWith({_NVIDIA}) && !(k in variables.allowed[variables.tier])) : [])"
    )


_NVIDIA = cel_str(NVIDIA_RESOURCE_PREFIX, "'")
_CONTAINERS = "object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])"
# Pods are denied on CREATE, and on UPDATE only when the update changes the tier label or the pod's placement: an
# unrelated update (a finalizer removed, an annotation added) of a pod admitted before the policy existed must not be
# blocked, but tolerations may be added to any pod, and the node selector and affinity of a pod held by scheduling
# gates (kubernetes v1.34.0 pkg/apis/core/validation/validation.go ValidatePodUpdate): a privileged pod admitted
# without a GPU toleration would otherwise gain one and be scheduled onto a GPU node when its gate is lifted.
_PLACEMENT = (("tolerations", "[]"), ("nodeSelector", "{}"), ("affinity", "{}"))


def _create_or_change(tier_key: str) -> str:
    """CEL: a CREATE, or an UPDATE that changes the tier label, the Kueue priority label, tolerations, node selector
    or affinity.

    Kueue re-prioritises a pod's Workload when its `kueue.x-k8s.io/priority-class` label changes, also while it
    runs (kueue v0.19.2 pkg/controller/jobframework/validation.go ValidateUpdateForWorkloadPriorityClassName
    forbids only adding it to a running pod and removing it; reconciler.go ensureOneWorkload ->
    UpdateWorkloadPriority), so a label update could claim another tier's priority.
    """
    changed = " || ".join(
        f"(has(object.spec.{f}) ? object.spec.{f} : {empty}) != "
        f"(has(oldObject.spec.{f}) ? oldObject.spec.{f} : {empty})"
        for f, empty in _PLACEMENT
    )
    labels = [(tier_label(k), tier_label(k, "oldObject")) for k in (tier_key, PRIORITY_LABEL)]
    relabelled = " || ".join(f"{new} != {old}" for new, old in labels)
    return f"request.operation == 'CREATE' || {relabelled} || {changed}"


def _map(pairs: list[tuple[str, str]]) -> str:
    return cel_map((cel_str(k), cel_str(v)) for k, v in pairs)


def _tolerates_gpu_nodes(pool_key: str) -> str:
    """CEL: the pod tolerates the GPU taint, a pool taint, or every taint (so it can land on GPU nodes)."""
    return (
        "has(object.spec.tolerations) && object.spec.tolerations.exists(t, "
        "((!has(t.key) || t.key == '') && has(t.operator) && t.operator == 'Exists') || "
        f"(has(t.key) && (t.key == {cel_str(GPU_TAINT['key'])} || t.key == {cel_str(pool_key)})))"
    )


# A pod created with `spec.nodeName` skips the scheduler: the kubelet admits it without checking NoSchedule taints
# (kubernetes v1.34.0 pkg/kubelet/lifecycle/predicate.go: only NoExecute taints are checked at node admission),
# so such a pod can land on a GPU node without tolerating anything.
_NODE_NAME = "has(object.spec.nodeName) && object.spec.nodeName != ''"


# hostPath volume paths normalised once per request: segments without empty and `.` ones (`//dev/./x` is `/dev/x`;
# the API server rejects `..`), joined with a leading and a trailing `/` (the host's root is `/`).
_HOST_PATHS = (
    "has(object.spec.volumes) ? object.spec.volumes.filter(v, has(v.hostPath) && has(v.hostPath.path))"
    ".map(v, v.hostPath.path.split('/').filter(s, s != '' && s != '.'))"
    ".map(s, size(s) == 0 ? '/' : '/' + s.join('/') + '/') : []"
)


def _device_host_path() -> str:
    """CEL: normalised host path `h` is the host's `/`, `/dev`, or a GPU device node under it (`/dev/nvidia*`,
    `/dev/dri`, or `/dev/char`, whose `<major>:<minor>` links lead to the same device nodes)."""
    return (
        "h == '/' || h == '/dev/' || h.startsWith('/dev/nvidia') || h.startsWith('/dev/dri/') || "
        "h.startsWith('/dev/char/')"
    )


def _node_control_host_path() -> str:
    """CEL: normalised host path `h` is one of NODE_CONTROL_PATHS, below one, or a directory above one (`/run`,
    `/var`)."""
    controls = cel_literal([p + "/" for p in NODE_CONTROL_PATHS])
    tops = " || ".join(
        f"h.startsWith({cel_str(t)})" for t in dict.fromkeys("/" + p.split("/")[1] + "/" for p in NODE_CONTROL_PATHS)
    )
    # the top-level test first: most host paths (/var/log, /mnt/data) are decided without the list
    return f"({tops}) && {controls}.exists(p, h.startsWith(p) || p.startsWith(h))"


_NO_DEVICES = "['', 'void', 'none', 'VOID', 'NONE']"


def device_access(pool_key: str) -> str:
    """CEL list: how the pod reaches GPU devices other than through its `nvidia.com/*` request ('' removed).

    DRA claims allocate devices outside the platform's tiers and quotas. On a GPU node (the pod requests a GPU,
    tolerates the GPU nodes' taints, or names its node) a privileged container, a host `/dev` (or `/`) mount, a
    mount of the runtime's or kubelet's sockets (NODE_CONTROL_PATHS), or
    NVIDIA_VISIBLE_DEVICES (a literal value other than void/none, or one taken from elsewhere) expose every GPU of
    the node, not only the ones allocated to the pod; an NVIDIA runtime class does the same for a pod that
    requests none.
    """
    on_gpu = f"variables.requested || ({_NODE_NAME}) || ({_tolerates_gpu_nodes(pool_key)})"
    claims = (
        "(has(object.spec.resourceClaims) && size(object.spec.resourceClaims) > 0) || variables.containers"
        ".exists(c, has(c.resources) && has(c.resources.claims) && size(c.resources.claims) > 0)"
    )
    privileged = (
        "variables.containers.exists(c, has(c.securityContext) && has(c.securityContext.privileged) && "
        "c.securityContext.privileged)"
    )
    env = (
        "variables.containers.exists(c, has(c.env) && c.env.exists(e, e.name == 'NVIDIA_VISIBLE_DEVICES' && "
        f"(!has(e.value) || !(e.value in {_NO_DEVICES}))))"
    )
    dev = f"variables.hostPaths.exists(h, {_device_host_path()})"
    control = f"variables.hostPaths.exists(h, {_node_control_host_path()})"
    runtime = "has(object.spec.runtimeClassName) && object.spec.runtimeClassName.contains('nvidia')"
    parts = [
        (claims, "it claims devices through DRA resourceClaims"),
        (f"({on_gpu}) && ({privileged})", "a privileged container can run on a GPU node"),
        (f"({on_gpu}) && ({dev})", "it mounts the host's /dev and can run on a GPU node"),
        (
            f"({on_gpu}) && ({control})",
            "it mounts the container runtime's or the kubelet's sockets (or a host "
            "directory above them) and can run on a GPU node",
        ),
        (f"({on_gpu}) && ({env})", "it sets NVIDIA_VISIBLE_DEVICES and can run on a GPU node"),
        (
            f"!variables.requested && ({on_gpu}) && ({runtime})",
            "it uses an NVIDIA runtime class and can run on a GPU node",
        ),
    ]
    return cel_list(f"({cond}) ? {cel_str(msg)} : ''" for cond, msg in parts) + ".filter(x, x != '')"


def _misplaced(spec: PlatformSpec, pool_key: str) -> str:
    """CEL list: placement the pod sets that is not its tier's (node selector, affinity, tolerations, priority
    class), checked whether or not the routing mutation ran."""
    k, pool = cel_str(pool_key), "variables.pools[variables.tier]"
    selector = (
        f"has(object.spec.nodeSelector) && {k} in object.spec.nodeSelector && object.spec.nodeSelector[{k}] != {pool}"
    )
    terms = (
        "has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) && "
        "has(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) && "
        "has(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms)"
    )
    affinity = (
        f"{terms} && object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        f".nodeSelectorTerms.exists(term, has(term.matchExpressions) && term.matchExpressions.exists(e, "
        f"e.key == {k} && !(e.operator == 'In' && has(e.values) && e.values.all(v, v == {pool}))))"
    )
    tolerations = (
        f"has(object.spec.tolerations) && object.spec.tolerations.exists(t, "
        f"((!has(t.key) || t.key == '') && has(t.operator) && t.operator == 'Exists') || (has(t.key) && "
        f"t.key == {k} && ((has(t.operator) && t.operator == 'Exists') || !has(t.value) || t.value != {pool})))"
    )
    priority = (
        "has(object.spec.priorityClassName) && "
        "object.spec.priorityClassName != variables.priorityClasses[variables.tier]"
    )
    # Kueue's pod integration takes a pod's workload priority from this label (set only when absent by admission)
    labels, pl = "object.metadata.labels", cel_str(PRIORITY_LABEL)
    kueue_priority = f"has({labels}) && {pl} in {labels} && {labels}[{pl}] != variables.priorityClasses[variables.tier]"
    parts = [
        (_NODE_NAME, "'nodeName ' + object.spec.nodeName + ' (it skips the scheduler and the pool\\'s taints)'"),
        (selector, f"'nodeSelector {pool_key}=' + object.spec.nodeSelector[{k}]"),
        (affinity, f"'a required node affinity on {pool_key} other than In [' + {pool} + ']'"),
        (tolerations, "'a toleration of another pool\\'s taint (or of every taint)'"),
        (priority, "'priorityClassName ' + object.spec.priorityClassName"),
        (kueue_priority, f"'the label {PRIORITY_LABEL}=' + {labels}[{pl}]"),
    ]
    found = cel_list(f"({cond}) ? {msg} : ''" for cond, msg in parts) + ".filter(x, x != '')"
    return f"variables.tier in variables.pools ? {found} : []"


def _deny_variables(spec: PlatformSpec, key: str) -> list[dict[str, str]]:
    wrong = f"{_not_allowed('limits')} + {_not_allowed('requests')}"
    pool_key = pool_label_key(spec.label_domain)
    return [
        {"name": "tier", "expression": tier_label(key)},
        {"name": "allowed", "expression": _allowed_map(spec)},
        {"name": "pools", "expression": _map([(t.name, t.pool) for t in spec.tiers])},
        {"name": "priorityClasses", "expression": _map([(t.name, priority_class_name(t)) for t in spec.tiers])},
        {"name": "containers", "expression": _CONTAINERS},
        {"name": "requested", "expression": gpu_requested()},
        {"name": "hostPaths", "expression": _HOST_PATHS},
        {"name": "access", "expression": device_access(pool_key)},
        {"name": "misplaced", "expression": _misplaced(spec, pool_key)},
        # "container '<name>' requests <resource>", the first outside the tier's per container (unknown tier: none).
        {
            "name": "wrong",
            "expression": f"variables.tier in variables.allowed ? variables.containers.map(c, ({wrong})"
            '.map(k, "container \'" + c.name + "\' requests " + k))'
            ".filter(l, size(l) > 0).map(l, l[0]) : []",
        },
    ]


def _deny_binding(spec: PlatformSpec, name: str) -> dict[str, Any]:
    """The binding that makes a ValidatingAdmissionPolicy deny, outside the exempt namespaces."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": _meta(name),
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": _not_exempt(spec)},
        },
    }


def _grant_validation(spec: PlatformSpec, tier: str, what: str) -> dict[str, str]:
    """The tier label is honoured only in namespaces granted the tier (its team has a quota for it)."""
    key, grant = tier_label_key(spec.label_domain), tier_grant_prefix(spec.label_domain)
    return {
        "expression": f"!({tier} in variables.allowed) || {granted(spec, tier)}",
        "reason": "Forbidden",
        "messageExpression": f"'{what} with the label {key}=' + {tier} + ' are not allowed in namespace ' + "
        f"request.namespace + ': no team with a quota for tier ' + {tier} + ' owns it "
        f"(team namespaces carry the label {grant}<tier>=true for each tier of the team)'",
    }


def _may_reach(spec: PlatformSpec) -> str:
    """CEL: a cheap pre-filter for device access without a request (claims, or GPU-node tolerations)."""
    return (
        f"(has(object.spec.resourceClaims) && size(object.spec.resourceClaims) > 0) || "
        f"({_CONTAINERS}).exists(c, has(c.resources) && has(c.resources.claims)) || ({_NODE_NAME}) || "
        f"({_tolerates_gpu_nodes(pool_label_key(spec.label_domain))})"
    )


def render_deny(spec: PlatformSpec) -> list[dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: GPU pods need a known tier and may request only its resource."""
    key, tiers = tier_label_key(spec.label_domain), ", ".join(t.name for t in spec.tiers)
    allowed = "; ".join(f"{t.name}: {spec.resource_of(t)}" for t in spec.tiers)
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": _meta(DENY_POLICY),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{**_POD_RULE, "operations": ["CREATE", "UPDATE"]}]},
            "matchConditions": [
                {"name": "reaches-gpus", "expression": f"{gpu_requested()} || {_may_reach(spec)}"},
                {"name": "create-or-tier-change", "expression": _create_or_change(key)},
            ],
            "variables": _deny_variables(spec, key),
            "validations": [
                {
                    "expression": "size(variables.access) == 0",
                    "reason": "Forbidden",
                    "messageExpression": "'pods reach GPUs only through their tier\\'s "
                    f"{NVIDIA_RESOURCE_PREFIX}* request; ' + variables.access[0] + ' (exempt the namespace in "
                    "admission.additionalExemptNamespaces if it is a trusted node agent)'",
                },
                {
                    "expression": "!variables.requested || variables.tier in variables.allowed",
                    "reason": "Forbidden",
                    "messageExpression": f"'pods requesting {NVIDIA_RESOURCE_PREFIX}* need the label {key} set to a "
                    f"known tier ({tiers}); got \"' + variables.tier + '\"'",
                },
                {
                    **(g := _grant_validation(spec, "variables.tier", "pods")),
                    "expression": f"!variables.requested || ({g['expression']})",
                },
                {
                    "expression": "size(variables.wrong) == 0",
                    "reason": "Forbidden",
                    "messageExpression": "variables.wrong[0] + ', which tier ' + variables.tier + ' does not allow: "
                    "request ' + variables.allowed[variables.tier][0] + ' instead (tiers and their "
                    f"resources: {allowed})'",
                },
                {
                    "expression": "!variables.requested || size(variables.misplaced) == 0",
                    "reason": "Forbidden",
                    "messageExpression": "'pods of tier ' + variables.tier + ' run on pool ' + variables.pools["
                    "variables.tier] + ' with priority class ' + variables.priorityClasses["
                    "variables.tier] + '; this one sets ' + variables.misplaced[0] + ' (remove it: "
                    "admission sets the tier\\'s placement)'",
                },
            ],
        },
    }
    return [policy, _deny_binding(spec, DENY_POLICY)]


def _template_requests_gpu() -> str:
    """CEL: pod template `t` requests or limits an `nvidia.com/*` resource in any container."""
    return f"has(t.spec) && has(t.spec.containers) && {gpu_requested('t')}"


def render_deny_workloads(spec: PlatformSpec) -> list[dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: a workload Kueue queues (Job, JobSet, Deployment...) whose pod
    templates request GPUs needs a known, granted tier on each such template, or Kueue would admit it, charge
    a quota, and its pods would then be denied."""
    kinds = job_kinds(spec)
    if not kinds:
        return []
    key, tiers = tier_label_key(spec.label_domain), ", ".join(t.name for t in spec.tiers)
    dispatch = "[]"
    for k in reversed(kinds):
        dispatch = f"object.kind == {cel_str(k.kind)} ? ({k.all_templates}) : {dispatch}"
    tier_of = cel_get("t.metadata.labels", cel_str(key), guards=["t.metadata", "t.metadata.labels"])
    rules = [
        {
            "apiGroups": [g],
            "apiVersions": sorted({k.version for k in kinds if k.group == g}),
            "operations": ["CREATE", "UPDATE"],
            "resources": sorted({k.resource for k in kinds if k.group == g}),
        }
        for g in dict.fromkeys(k.group for k in kinds)
    ]
    # Kueue re-prioritises a workload whose priority label changes, also while it runs (kueue v0.19.2
    # pkg/controller/jobframework/validation.go ValidateUpdateForWorkloadPriorityClassName, reconciler.go
    # ensureOneWorkload -> UpdateWorkloadPriority): updates are checked when they change that label.
    relabelled = f"{tier_label(PRIORITY_LABEL)} != {tier_label(PRIORITY_LABEL, 'oldObject')}"
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": _meta(DENY_WORKLOADS_POLICY),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": rules},
            "matchConditions": [
                {"name": "create-or-priority-change", "expression": f"request.operation == 'CREATE' || {relabelled}"}
            ],
            "variables": [
                {"name": "allowed", "expression": _allowed_map(spec)},
                {"name": "gpuTemplates", "expression": f"({dispatch}).filter(t, {_template_requests_gpu()})"},
                # The tier label of every pod template that requests nvidia.com/* ('' when it has none).
                {"name": "gpuTiers", "expression": f"variables.gpuTemplates.map(t, {tier_of})"},
                {"name": "unknown", "expression": "variables.gpuTiers.filter(x, !(x in variables.allowed))"},
                {
                    "name": "ungranted",
                    "expression": f"variables.gpuTiers.filter(x, x in variables.allowed && !{granted(spec, 'x')})",
                },
                # Kueue orders and preempts by this label; the route sets it only when absent, so a tenant could
                # claim a higher tier's priority for a lower tier's GPUs.
                {"name": "priorityClasses", "expression": _map([(t.name, priority_class_name(t)) for t in spec.tiers])},
                {"name": "kueuePriority", "expression": tier_label(PRIORITY_LABEL)},
                # Without that label Kueue takes the priority from the first template that names a priorityClassName,
                # GPU or not (kueue v0.19.2 pkg/controller/jobframework/reconciler.go ExtractPriority,
                # extractPriorityFromPodSets), e.g. when the route failed open: each must be one of the GPU tiers'.
                {
                    "name": "gpuClasses",
                    "expression": "variables.gpuTiers.filter(x, x in variables.priorityClasses)"
                    ".map(x, variables.priorityClasses[x])",
                },
                {
                    "name": "podPriorities",
                    "expression": "variables.kueuePriority != '' || size(variables.gpuClasses) "
                    f"== 0 ? [] : ({dispatch}).filter(t, has(t.spec) && "
                    "has(t.spec.priorityClassName) && !(t.spec.priorityClassName "
                    "in variables.gpuClasses)).map(t, t.spec.priorityClassName)",
                },
            ],
            "validations": [
                {
                    "expression": "size(variables.unknown) == 0",
                    "reason": "Forbidden",
                    "messageExpression": f"'pod templates requesting {NVIDIA_RESOURCE_PREFIX}* need the label {key} "
                    f"set to a known tier ({tiers}); got \"' + variables.unknown[0] + '\"'",
                },
                {
                    "expression": "size(variables.ungranted) == 0",
                    "reason": "Forbidden",
                    "messageExpression": f"'pod templates with the label {key}=' + variables.ungranted[0] + ' are not "
                    "allowed in namespace ' + request.namespace + ': no team with a quota for tier ' "
                    "+ variables.ungranted[0] + ' owns it'",
                },
                {
                    "expression": "variables.kueuePriority == '' || size(variables.gpuTiers) == 0 || variables.gpuTiers"
                    ".exists(x, x in variables.priorityClasses && variables.priorityClasses[x] == "
                    "variables.kueuePriority)",
                    "reason": "Forbidden",
                    "messageExpression": f"'the label {PRIORITY_LABEL}=' + variables.kueuePriority + ' is not the "
                    "priority of a tier of this workload\\'s GPU pod templates (' + "
                    "variables.gpuTiers.filter(x, x in variables.priorityClasses).map(x, "
                    "variables.priorityClasses[x]).join(', ') + '); remove it: admission sets the "
                    "tier\\'s'",
                },
                {
                    "expression": "size(variables.podPriorities) == 0",
                    "reason": "Forbidden",
                    "messageExpression": "'a pod template sets priorityClassName ' + variables.podPriorities[0] + "
                    "', not "
                    "the priority of a tier of this workload\\'s GPU pod templates (' + "
                    "variables.gpuClasses.join(', ') + '); without a kueue.x-k8s.io/priority-class "
                    "label Kueue queues and preempts by it: remove it'",
                },
            ],
        },
    }
    return [policy, _deny_binding(spec, DENY_WORKLOADS_POLICY)]


def _guarded_entries(obj: str, field: str, team_key: str, prefix: str, extra: list[str]) -> str:
    """CEL list of `key=value` for the platform-owned entries of `obj.metadata.<field>` (team, grants ...)."""
    m = f"{obj}.metadata.{field}"
    keys = " || ".join(
        [f"k == {cel_str(team_key)}", f"k.startsWith({cel_str(prefix)})", *(f"k == {cel_str(k)}" for k in extra)]
    )
    return f"(has({m}) ? {m}.filter(k, {keys}).map(k, k + '=' + {m}[k]) : [])"


def render_namespace_guard(spec: PlatformSpec) -> list[dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding on Namespaces: the labels (and the Volcano queue annotation) that grant
    tiers and pick a team's queue may be set only to what the spec gives that namespace.

    Admission trusts `<labelDomain>/team` and `tier.<labelDomain>/<tier>` on the namespace; without this guard a
    tenant allowed to edit (or create) a namespace could grant itself any tier or charge another team's queue.
    The map of namespace -> owned entries grows with team namespaces (about 60 bytes each). Only changes of those
    entries are checked, so an unrelated update of a namespace is never blocked.
    """
    if not spec.teams:
        return []
    team_key, prefix = team_label_key(spec.label_domain), tier_grant_prefix(spec.label_domain)
    owned_labels, owned_annotations = [], []
    for team in spec.teams:
        for ns in team.namespaces:
            meta = namespace_metadata(spec, team, ns)
            owned_labels.append((ns, [f"{k}={v}" for k, v in meta["labels"].items()]))
            owned_annotations.append((ns, [f"{k}={v}" for k, v in (meta.get("annotations") or {}).items()]))

    def owned_map(pairs: list[tuple[str, list[str]]]) -> str:
        return cel_map((cel_str(ns), cel_literal(entries)) for ns, entries in pairs)

    variables, validations = [], []
    for field, pairs, extra in (
        ("labels", owned_labels, []),
        ("annotations", owned_annotations, [VOLCANO_QUEUE_ANNOTATION]),
    ):
        new = _guarded_entries("object", field, team_key, prefix, extra)
        old = _guarded_entries("oldObject", field, team_key, prefix, extra)
        own = f"(object.metadata.name in variables.{field}Owned ? variables.{field}Owned[object.metadata.name] : [])"
        variables += [
            {"name": f"{field}Owned", "expression": owned_map(pairs)},
            # entries set or changed by this request that the spec does not give this namespace
            {
                "name": f"{field}Foreign",
                "expression": f"{new}.filter(e, !(e in {own}) && (request.operation == 'CREATE' || !(e in {old})))",
            },
        ]
        validations.append(
            {
                "expression": f"size(variables.{field}Foreign) == 0",
                "reason": "Forbidden",
                "messageExpression": f"'namespace ' + object.metadata.name + ' may not set the {field[:-1]} ' + "
                f"variables.{field}Foreign[0] + ': team, tier grant and queue {field} on namespaces "
                f"are set by the platform from its spec (teams[].namespaces and quotas)'",
            }
        )
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": _meta(NAMESPACE_GUARD_POLICY),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["namespaces"],
                    }
                ]
            },
            "variables": variables,
            "validations": validations,
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": _meta(NAMESPACE_GUARD_POLICY),
        "spec": {"policyName": NAMESPACE_GUARD_POLICY, "validationActions": ["Deny"]},
    }
    return [policy, binding]


def render_deny_ephemeral(spec: PlatformSpec) -> list[dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: an ephemeral (debug) container added to a running pod is neither
    privileged nor sets NVIDIA_VISIBLE_DEVICES.

    Ephemeral containers come through the `pods/ephemeralcontainers` subresource, after the pod was admitted, and
    run on the pod's node: on a GPU node either would expose every GPU of the node. A running pod always has a
    node, and admission cannot tell a GPU node from another, so the rule holds for every pod outside the exempt
    namespaces (Pod Security's baseline level forbids privileged ephemeral containers too).
    """
    new = (
        "(has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers : []).filter(c, "
        "!(has(oldObject.spec.ephemeralContainers) && oldObject.spec.ephemeralContainers.exists(o, o.name == c.name)))"
    )
    privileged = "has(c.securityContext) && has(c.securityContext.privileged) && c.securityContext.privileged"
    env = (
        "has(c.env) && c.env.exists(e, e.name == 'NVIDIA_VISIBLE_DEVICES' && "
        f"(!has(e.value) || !(e.value in {_NO_DEVICES})))"
    )
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": _meta(DENY_EPHEMERAL_POLICY),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["UPDATE"],
                        "resources": ["pods/ephemeralcontainers"],
                    }
                ]
            },
            "variables": [
                {"name": "added", "expression": new},
                {"name": "exposing", "expression": f"variables.added.filter(c, ({privileged}) || ({env}))"},
            ],
            "validations": [
                {
                    "expression": "size(variables.exposing) == 0",
                    "reason": "Forbidden",
                    "messageExpression": "'ephemeral container ' + variables.exposing[0].name + "
                    "' is privileged or sets "
                    "NVIDIA_VISIBLE_DEVICES: on a GPU node it would see every GPU of the node (debug "
                    "without --profile=sysadmin, or from an exempt namespace)'",
                },
            ],
        },
    }
    return [policy, _deny_binding(spec, DENY_EPHEMERAL_POLICY)]


def render_deny_volcano_queues(spec: PlatformSpec) -> list[dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding (with Volcano and teams): a PodGroup, a Volcano Job or a pod in a team
    namespace may name only that namespace's Volcano queue (or `default`).

    Volcano checks only that a named queue exists and is open (volcano v1.15.1
    pkg/webhooks/admission/podgroups/validate/validate_podgroup.go checkQueueState,
    pkg/webhooks/admission/jobs/validate/admit_job.go), and with Volcano alone its queues hold the teams' quotas:
    without this a tenant could charge another team's queue. A team namespace's queue is its
    `scheduling.volcano.sh/queue-name` annotation (kept to the spec by the namespace guard): work there names it or
    `default` (which Volcano's PodGroup webhook moves to it). Other namespaces are left alone: their GPU pods are
    denied anyway (no tier is granted there). The policy reads the namespace, so it does not grow with teams.
    """
    if not (spec.scheduling.volcano.enabled and spec.teams):
        return []
    annotations, key = "namespaceObject.metadata.annotations", cel_str(VOLCANO_QUEUE_ANNOTATION)
    pod_queue = cel_get("object.metadata.annotations", key)
    rules = [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]},
        {
            "apiGroups": ["scheduling.volcano.sh"],
            "apiVersions": ["v1beta1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["podgroups"],
        },
        {
            "apiGroups": ["batch.volcano.sh"],
            "apiVersions": ["v1alpha1"],
            "operations": ["CREATE"],
            "resources": ["jobs"],
        },
    ]
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": _meta(DENY_VOLCANO_QUEUES_POLICY),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": rules},
            "variables": [
                {
                    "name": "queue",
                    "expression": f"object.kind == 'Pod' ? {pod_queue} : (has(object.spec) && "
                    "has(object.spec.queue) ? object.spec.queue : '')",
                },
                {
                    "name": "own",
                    "expression": f"has({annotations}) && {key} in {annotations} ? {annotations}[{key}] : ''",
                },
            ],
            "validations": [
                {
                    "expression": "variables.own == '' || variables.queue in ['', 'default', variables.own]",
                    "reason": "Forbidden",
                    "messageExpression": "object.kind + ' in namespace ' + request.namespace + "
                    "' may not use the Volcano "
                    "queue ' + variables.queue + ': work in a team namespace goes to its team\\'s "
                    "queue (' + variables.own + ') or to default'",
                },
            ],
        },
    }
    return [policy, _deny_binding(spec, DENY_VOLCANO_QUEUES_POLICY)]


def render_denies(spec: PlatformSpec) -> list[dict[str, Any]]:
    """The validating objects for pods, ephemeral containers, workloads and Volcano queues (when
    `admission.denyUnclassified`)."""
    if not spec.admission.deny_unclassified:
        return []
    return (
        render_deny(spec) + render_deny_ephemeral(spec) + render_deny_workloads(spec) + render_deny_volcano_queues(spec)
    )


def _tolerations(spec: PlatformSpec, tier: Tier) -> list[dict[str, str]]:
    return [
        {"key": pool_label_key(spec.label_domain), "operator": "Equal", "value": tier.pool, "effect": "NoSchedule"},
        {"key": GPU_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"},
    ]


# Exclusive (multi-node training) pods are never moved to save nodes: cluster-autoscaler does not scale down a
# node running a pod annotated `safe-to-evict: "false"` (kubernetes/autoscaler cluster-autoscaler/FAQ.md "What
# types of pods can prevent CA from removing a node?"), and Karpenter does not voluntarily disrupt one running a
# `do-not-disrupt: "true"` pod (karpenter-provider-aws v1.14.1 docs/concepts/disruption.md "Pod-Level Controls").
# A pod that already sets either annotation keeps its own value.
KEEP_ON_NODE_ANNOTATIONS = {
    "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
    "karpenter.sh/do-not-disrupt": "true",
}


def _keep_on_node() -> str:
    annotations = "object.metadata.annotations"
    whole = cel_literal(KEEP_ON_NODE_ANNOTATIONS)
    each = " + ".join(
        f"({cel_str(k)} in {annotations} ? [] : "
        f"{cel_list([jsonpatch('add', cel_str('/metadata/annotations' + json_pointer(k)), cel_str(v))])})"
        for k, v in KEEP_ON_NODE_ANNOTATIONS.items()
    )
    create = jsonpatch("add", "'/metadata/annotations'", whole)
    return f"has({annotations}) ? {each} : {cel_list([create])}"


def _mutations(spec: PlatformSpec, tier: Tier) -> list[str]:
    """The CEL expressions (each a list of JSONPatch) that route one tier's pods."""
    pool_key = pool_label_key(spec.label_domain)
    tols = cel_literal(_tolerations(spec, tier))
    into_selector = jsonpatch("add", cel_str("/spec/nodeSelector" + json_pointer(pool_key)), cel_str(tier.pool))
    new_selector = jsonpatch("add", "'/spec/nodeSelector'", cel_literal({pool_key: tier.pool}))
    tolerations = "!object.spec.tolerations.exists(x, has(x.key) && x.key == t.key)"
    priority = [
        jsonpatch("add", "'/spec/priorityClassName'", cel_str(priority_class_name(tier))),
        jsonpatch("add", "'/spec/priority'", cel_literal(spec.priority_of(tier))),
    ]
    append, create = jsonpatch("add", "'/spec/tolerations/-'", "t"), jsonpatch("add", "'/spec/tolerations'", tols)
    exprs = [
        f"has(object.spec.nodeSelector) ? {cel_list([into_selector])} : {cel_list([new_selector])}",
        f"has(object.spec.tolerations) ? {tols}.filter(t, {tolerations}).map(t, {append}) : {cel_list([create])}",
        cel_list(priority),
    ]
    pool = spec.pools_by_name.get(tier.pool)
    if pool is not None and pool.sharing.mode == SharingMode.EXCLUSIVE:
        exprs.append(_keep_on_node())
    resource = spec.resource_of(tier)
    if resource != GPU_RESOURCE:
        for field in ("containers", "initContainers"):
            for section in ("limits", "requests"):
                exprs += [
                    resource_patches(section, field, "add", resource),
                    resource_patches(section, field, "remove", resource),
                ]
    return exprs


def _route_spec(spec: PlatformSpec, tier: Tier) -> dict[str, Any]:
    key = tier_label_key(spec.label_domain)
    return {
        "failurePolicy": "Ignore",
        "reinvocationPolicy": "Never",
        "matchConstraints": {"resourceRules": [_POD_RULE]},
        "matchConditions": [
            {"name": "tier", "expression": f"{tier_label(key)} == {cel_str(tier.name)}"},
            {"name": "tier-granted", "expression": granted(spec, cel_str(tier.name))},
        ],
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": e}} for e in _mutations(spec, tier)],
    }


def _policy(spec: PlatformSpec, name: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """One routing mutation for the engine: a MutatingAdmissionPolicy + binding, or a Kyverno MutatingPolicy."""
    engine, api = mutation_engine(spec)
    if engine == MutationEngine.MUTATING_ADMISSION_POLICY:
        return [
            {"apiVersion": api, "kind": "MutatingAdmissionPolicy", "metadata": _meta(name), "spec": body},
            {
                "apiVersion": api,
                "kind": "MutatingAdmissionPolicyBinding",
                "metadata": _meta(name),
                "spec": {"policyName": name, "matchResources": {"namespaceSelector": _not_exempt(spec)}},
            },
        ]
    if engine == MutationEngine.KYVERNO:
        body["matchConstraints"]["namespaceSelector"] = _not_exempt(spec)
        return [
            {"apiVersion": "policies.kyverno.io/v1", "kind": "MutatingPolicy", "metadata": _meta(name), "spec": body}
        ]
    return []


_POD_QUEUED = ("pod", "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset")


def render_routes(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Per tier, the pod routing mutation; with Kueue, the team queue on pods (when Kueue queues pods) and one
    route per enabled workload kind (`jobs`)."""
    docs = [d for tier in spec.tiers for d in _policy(spec, f"gpu-platform-route-{tier.name}", _route_spec(spec, tier))]
    kueue = spec.scheduling.kueue
    if not (kueue.enabled and spec.teams):
        return docs
    if any(i in _POD_QUEUED for i in kueue.integrations):
        docs += _policy(spec, QUEUE_PODS_ROUTE, queue_pods_spec(spec))
    return docs + [
        d for kind in job_kinds(spec) for d in _policy(spec, route_name(kind), workload_route_spec(spec, kind))
    ]


def render_kyverno_release(spec: PlatformSpec) -> dict[str, Any] | None:
    """The Kyverno Helm release document when Kyverno routes tiered pods."""
    if mutation_engine(spec)[0] != MutationEngine.KYVERNO:
        return None
    a = spec.admission
    values = deep_merge(
        {"admissionController": {"replicas": 3}}, a.kyverno_values_overrides, "admission.kyvernoValuesOverrides"
    )
    return helm_release("kyverno", KYVERNO_CHART[0], KYVERNO_CHART[1], a.kyverno_version, a.kyverno_namespace, values)


def render_admission(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Every admission object: the deny (when enabled) and the routes."""
    return render_denies(spec) + render_routes(spec)


def engine_notes(spec: PlatformSpec) -> list[Finding]:
    """What routes tiered pods (info), and what the cluster must offer for it (warnings)."""
    engine, api = mutation_engine(spec)
    notes = [
        Finding("admission", f"tiered pods routed by {engine.value}" + (f" ({api})" if api else ""), Severity.INFO)
    ]
    if api and not api.endswith("/v1"):
        notes.append(
            Finding(
                "admission",
                f"{api} MutatingAdmissionPolicy is served only with the MutatingAdmissionPolicy feature gate and "
                f"--runtime-config={api}=true on the API server (not on managed EKS/GKE control planes); use "
                "mutation: kyverno there",
                Severity.WARNING,
            )
        )
    lo, hi = _KYVERNO_K8S
    if engine == MutationEngine.KYVERNO and not lo <= spec.kubernetes_release <= hi:
        notes.append(
            Finding(
                "admission",
                f"Kyverno 1.17 (chart {_KYVERNO_SERIES}) supports Kubernetes {lo[0]}.{lo[1]}-{hi[0]}.{hi[1]}, "
                f"kubernetesVersion is {spec.kubernetes_version!r}; set admission.kyvernoVersion to a release "
                "that supports it",
                Severity.WARNING,
            )
        )
    return notes


def render_admission_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """`DIR/kubernetes/admission.yaml`, `DIR/kubernetes/namespace-guard.yaml` (with teams) and
    `DIR/helm/kyverno.yaml` when Kyverno routes."""
    out = [Artifact(ArtifactKind.KUBERNETES, "admission", tuple(render_admission(spec)), tuple(engine_notes(spec)))]
    if guard := render_namespace_guard(spec) if spec.admission.deny_unclassified else []:
        out.append(Artifact(ArtifactKind.KUBERNETES, "namespace-guard", tuple(guard)))
    release = render_kyverno_release(spec)
    if release:
        out.append(Artifact(ArtifactKind.HELM, "kyverno", (release,)))
    return out


@dataclass(frozen=True)
class AdmissionRender:
    """What `GpuAdmission` registers: the deny policies (and the namespace guard), the routes, the Kyverno release
    (None unless Kyverno routes), and the names of the policies it exports."""

    deny: tuple[dict[str, Any], ...]
    routes: tuple[dict[str, Any], ...]
    kyverno_release: dict[str, Any] | None

    @property
    def policy_names(self) -> list[str]:
        """Names of the deny and route policies, bindings left out, in registration order."""
        return [d["metadata"]["name"] for d in (*self.deny, *self.routes) if not d["kind"].endswith("Binding")]


def render_admission_objects(spec: PlatformSpec) -> AdmissionRender:
    """Every admission object grouped the way `GpuAdmission` registers it."""
    guard = render_namespace_guard(spec) if spec.admission.deny_unclassified else []
    return AdmissionRender(tuple(render_denies(spec) + guard), tuple(render_routes(spec)), render_kyverno_release(spec))
