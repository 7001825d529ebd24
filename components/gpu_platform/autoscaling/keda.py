"""KEDA (chart 2.20.2) and the ScaledObjects that scale time-sliced Deployments on their queue depth.

Time-slicing hides queueing from Kubernetes: a pod sharing a GPU is Running and its CPU looks idle while its
requests wait for the GPU. The application exports `gpu_app_queue_depth`; KEDA's Prometheus scaler
(kedacore/keda v2.20.2 `pkg/scalers/prometheus_scaler.go`) runs the query, which must return one sample, and
the HPA it creates with the default AverageValue target sets replicas = ceil(queue depth / target per replica).

Values keys: kedacore/charts keda/values.yaml @ 2.20.2; ScaledObject: keda.sh/v1alpha1 CRD of the same chart.
"""

from __future__ import annotations

from typing import Any

from ..artifacts import deep_merge, helm_release
from ..contract import PART_OF_LABEL, PLATFORM_NAME
from ..observability.checks import exact_number
from ..observability.names import APP_QUEUE_DEPTH
from ..observability.prometheus import prometheus_query_url
from ..observability.rules import rule_metadata_labels
from ..spec import PlatformSpec, QueueScaler

__all__ = ["queue_depth_query", "render_keda_release", "render_keda_values", "render_scaled_objects"]

CHART = "keda"


def render_keda_values(spec: PlatformSpec) -> dict[str, Any]:
    """Chart values: KEDA's operator and metrics server scraped by the platform's Prometheus; overrides last."""
    monitor = {"enabled": True, "serviceMonitor": {"enabled": True, "additionalLabels": rule_metadata_labels(spec)}}
    values = {"prometheus": {"metricServer": monitor, "operator": monitor}}
    return deep_merge(values, spec.autoscaling.keda.values_overrides, "autoscaling.keda.valuesOverrides")


def render_keda_release(spec: PlatformSpec) -> dict[str, Any] | None:
    """The KEDA release document, or None when disabled."""
    keda = spec.autoscaling.keda
    if not keda.enabled:
        return None
    return helm_release(
        keda.release_name, CHART, keda.repository, keda.version, keda.namespace, render_keda_values(spec)
    )


def queue_depth_query(scaler: QueueScaler) -> str:
    """Total queue depth of the Deployment's pods (`<deployment>-<template hash>-<suffix>`), 0 when none report.

    One sample always: KEDA rejects a query returning several. The pods' PodMonitor gives the namespace and pod
    target labels.
    """
    # A Deployment name is a DNS subdomain (checked): '.' is its only regex metacharacter. PromQL strings reject
    # Python's re.escape output ("\\-" is not a PromQL escape).
    pods = f"{scaler.deployment.replace('.', '[.]')}-[a-z0-9]+-[a-z0-9]+"
    return f'sum({APP_QUEUE_DEPTH}{{namespace="{scaler.namespace}",pod=~"{pods}"}}) or vector(0)'


def render_scaled_object(spec: PlatformSpec, scaler: QueueScaler) -> dict[str, Any]:
    """The keda.sh/v1alpha1 ScaledObject for one scaler."""
    trigger = {
        "type": "prometheus",
        "metricType": "AverageValue",
        "metadata": {
            "serverAddress": prometheus_query_url(spec),
            "query": queue_depth_query(scaler),
            # a string (the CRD's trigger metadata is map[string]string), exact: KEDA parses it with ParseFloat
            "threshold": exact_number(scaler.target_queue_depth),
        },
    }
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {
            "name": scaler.name,
            "namespace": scaler.namespace,
            "labels": {PART_OF_LABEL: PLATFORM_NAME},
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": scaler.deployment},
            "minReplicaCount": scaler.min_replicas,
            "maxReplicaCount": scaler.max_replicas,
            "pollingInterval": scaler.polling_interval,
            "cooldownPeriod": scaler.cooldown_period,
            "triggers": [trigger],
        },
    }


def render_scaled_objects(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Every ScaledObject of the spec (none when KEDA is disabled)."""
    keda = spec.autoscaling.keda
    return [render_scaled_object(spec, s) for s in keda.scalers] if keda.enabled else []
