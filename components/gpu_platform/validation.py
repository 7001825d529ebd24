"""Cross-field rules of the spec. Every rule yields Findings naming a field path, the bad value and what is allowed.

`check_spec` runs the core rules below and then each domain's checks (registered once in `DOMAIN_CHECKS`),
and returns every finding: errors, warnings and notes. Nothing here creates resources.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from .admission.checks import check_admission
from .autoscaling.checks import check_autoscaling
from .catalog import COMPUTE_SLICES, GPU_RESOURCE, MIG_CAPABLE_GPUS, layout_fits, profiles_for
from .catalog.mig import MigProfile
from .deferred import deferred_findings, has_deferred, readable
from .errors import Finding, Severity, SpecError
from .gpu_operator.checks import check_gpu_operator
from .nodepools.checks import check_node_pools
from .observability.checks import check_observability
from .queues.checks import check_queues
from .spec import Cloud, GkeGpuStack, NodePool, NodePoolAws, NodePoolGcp, PlatformSpec, Sharing, SharingMode, Team, Tier

__all__ = ["DOMAIN_CHECKS", "check_spec", "ensure_component_args", "ensure_valid"]

Check = Callable[[PlatformSpec], Iterable[Finding]]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS_ALLOWED = "a lower-case DNS label: a-z, 0-9 and '-', starting and ending alphanumeric, at most 63 characters"


def _err(path: str, message: str) -> Finding:
    return Finding(path, message)


def _dns_label(path: str, value: str) -> Iterator[Finding]:
    if len(value) > 63 or not _DNS_LABEL.match(value):
        yield _err(path, f"{value!r} is not a valid name; allowed: {_DNS_ALLOWED}")


def _unique(path: str, names: list[str], what: str) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            yield _err(f"{path}[{i}].name", f"duplicate {what} name {name!r}; {what} names must be unique")
        seen.add(name)


def _choices(values: Iterable[str], limit: int = 12, near: str | None = None) -> str:
    """Up to `limit` allowed values; with `near`, the closest to it come first, so a cut list keeps them."""
    vals = sorted(values)
    close = difflib.get_close_matches(near, vals, n=limit, cutoff=0.5) if near else []
    vals = close + [v for v in vals if v not in close]
    more = f", ... ({len(vals) - limit} more)" if len(vals) > limit else ""
    return ", ".join(vals[:limit]) + more


def _did_you_mean(value: str, values: Iterable[str]) -> str:
    close = difflib.get_close_matches(value, sorted(values), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


_A_CLOUD = {"aws": "an AWS", "gcp": "a GCP"}


def rule_top_level(spec: PlatformSpec) -> Iterator[Finding]:
    """Cluster-wide fields: label domain, Kubernetes version, the cloud section."""
    if len(spec.label_domain) > 253 or not _DNS_SUBDOMAIN.match(spec.label_domain):
        yield _err("labelDomain", f"{spec.label_domain!r} is not a DNS subdomain; allowed: e.g. gpu.example.com")
    section, other = (spec.aws, spec.gcp) if spec.cloud == Cloud.AWS else (spec.gcp, spec.aws)
    other_name = "gcp" if spec.cloud == Cloud.AWS else "aws"
    if section is None:
        yield _err(
            spec.cloud.value, f"missing; cloud is {spec.cloud.value!r}, so the {spec.cloud.value} section is required"
        )
    if other is not None:
        yield _err(other_name, f"set, but cloud is {spec.cloud.value!r}; remove it or change cloud")


def rule_names(spec: PlatformSpec) -> Iterator[Finding]:
    """Pool, tier and team names are unique DNS labels."""
    named: tuple[tuple[str, Sequence[NodePool | Tier | Team], str], ...] = (
        ("nodePools", spec.node_pools, "pool"),
        ("tiers", spec.tiers, "tier"),
        ("teams", spec.teams, "team"),
    )
    for path, items, what in named:
        for i, item in enumerate(items):
            yield from _dns_label(f"{path}[{i}].name", item.name)
        yield from _unique(path, [x.name for x in items], what)


def rule_pools(spec: PlatformSpec) -> Iterator[Finding]:
    """Sizes, instance types, sharing settings and MIG layouts of every pool."""
    hw = spec.hardware
    cloud_types = sorted(n for n, t in hw.instance_types.items() if t.cloud == spec.cloud.value)
    for i, pool in enumerate(spec.node_pools):
        p = f"nodePools[{i}]"
        if pool.min_size > pool.max_size:
            yield _err(f"{p}.minSize", f"{pool.min_size} is greater than maxSize {pool.max_size}; allowed: 0..maxSize")
        # A section equal to its default is not "set": model_dump(by_alias=True) writes both, and loads back.
        if "gcp" in pool.model_fields_set and spec.cloud == Cloud.AWS and pool.gcp != NodePoolGcp():
            yield _err(f"{p}.gcp", "set, but cloud is 'aws'; use nodePools[].aws for EKS options")
        if "aws" in pool.model_fields_set and spec.cloud == Cloud.GCP and pool.aws != NodePoolAws():
            yield _err(f"{p}.aws", "set, but cloud is 'gcp'; use nodePools[].gcp for GKE options")
        itype = hw.instance(pool.instance_type)
        if itype is None:
            yield _err(
                f"{p}.instanceType",
                f"{pool.instance_type!r} is not in the catalog for {spec.cloud.value}"
                f"{_did_you_mean(pool.instance_type, cloud_types)}; allowed: "
                f"{_choices(cloud_types, near=pool.instance_type)}, or describe it under catalog.instanceTypes",
            )
            continue
        if itype.cloud != spec.cloud.value:
            yield _err(
                f"{p}.instanceType",
                f"{pool.instance_type!r} is {_A_CLOUD.get(itype.cloud, itype.cloud)} type but cloud is "
                f"{spec.cloud.value!r}; allowed: {_choices(cloud_types)}",
            )
        yield from _rule_sharing(spec, p, pool, itype.gpu_model)


def _rule_sharing(spec: PlatformSpec, p: str, pool: NodePool, gpu_model: str) -> Iterator[Finding]:
    s, gpu = pool.sharing, spec.hardware.gpu(gpu_model)
    mode = s.mode.value
    if s.mode in (SharingMode.TIME_SLICING, SharingMode.MPS):
        if s.replicas is None:
            yield _err(f"{p}.sharing.replicas", f"missing; {mode} needs replicas >= 2 (pods per GPU)")
        elif s.replicas < 2:
            yield _err(f"{p}.sharing.replicas", f"{s.replicas} is too small; allowed: >= 2 (device-plugin rule)")
        elif s.mode == SharingMode.MPS and gpu and s.replicas > gpu.mps_max_clients:
            yield _err(
                f"{p}.sharing.replicas", f"{s.replicas} exceeds the MPS client limit; allowed: 2..{gpu.mps_max_clients}"
            )
    if s.mode == SharingMode.EXCLUSIVE and s.replicas is not None:
        yield _err(
            f"{p}.sharing.replicas",
            f"{s.replicas} is not allowed with mode 'exclusive'; remove it or use mode time-slicing / mps",
        )
    if s.mode != SharingMode.MIG and s.mig_layout is not None:
        yield _err(f"{p}.sharing.migLayout", f"only allowed with mode 'mig', not {mode!r}")
    if s.mode == SharingMode.MIG:
        yield from _rule_mig(p, s, gpu_model, gpu is not None and gpu.mig_capable)


def _rule_mig(p: str, s: Sharing, gpu_model: str, capable: bool) -> Iterator[Finding]:
    if not capable:
        yield _err(
            f"{p}.sharing.mode",
            f"'mig' on {gpu_model}, which has no MIG; allowed GPUs: {', '.join(MIG_CAPABLE_GPUS)}",
        )
        return
    if s.replicas is not None and s.replicas < 2:
        yield _err(
            f"{p}.sharing.replicas", f"{s.replicas} is too small for time-slicing MIG slices; allowed: >= 2, or omit"
        )
    layout = s.mig_layout or {}
    profiles = profiles_for(gpu_model)
    if not layout or not any(layout.values()):
        yield _err(
            f"{p}.sharing.migLayout",
            f"missing or empty; mode 'mig' needs profile -> count per GPU; "
            f"allowed profiles on {gpu_model}: {', '.join(profiles)}",
        )
        return
    unknown = [k for k in layout if k not in profiles]
    for k in unknown:
        yield _err(
            f"{p}.sharing.migLayout.{k}", f"{k!r} is not a MIG profile of {gpu_model}; allowed: {', '.join(profiles)}"
        )
    if not unknown and not layout_fits(gpu_model, layout):
        used_c = sum(profiles[k].compute * n for k, n in layout.items())
        used_m = sum(profiles[k].size * n for k, n in layout.items())
        maxima = ", ".join(f"{k} x{profiles[k].max_instances}" for k in layout)
        yield _err(
            f"{p}.sharing.migLayout",
            f"{dict(layout)} does not fit one {gpu_model} under NVIDIA's placement "
            f"rules (uses {used_c}/7 compute and {used_m}/8 memory slices; at most {maxima} per GPU); "
            f"allowed: a layout that fits, e.g. {_examples(gpu_model, layout, profiles)}",
        )


def _most_that_fits(gpu_model: str, layout: dict[str, int], profiles: dict[str, MigProfile]) -> dict[str, int]:
    """The fitting layout with at most the given count of each of `layout`'s profiles that uses the most compute,
    then memory slices, then instances. A GPU has 7 compute slices, so the search stays small."""
    names = sorted((k for k, n in layout.items() if n > 0), key=lambda k: -profiles[k].compute)
    best: tuple[tuple[int, int, int], dict[str, int]] = ((0, 0, 0), {})

    def walk(i: int, chosen: dict[str, int], compute: int) -> None:
        nonlocal best
        if i == len(names):
            if chosen and layout_fits(gpu_model, chosen):
                memory = sum(profiles[k].size * n for k, n in chosen.items())
                score = (compute, memory, sum(chosen.values()))
                if score > best[0]:
                    best = (score, dict(chosen))
            return
        k = names[i]
        top = min(layout[k], profiles[k].max_instances, (COMPUTE_SLICES - compute) // profiles[k].compute)
        for n in range(top, -1, -1):
            walk(i + 1, {**chosen, k: n} if n else chosen, compute + n * profiles[k].compute)

    walk(0, {}, 0)
    return {k: best[1][k] for k in layout if k in best[1]}


def _examples(gpu_model: str, layout: dict[str, int], profiles: dict[str, MigProfile]) -> str:
    most, balanced = _most_that_fits(gpu_model, layout, profiles), _balanced(profiles)
    return f"{most} (the most of this one that fits)" + (f" or {balanced}" if most != balanced else "")


def _balanced(profiles: dict[str, MigProfile]) -> dict[str, int]:
    """NVIDIA's all-balanced layout on this GPU: one 3g, one 2g and two 1g instances."""
    first = {c: next(n for n, pr in profiles.items() if pr.compute == c) for c in (3, 2, 1)}
    return {first[3]: 1, first[2]: 1, first[1]: 2}


