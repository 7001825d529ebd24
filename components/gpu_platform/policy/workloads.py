"""Workload policy: pods and pod templates requesting `nvidia.com/*` are classified by tier."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..contract import GPU_TAINT, KUEUE_PRIORITY_LABEL, NODE_CONTROL_PATHS, NVIDIA_RESOURCE_PREFIX
from ..inputs import MAX_DOCUMENT_DEPTH
from .config import PolicyConfig, config_of
from .props import dig, items, mapping

if TYPE_CHECKING:  # the engine's argument types, for annotations only: the checks import no policy SDK
    from pulumi_policy import ResourceValidationArgs

__all__ = ["check_workload_classified", "is_workload_type", "workload_gaps"]

GPU_RESOURCE_PREFIX = NVIDIA_RESOURCE_PREFIX
Report = Callable[..., None]

# Pulumi type token -> paths to the pod templates ({metadata, spec}); () means the object is the pod. A "*" step
# is every item of a list or every value of a map (JobSet replicated jobs, training replica types, Ray groups).
WORKLOAD_TYPES: dict[str, tuple[tuple[str, ...], ...]] = {
    "kubernetes:core/v1:Pod": ((),),
    "kubernetes:core/v1:ReplicationController": (("spec", "template"),),
    "kubernetes:core/v1:PodTemplate": (("template",),),
    "kubernetes:apps/v1:Deployment": (("spec", "template"),),
    "kubernetes:apps/v1:StatefulSet": (("spec", "template"),),
    "kubernetes:apps/v1:DaemonSet": (("spec", "template"),),
    "kubernetes:apps/v1:ReplicaSet": (("spec", "template"),),
    "kubernetes:batch/v1:Job": (("spec", "template"),),
    "kubernetes:batch/v1:CronJob": (("spec", "jobTemplate", "spec", "template"),),
    "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet": (("spec", "replicatedJobs", "*", "template", "spec", "template"),),
    "kubernetes:kubeflow.org/v1:PyTorchJob": (("spec", "pytorchReplicaSpecs", "*", "template"),),
    "kubernetes:kubeflow.org/v1:TFJob": (("spec", "tfReplicaSpecs", "*", "template"),),
    "kubernetes:kubeflow.org/v2beta1:MPIJob": (("spec", "mpiReplicaSpecs", "*", "template"),),
    "kubernetes:ray.io/v1:RayJob": (
        ("spec", "rayClusterSpec", "headGroupSpec", "template"),
        ("spec", "rayClusterSpec", "workerGroupSpecs", "*", "template"),
    ),
    "kubernetes:ray.io/v1:RayCluster": (
        ("spec", "headGroupSpec", "template"),
        ("spec", "workerGroupSpecs", "*", "template"),
    ),
    "kubernetes:ray.io/v1:RayService": (
        ("spec", "rayClusterConfig", "headGroupSpec", "template"),
        ("spec", "rayClusterConfig", "workerGroupSpecs", "*", "template"),
    ),
    "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet": (
        ("spec", "leaderWorkerTemplate", "leaderTemplate"),
        ("spec", "leaderWorkerTemplate", "workerTemplate"),
    ),
    "kubernetes:batch.volcano.sh/v1alpha1:Job": (("spec", "tasks", "*", "template"),),
}
# Kinds never scanned for embedded pod specs: charts carry values, CRDs carry schemas, not workloads.
_NOT_WORKLOADS = (
    "kubernetes:helm.sh/",
    "kubernetes:apiextensions.k8s.io/",
    "kubernetes:core/v1:ConfigMap",
    "kubernetes:core/v1:Secret",
    "kubernetes:yaml",
    "kubernetes:kustomize",
)
# Deep enough for any object the pack is given: `audit` reads documents nested up to MAX_DOCUMENT_DEPTH, and
# protobuf's default recursion limit (100 messages, two or three per JSON level in a google.protobuf.Struct) stops
# deeper properties before the engine hands them over.
_SCAN_DEPTH = MAX_DOCUMENT_DEPTH
_NOT_POD_FIELDS = ("apiVersion", "kind", "metadata", "status")


def _walk(value: Any, path: tuple[str, ...]) -> list[Any]:
    if not path:
        return [value]
    step, rest = path[0], path[1:]
    if step == "*":
        children = list(mapping(value).values()) if isinstance(value, Mapping) else list(items(value))
        return [x for c in children for x in _walk(c, rest)]
    nxt = dig(value, step)
    return _walk(nxt, rest) if nxt is not None else []


_SCALARS = frozenset({str, int, float, bool, bytes})
_POD_KEYS = frozenset({"spec", "containers", "container", "script"})


def _pod_like(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """`node` as a pod (template) when it is one: a spec with containers, a pod spec, or a template of one
    container beside its pod's fields and labels (Argo Workflows templates: container, script)."""
    if "spec" in node and items(dig(node, "spec", "containers")):
        return node
    if "containers" in node and items(node.get("containers")):
        return {"spec": node}
    for key in ("container", "script"):
        single = mapping(node.get(key)) if key in node else None
        if single and (single.get("image") or single.get("resources")):
            return {"metadata": mapping(node.get("metadata")), "spec": {**node, "containers": [single]}}
    return None


