"""Autoscaling checks registered in `validation.DOMAIN_CHECKS`: each scaler names a real, entitled tier."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from ..errors import Finding, Severity
from ..observability.alerts import time_sliced_pools
from ..spec import PlatformSpec, QueueScaler

__all__ = ["check_autoscaling"]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
# Pod names of a Deployment: ReplicaSet `<deployment>-<pod-template-hash>` (the hash is a uint32 in
# rand.SafeEncodeString, at most 10 characters: kubernetes pkg/controller/controller_utils.go ComputeHash), then
# the API server's generateName, which cuts the prefix to 58 characters before the 5 random ones
# (k8s.io/apiserver pkg/storage/names/generate.go maxGeneratedNameLength). Up to 46 characters the pod name keeps
# `<deployment>-<hash>-`, which the scaler's query matches; longer names get cut and the query finds no pod.
DEPLOYMENT_NAME_MAX = 58 - 10 - 2
# The HPA target KEDA renders from `threshold`: strconv.ParseFloat, then a milli-quantity of int64(threshold x 1000)
# (kedacore/keda v2.20.2 pkg/scalers/prometheus_scaler.go GetMetricSpecForScaling, pkg/scalers/scaler.go
# GetMetricTargetMili), so under
# 0.001 the target is 0, which the HPA rejects.
TARGET_QUEUE_DEPTH_MIN = 0.001
TARGET_QUEUE_DEPTH_MAX = 1_000_000


def _names(path: str, s: QueueScaler) -> Iterator[Finding]:
    for field, value, pattern in (
        ("name", s.name, _DNS_LABEL),
        ("namespace", s.namespace, _DNS_LABEL),
        ("deployment", s.deployment, _DNS_SUBDOMAIN),
    ):
        if len(value) > 63 or not pattern.match(value):
            dot = " and '.'" if field == "deployment" else ""
            yield Finding(
                f"{path}.{field}",
                f"{value!r} is not a valid Kubernetes name; allowed: lower-case "
                f"a-z, 0-9 and '-'{dot}, at most 63 characters",
            )


def _entitled(spec: PlatformSpec, namespace: str, tier: str) -> bool:
    return any(namespace in t.namespaces and t.quotas.get(tier, 0) > 0 for t in spec.teams)


def _check_scaler(spec: PlatformSpec, path: str, s: QueueScaler) -> Iterator[Finding]:
    tiers = {t.name: t for t in spec.tiers}
    if s.tier not in tiers:
        yield Finding(f"{path}.tier", f"unknown tier {s.tier!r}; allowed: {', '.join(sorted(tiers))}")
        return
    if not _entitled(spec, s.namespace, s.tier):
        teams = sorted(t.name for t in spec.teams if t.quotas.get(s.tier, 0) > 0)
        yield Finding(
            f"{path}.namespace",
            f"{s.namespace!r} is not a namespace of a team with quota for tier "
            f"{s.tier!r} (teams with quota: {', '.join(teams) or 'none'}); admission would deny its pods",
        )
    if len(s.deployment) > DEPLOYMENT_NAME_MAX:
        yield Finding(
            f"{path}.deployment",
            f"{s.deployment!r} has {len(s.deployment)} characters: its pod names get "
            "cut to 63 and no longer start with `<deployment>-<hash>-`, so the queue-depth query would "
            f"find none; allowed: at most {DEPLOYMENT_NAME_MAX} characters",
        )
    depth = s.target_queue_depth
    if not math.isfinite(depth) or not TARGET_QUEUE_DEPTH_MIN <= depth <= TARGET_QUEUE_DEPTH_MAX:
        yield Finding(
            f"{path}.targetQueueDepth",
            f"{depth!r}; allowed: a number from {TARGET_QUEUE_DEPTH_MIN} to {TARGET_QUEUE_DEPTH_MAX}",
        )
    if s.min_replicas > s.max_replicas:
        yield Finding(
            f"{path}.minReplicas", f"{s.min_replicas} is above maxReplicas {s.max_replicas}; allowed: 1..maxReplicas"
        )
    pool = tiers[s.tier].pool
    if pool not in time_sliced_pools(spec):
        yield Finding(
            f"{path}.tier",
            f"tier {s.tier!r} runs on pool {pool!r}, whose GPUs are not time-sliced: the "
            "scheduler already sees its queueing; scaling on queue depth still works",
            Severity.WARNING,
        )


def check_autoscaling(spec: PlatformSpec) -> Iterator[Finding]:
    """Scalers need KEDA, a known tier, an entitled namespace, min <= max and unique names per namespace."""
    keda = spec.autoscaling.keda
    if keda.enabled and not keda.scalers:
        yield Finding(
            "autoscaling.keda",
            "KEDA is installed with no scalers: it still registers the cluster's "
            "external.metrics.k8s.io APIService (one per cluster), which another metrics adapter may "
            "need; add scalers or set autoscaling.keda.enabled: false",
            Severity.WARNING,
        )
    seen: set[tuple[str, str]] = set()
    targets: dict[tuple[str, str], int] = {}
    for i, s in enumerate(keda.scalers):
        path = f"autoscaling.keda.scalers[{i}]"
        if not keda.enabled:
            yield Finding(path, "KEDA is disabled (autoscaling.keda.enabled: false); enable it or remove the scaler")
        if (s.namespace, s.name) in seen:
            yield Finding(
                f"{path}.name", f"duplicate ScaledObject {s.namespace}/{s.name}; names must be unique per namespace"
            )
        seen.add((s.namespace, s.name))
        if (s.namespace, s.deployment) in targets:
            yield Finding(
                f"{path}.deployment",
                f"Deployment {s.namespace}/{s.deployment} is already scaled by "
                f"autoscaling.keda.scalers[{targets[(s.namespace, s.deployment)]}]: two ScaledObjects "
                "would make two HPAs fight over its replicas; one scaler per Deployment",
            )
        targets.setdefault((s.namespace, s.deployment), i)
        yield from _names(path, s)
        yield from _check_scaler(spec, path, s)