def _layout_known(spec: PlatformSpec, pool: NodePool) -> bool:
    """Whether a MIG pool's layout names profiles of its GPU, so that its resources are known (else the pool's
    own findings name the problem, and a tier's resource cannot be checked against it)."""
    gpu = spec.hardware.gpu_of(pool.instance_type)
    layout = {k: n for k, n in (pool.sharing.mig_layout or {}).items() if n > 0}
    return bool(layout) and (gpu is None or all(k in profiles_for(gpu.name) for k in layout))


def rule_tiers(spec: PlatformSpec) -> Iterator[Finding]:
    """Every tier names a pool and a resource that pool advertises; every pool has a tier."""
    pools = spec.pools_by_name
    for i, tier in enumerate(spec.tiers):
        pool = pools.get(tier.pool)
        if pool is None:
            yield _err(f"tiers[{i}].pool", f"{tier.pool!r} is not a pool; allowed: {_choices(pools)}")
            continue
        resource = spec.resource_of(tier)
        if pool.sharing.mode == SharingMode.MIG:
            allowed = spec.pool_resources(pool)
            if not _layout_known(spec, pool):
                continue  # the pool's own error says what its layout lacks; its resources are not known yet
            if resource not in allowed:
                what = f"{tier.resource!r}" if tier.resource else "missing"
                native = spec.cloud == Cloud.GCP and allowed == [GPU_RESOURCE]
                why = (
                    f" (GKE's own device plugin advertises MIG partitions as {GPU_RESOURCE}; to request them "
                    "by profile, set gcp.gpuStack: gpu-operator)"
                    if native and (spec.gcp is None or spec.gcp.gpu_stack == GkeGpuStack.GKE_NATIVE)
                    else ""
                )
                yield _err(
                    f"tiers[{i}].resource",
                    f"{what}; pool {pool.name!r} is MIG, so the tier must name one of "
                    f"its resources; allowed: {', '.join(allowed)}{why}",
                )
        elif resource != GPU_RESOURCE:
            yield _err(f"tiers[{i}].resource", f"{resource!r} on non-MIG pool {pool.name!r}; allowed: {GPU_RESOURCE}")
    routed = {t.pool for t in spec.tiers}
    for i, pool in enumerate(spec.node_pools):
        if pool.name not in routed:
            yield _err(
                f"nodePools[{i}]",
                f"pool {pool.name!r} is unclassified: no tier routes to it; add a tier with pool: {pool.name}",
            )


