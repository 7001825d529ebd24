"""Autoscaling checks registered in `validation.DOMAIN_CHECK_PATHS`: each scaler names a real, entitled tier."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..errors import Finding
from ..observability.alerts import time_sliced_pools
from ..spec import PlatformSpec, QueueScaler

__all__ = ["check_autoscaling"]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _names(path: str, s: QueueScaler) -> Iterator[Finding]:
    for field, value, pattern in (("name", s.name, _DNS_LABEL), ("namespace", s.namespace, _DNS_LABEL),
                                  ("deployment", s.deployment, _DNS_SUBDOMAIN)):
        if len(value) > 63 or not pattern.match(value):
            dot = " and '.'" if field == "deployment" else ""
            yield Finding(f"{path}.{field}", f"{value!r} is not a valid Kubernetes name; allowed: lower-case "
                          f"a-z, 0-9 and '-'{dot}, at most 63 characters")


def _entitled(spec: PlatformSpec, namespace: str, tier: str) -> bool:
    return any(namespace in t.namespaces and t.quotas.get(tier, 0) > 0 for t in spec.teams)


def _check_scaler(spec: PlatformSpec, path: str, s: QueueScaler) -> Iterator[Finding]:
    tiers = {t.name: t for t in spec.tiers}
    if s.tier not in tiers:
        yield Finding(f"{path}.tier", f"unknown tier {s.tier!r}; allowed: {', '.join(sorted(tiers))}")
        return
    if not _entitled(spec, s.namespace, s.tier):
        teams = sorted(t.name for t in spec.teams if t.quotas.get(s.tier, 0) > 0)
        yield Finding(f"{path}.namespace", f"{s.namespace!r} is not a namespace of a team with quota for tier "
                      f"{s.tier!r} (teams with quota: {', '.join(teams) or 'none'}); admission would deny its pods")
    if s.min_replicas > s.max_replicas:
        yield Finding(f"{path}.minReplicas", f"{s.min_replicas} is above maxReplicas {s.max_replicas}; "
                      "allowed: 1..maxReplicas")
    pool = tiers[s.tier].pool
    if pool not in time_sliced_pools(spec):
        yield Finding(f"{path}.tier", f"tier {s.tier!r} runs on pool {pool!r}, whose GPUs are not time-sliced: the "
                      "scheduler already sees its queueing; scaling on queue depth still works", "warning")


def check_autoscaling(spec: PlatformSpec) -> Iterator[Finding]:
    """Scalers need KEDA, a known tier, an entitled namespace, min <= max and unique names per namespace."""
    keda = spec.autoscaling.keda
    seen: set[tuple[str, str]] = set()
    for i, s in enumerate(keda.scalers):
        path = f"autoscaling.keda.scalers[{i}]"
        if not keda.enabled:
            yield Finding(path, "KEDA is disabled (autoscaling.keda.enabled: false); enable it or remove the scaler")
        if (s.namespace, s.name) in seen:
            yield Finding(f"{path}.name", f"duplicate ScaledObject {s.namespace}/{s.name}; names must be unique "
                          "per namespace")
        seen.add((s.namespace, s.name))
        yield from _names(path, s)
        yield from _check_scaler(spec, path, s)