def _scan(value: Any) -> list[Mapping[str, Any]]:
    """Pod templates embedded anywhere in an unknown kind, in document order (iterative: a wide or deep object
    costs no recursion, and scalars are never visited)."""
    found: list[Mapping[str, Any]] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        # items(), not isinstance(list): the engine hands lists over as pulumi-policy's _ListProxy (a Sequence)
        if type(node) is dict or isinstance(node, Mapping):
            if not _POD_KEYS.isdisjoint(node.keys()) and (pod := _pod_like(node)) is not None:
                found.append(pod)
                continue
            children: Sequence[Any] = list(node.values())
        else:
            children = items(node)
        if depth < _SCAN_DEPTH:
            depth += 1
            stack.extend([(c, depth) for c in reversed(children) if type(c) not in _SCALARS and c is not None])
    return found


def is_workload_type(resource_type: str) -> bool:
    """Whether the pack looks for pod templates in this type: a known workload or any other Kubernetes kind."""
    return resource_type in WORKLOAD_TYPES or (
        resource_type.startswith("kubernetes:") and not resource_type.startswith(_NOT_WORKLOADS)
    )


def pod_templates(resource_type: str, props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every pod (template) of a workload: mappings with `metadata` and `spec`."""
    if resource_type not in WORKLOAD_TYPES:
        # every top-level field but the object's own metadata: a custom kind may keep its templates beside `spec`
        body = {k: v for k, v in mapping(props).items() if k not in _NOT_POD_FIELDS}
        return _scan(body) if is_workload_type(resource_type) else []
    return [mapping(t) for path in WORKLOAD_TYPES[resource_type] for t in (_walk(props, path) if path else [props])]


def pod_template(resource_type: str, props: Mapping[str, Any]) -> Mapping[str, Any]:
    """The first pod (template) of a workload, or an empty mapping."""
    found = pod_templates(resource_type, props)
    return found[0] if found else {}


def _containers(spec: Any) -> list[Any]:
    return [*items(dig(spec, "initContainers")), *items(dig(spec, "containers"))]


def _quantity(value: Any) -> str:
    """A count as text; 1, 1.0 and "1" are the same quantity (the engine sends numbers as floats)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return str(int(number)) if number.is_integer() else str(number)


def _gpu_part(section: Any) -> dict[str, str]:
    # Lower-cased: the API server rejects an upper-case domain (`NVIDIA.com/gpu`), so the pack flags it as a GPU
    # request instead of passing a manifest that only fails at apply time.
    return {str(k): _quantity(v) for k, v in mapping(section).items() if str(k)[:11].lower() == GPU_RESOURCE_PREFIX}


def _gpu_resources(container: Any) -> tuple[dict[str, str], dict[str, str]]:
    res = dig(container, "resources", default={})
    return _gpu_part(dig(res, "requests", default={})), _gpu_part(dig(res, "limits", default={}))


def _container_gaps(
    c: Any, gpu: tuple[dict[str, str], dict[str, str]], allowed: list[str] | None, tier: str
) -> list[str]:
    req, lim = gpu
    name = dig(c, "name", default="?")
    gaps = []
    for r in sorted(set(req) | set(lim)):
        if r not in lim:
            gaps.append(f"container {name!r} requests {r} without a limit (set limits equal to requests)")
        elif r in req and req[r] != lim[r]:
            gaps.append(f"container {name!r} requests {req[r]} {r} but limits {lim[r]} (they must be equal)")
        if allowed is not None and r not in allowed:
            gaps.append(
                f"container {name!r} requests {r}, which tier {tier!r} does not allow (allowed: {', '.join(allowed)})"
            )
    return gaps


_NO_DEVICES = ("", "void", "none")
_DEVICE_DIRS = ("dri", "char")  # /dev/char/<major>:<minor> links lead to the same device nodes as /dev/nvidia*


def _device_host_path(path: str) -> bool:
    """Whether a hostPath is the host's `/`, `/dev`, or a GPU device node under it (`//dev/./nvidia0` too; the
    API server rejects `..` segments), or one of the runtime's or kubelet's paths, below or above it
    (NODE_CONTROL_PATHS: they start privileged containers)."""
    seg = [s for s in path.split("/") if s not in ("", ".")]
    if not seg or (seg[0] == "dev" and (len(seg) == 1 or seg[1].startswith("nvidia") or seg[1] in _DEVICE_DIRS)):
        return True
    normal = "/" + "/".join(seg) + "/"
    return any(normal.startswith(p + "/") or (p + "/").startswith(normal) for p in NODE_CONTROL_PATHS)


def device_access(spec: Any, cfg: PolicyConfig, requested: bool = False) -> list[str]:
    """Ways a pod reaches GPUs other than through an `nvidia.com/*` request, one phrase each (empty when none).

    DRA resource claims allocate devices the platform's quotas and tiers do not count. On a GPU node (the pod
    requests a GPU, tolerates the GPU or pool taint or every taint, or names its node) a privileged container, a
    host `/dev` mount or `NVIDIA_VISIBLE_DEVICES` reach every GPU of the node, not only the allocated ones; the
    NVIDIA runtime class does the same for a pod that requests none.
    """
    found = []
    if items(dig(spec, "resourceClaims")) or any(items(dig(c, "resources", "claims")) for c in _containers(spec)):
        found.append(
            "claims devices through DRA resourceClaims (the platform's tiers and quotas count only "
            f"{NVIDIA_RESOURCE_PREFIX}* resources)"
        )
    if not (requested or _may_run_on_gpu_nodes(spec, cfg)):
        return found
    for c in _containers(spec):
        name = dig(c, "name", default="?")
        if dig(c, "securityContext", "privileged") is True:
            found.append(f"container {name!r} is privileged on a GPU node (it sees every GPU)")
        for e in items(dig(c, "env")):
            if dig(e, "name") != "NVIDIA_VISIBLE_DEVICES":
                continue
            if dig(e, "valueFrom") is not None and dig(e, "value") is None:
                # like admission: a value read from a ConfigMap, Secret or field cannot be checked here
                found.append(f"container {name!r} sets NVIDIA_VISIBLE_DEVICES from valueFrom on a GPU node")
            elif str(dig(e, "value", default="")).lower() not in _NO_DEVICES:
                found.append(
                    f"container {name!r} sets NVIDIA_VISIBLE_DEVICES={dig(e, 'value', default='')!s} on a GPU node"
                )
    for v in items(dig(spec, "volumes")):
        path = dig(v, "hostPath", "path")
        if path is not None and _device_host_path(str(path)):
            found.append(f"volume {dig(v, 'name', default='?')!r} mounts host {path} on a GPU node")
    if not requested and "nvidia" in str(dig(spec, "runtimeClassName", default="")).lower():
        found.append(f"runtimeClassName {dig(spec, 'runtimeClassName')!r} exposes the node's GPUs")
    return found


def _may_run_on_gpu_nodes(spec: Any, cfg: PolicyConfig) -> bool:
    """The pod tolerates the GPU or a pool taint (or every taint), or names its node: the kubelet checks only
    NoExecute taints (kubernetes v1.34.0 pkg/kubelet/lifecycle/predicate.go), so `nodeName` skips NoSchedule ones."""
    if dig(spec, "nodeName"):
        return True
    for t in items(dig(spec, "tolerations")):
        key, op = str(dig(t, "key", default="")), str(dig(t, "operator", default="Equal"))
        if (not key and op == "Exists") or key in (GPU_TAINT["key"], cfg.pool_key):
            return True
    return False


def _pod_level_gpus(spec: Any) -> list[str]:
    """`nvidia.com/*` names in pod-level `spec.resources` (Kubernetes 1.34): the API server takes only cpu,
    memory and hugepages there (kubernetes v1.34.0 staging/src/k8s.io/component-helpers/resource/helpers.go
    supportedPodLevelResources), so such a pod is never created; the pack says so before the apply fails."""
    res = dig(spec, "resources", default={})
    return sorted({*_gpu_part(dig(res, "requests", default={})), *_gpu_part(dig(res, "limits", default={}))})


def workload_gaps(pod: Mapping[str, Any], cfg: PolicyConfig) -> list[str] | None:
    """What a pod (template) lacks to be a classified GPU workload; None when it reaches no GPU."""
    spec = dig(pod, "spec", default={})
    containers = _containers(spec)
    gpu = [_gpu_resources(c) for c in containers]
    pod_level = _pod_level_gpus(spec)
    if not pod_level and not any(req or lim for req, lim in gpu):
        reached = device_access(spec, cfg)
        return [f"it reaches GPUs without requesting a tier's resource: {', '.join(reached)}"] if reached else None
    tier = str(dig(pod, "metadata", "labels", cfg.tier_key, default=""))
    gaps, allowed = [], None
    if not tier:
        gaps.append(f"label {cfg.tier_key} is missing (one of: {', '.join(cfg.tiers) or 'the platform tiers'})")
    elif cfg.tiers and tier not in cfg.tiers:
        gaps.append(f"tier {tier!r} is unknown (known: {', '.join(cfg.tiers)})")
    elif tier in cfg.tiers:
        allowed = cfg.tiers[tier].resources
    if pod_level:
        gaps.append(
            f"pod-level resources name {', '.join(pod_level)} (Kubernetes accepts only cpu, memory and "
            "hugepages there; request GPUs per container)"
        )
    for c, requested in zip(containers, gpu, strict=True):
        gaps.extend(_container_gaps(c, requested, allowed, tier))
    pc = str(dig(spec, "priorityClassName", default=""))
    want = cfg.tiers[tier].priority_class if tier in cfg.tiers else None
    if not pc:
        gaps.append(f"priorityClassName is missing{f' (use {want!r})' if want else ''}")
    elif want and pc != want:
        gaps.append(f"priorityClassName is {pc!r}, tier {tier!r} uses {want!r}")
    if dig(spec, "nodeName"):
        gaps.append(
            f"nodeName is {dig(spec, 'nodeName')!s} (it skips the scheduler and the pool's taints; let "
            "the tier's node selector place it)"
        )
    gaps.extend(f"it also {d}" for d in device_access(spec, cfg, requested=True))
    return gaps


def check_workload_classified(args: ResourceValidationArgs, report_violation: Report) -> None:
    """GPU pods carry a known tier label, request their tier's resource with requests == limits, name a priority."""
    if not is_workload_type(args.resource_type):
        args.not_applicable(f"{args.resource_type} has no pod template")
    cfg = config_of(args)
    namespace = dig(args.props, "metadata", "namespace")
    if namespace in cfg.exempt_namespaces:
        args.not_applicable(f"namespace {namespace!r} is exempt")
    templates = pod_templates(args.resource_type, args.props)
    found = [g for g in (workload_gaps(t, cfg) for t in templates) if g is not None]
    if not found:
        args.not_applicable(f"requests no {NVIDIA_RESOURCE_PREFIX}* resource and reaches no GPU")
    gaps = list(dict.fromkeys(g for template_gaps in found for g in template_gaps))
    gaps += _kueue_priority_gaps(args.props, templates, cfg)
    if gaps:
        kind = args.resource_type.rsplit(":", 1)[-1]
        name = dig(args.props, "metadata", "name", default=args.name)
        shown = gaps[:_SHOWN_GAPS] + ([f"and {len(gaps) - _SHOWN_GAPS} more"] if len(gaps) > _SHOWN_GAPS else [])
        report_violation(f"GPU workload {kind} {name!r} is unclassified: {'; '.join(shown)}.")


_SHOWN_GAPS = 12  # per violation; a pod of many containers would otherwise repeat the same gap for each


def _kueue_priority_gaps(props: Any, templates: list[Mapping[str, Any]], cfg: PolicyConfig) -> list[str]:
    """Kueue orders and preempts a workload by this label: it must be the priority of one of its GPU tiers."""
    given = dig(props, "metadata", "labels", KUEUE_PRIORITY_LABEL)
    tiers = {str(dig(t, "metadata", "labels", cfg.tier_key, default="")) for t in templates}
    classes = sorted({pc for t in tiers if t in cfg.tiers and (pc := cfg.tiers[t].priority_class)})
    if given is None or not classes or str(given) in classes:
        return []
    return [f"label {KUEUE_PRIORITY_LABEL}={given} is not the priority of its tiers ({', '.join(classes)})"]