MAX_TEAM_NAMESPACES = 5_000  # across all teams: each becomes a Namespace, a LocalQueue and admission labels


def rule_teams(spec: PlatformSpec) -> Iterator[Finding]:
    """Quotas name known tiers, limits need a cohort, a namespace belongs to one team."""
    total = sum(len(t.namespaces) for t in spec.teams)
    if total > MAX_TEAM_NAMESPACES:
        yield _err(
            "teams",
            f"{total:,} namespaces across teams; allowed: at most {MAX_TEAM_NAMESPACES:,} (split the "
            "fleet into several platforms)",
        )
        return
    tiers = spec.tiers_by_name
    owner: dict[str, str] = {}
    for i, team in enumerate(spec.teams):
        p = f"teams[{i}]"
        for field, values in (
            ("quotas", team.quotas),
            ("borrowingLimit", team.borrowing_limit),
            ("lendingLimit", team.lending_limit),
        ):
            for tier in values:
                if tier not in tiers:
                    yield _err(f"{p}.{field}.{tier}", f"{tier!r} is not a tier; allowed: {_choices(tiers)}")
        for field, values in (("borrowingLimit", team.borrowing_limit), ("lendingLimit", team.lending_limit)):
            if values and not team.cohort:
                yield _err(
                    f"{p}.{field}",
                    f"{dict(values)} needs a cohort (Kueue: limits must be nil without one); set cohort or remove it",
                )
            for tier, n in values.items():
                if tier in tiers and tier not in team.quotas:
                    yield _err(
                        f"{p}.{field}.{tier}", f"{n} for tier {tier!r} without a quota for it; add quotas.{tier}"
                    )
        for tier, n in team.lending_limit.items():
            if n > team.quotas.get(tier, n):
                yield _err(f"{p}.lendingLimit.{tier}", f"{n} exceeds the quota {team.quotas[tier]}; allowed: 0..quota")
        for j, ns in enumerate(team.namespaces):
            yield from _dns_label(f"{p}.namespaces[{j}]", ns)
            if ns in owner and owner[ns] != team.name:
                yield _err(
                    f"{p}.namespaces[{j}]",
                    f"{ns!r} already belongs to team {owner[ns]!r}; a namespace belongs to one team",
                )
            owner.setdefault(ns, team.name)


def rule_catalog(spec: PlatformSpec) -> Iterator[Finding]:
    """Custom instance types name known GPU models; price overrides name known types."""
    models = spec.hardware.gpu_models
    for i, t in enumerate(spec.catalog.instance_types):
        if t.gpu_model not in models:
            yield _err(
                f"catalog.instanceTypes[{i}].gpuModel",
                f"{t.gpu_model!r} is not a known GPU model; allowed: {_choices(models)}",
            )
    for name in spec.catalog.price_overrides:
        if spec.hardware.instance(name) is None:
            yield _err(
                f"catalog.priceOverrides.{name}",
                f"{name!r} is not a known instance type; describe it under catalog.instanceTypes first",
            )


def rule_policy(spec: PlatformSpec) -> Iterator[Finding]:
    """`policy.enforcement` names policies of the pack and their enforcement levels (the pack and `audit` read it)."""
    if not spec.policy.enforcement:
        return
    from .policy import level_problem  # the pack's table; imported only when a spec sets enforcement

    for name, level in spec.policy.enforcement.items():
        if problem := level_problem(name, level):
            yield _err(f"policy.enforcement.{name}", problem)


def rule_cohorts(spec: PlatformSpec) -> Iterator[Finding]:
    """Nested cohorts have unique names and known, acyclic parents."""
    names = [c.name for c in spec.scheduling.cohorts]
    yield from _unique("scheduling.cohorts", names, "cohort")
    parents = {c.name: c.parent for c in spec.scheduling.cohorts}
    known = set(parents) | {t.cohort for t in spec.teams if t.cohort}
    for i, c in enumerate(spec.scheduling.cohorts):
        yield from _dns_label(f"scheduling.cohorts[{i}].name", c.name)
        if c.parent is not None and c.parent not in known:
            others = _choices(known - {c.name}) or "none yet"
            yield _err(
                f"scheduling.cohorts[{i}].parent",
                f"{c.parent!r} is not a cohort; allowed: {others} (a scheduling.cohorts[].name or a team's cohort)",
            )
        seen, cur = {c.name}, c.parent
        while cur is not None:
            if cur in seen:
                yield _err(f"scheduling.cohorts[{i}].parent", f"{c.parent!r} makes a cycle through {c.name!r}")
                break
            seen.add(cur)
            cur = parents.get(cur)
    for i, team in enumerate(spec.teams):
        if team.cohort:
            yield from _dns_label(f"teams[{i}].cohort", team.cohort)


def rule_releases(spec: PlatformSpec) -> Iterator[Finding]:
    """The Helm releases whose name and namespace the spec sets are not another release of the platform: Helm keeps
    one release of a name per namespace, so the second install would fail (or take over the first)."""
    mon, keda, sched = spec.monitoring, spec.autoscaling.keda, spec.scheduling
    fixed = [
        ("kueue", sched.kueue.namespace, sched.kueue.enabled),
        ("volcano", sched.volcano.namespace, sched.volcano.enabled),
        ("gpu-operator", spec.gpu_operator.namespace, True),
        ("kyverno", spec.admission.kyverno_namespace, True),
        ("cluster-autoscaler", spec.cluster_autoscaler.namespace, spec.cluster_autoscaler.enabled),
        ("aws-efa-k8s-device-plugin", spec.efa_device_plugin.namespace, spec.cloud == Cloud.AWS),
    ]
    taken = {(name, ns): f"the {name} release" for name, ns, on in fixed if on}
    for path, name, ns, on in (
        ("monitoring.prometheus", mon.prometheus.release_name, mon.prometheus.namespace, mon.prometheus.install),
        ("monitoring.opencost", mon.opencost.release_name, mon.opencost.namespace, mon.opencost.enabled),
        ("autoscaling.keda", keda.release_name, keda.namespace, keda.enabled),
    ):
        if not on:
            continue
        if (name, ns) in taken:
            yield _err(
                f"{path}.releaseName",
                f"{name!r} in namespace {ns!r} is already {taken[(name, ns)]}; Helm keeps one release of a name "
                "per namespace; allowed: another name or namespace",
            )
        else:
            taken[(name, ns)] = path


CORE_RULES: tuple[Check, ...] = (
    rule_top_level,
    rule_names,
    rule_pools,
    rule_tiers,
    rule_teams,
    rule_catalog,
    rule_cohorts,
    rule_policy,
    rule_releases,
)


# The checks each domain registers once, run after the core rules.
DOMAIN_CHECKS: tuple[Check, ...] = (
    check_node_pools,
    check_gpu_operator,
    check_queues,
    check_admission,
    check_autoscaling,
    check_observability,
)


def check_spec(spec: PlatformSpec) -> list[Finding]:
    """Every finding for `spec`: core rule errors first, then domain checks (run only when the core rules pass)."""
    findings = [f for rule in CORE_RULES for f in rule(spec)]
    if not any(f.severity == Severity.ERROR for f in findings):
        findings += [f for check in DOMAIN_CHECKS for f in check(spec)]
    if has_deferred():  # a message that quotes a value given as an Input shows it as one, not as its token
        findings = [Finding(f.path, readable(f.message), f.severity) for f in findings]
    return findings + list(deferred_findings(spec))


# Specs that passed ensure_valid, by id, holding the spec so its id is not reused; GpuPlatform validates once and
# the components it composes (each of which validates a spec given to it alone) find it here.
_VALIDATED: dict[int, PlatformSpec] = {}
_VALIDATED_MAX = 64


def ensure_valid(spec: PlatformSpec, source: str | None = None) -> list[Finding]:
    """Raise SpecError with every error, or return the warnings and notes."""
    findings = check_spec(spec)
    if any(f.severity == Severity.ERROR for f in findings):
        raise SpecError(findings, source)
    if len(_VALIDATED) >= _VALIDATED_MAX:
        _VALIDATED.pop(next(iter(_VALIDATED)))
    _VALIDATED[id(spec)] = spec
    return findings


def ensure_component_args(spec: PlatformSpec, pool: str | None = None) -> None:
    """The check of a component's args: the spec is valid (once per spec object) and names `pool`, if given.

    Raises SpecError with every finding's field path, as GpuPlatform does, so a component used alone never fails
    later with a bare error on a reference the rules would have caught.
    """
    if _VALIDATED.get(id(spec)) is not spec:
        ensure_valid(spec)
    if pool is not None and pool not in spec.pools_by_name:
        names = ", ".join(p.name for p in spec.node_pools)
        raise SpecError([Finding("pool", f"{pool!r} is not a pool of the spec; allowed: one of {names}")])
