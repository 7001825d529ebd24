"""The platform's PrometheusRule: recording rules for utilisation, allocation and cost, plus the alerts.

Pure render code: plain dicts only. `rule_groups(spec)` is the `groups:` list that both the PrometheusRule
`spec` and a plain Prometheus rules file (for `promtool`) hold.
"""

from __future__ import annotations

from typing import Any

from ..contract import PART_OF_LABEL, PLATFORM_NAME
from ..errors import RenderError, Severity
from ..spec import NodePool, PlatformSpec, SharingMode
from .alerts import alert_rules
from .checks import check_observability
from .names import DCGM_NODE_LABEL, ksm_resource, pool_label, tier_label
from .pricing import pool_price

__all__ = [
    "COST_BY_NAMESPACE",
    "COST_BY_TEAM",
    "RATE",
    "RECORDED",
    "UNITS_ALLOCATED",
    "advertised_resource",
    "render_prometheus_rule",
    "rule_groups",
    "SM_ACTIVE_POOL",
    "SM_ACTIVE_TIER",
    "UNITS_ALLOCATABLE",
    "rule_metadata_labels",
]

SM_ACTIVE_GPU = "gpu:sm_active:avg1h"
SM_ACTIVE_POOL = "pool:gpu_sm_active:avg1h"
SM_ACTIVE_TIER = "tier:gpu_sm_active:avg1h"
UNITS_ALLOCATED = "namespace_tier:gpu_units_allocated:sum"
UNITS_ALLOCATABLE = "pool_resource:gpu_units_allocatable:sum"
UNITS_EXPECTED = "pool_resource:gpu_units_expected:sum"
UNITS_PER_NODE = "gpu_pool_units_per_node"
RATE = "gpu_class_hourly_rate"
TEAM_INFO = "gpu_team_namespace_info"
COST_BY_NAMESPACE = "namespace_tier:gpu_cost_hourly:sum"
COST_BY_TEAM = "team_tier:gpu_cost_hourly:sum"
RECORDED = (
    SM_ACTIVE_GPU,
    SM_ACTIVE_POOL,
    SM_ACTIVE_TIER,
    UNITS_ALLOCATED,
    UNITS_ALLOCATABLE,
    UNITS_EXPECTED,
    UNITS_PER_NODE,
    RATE,
    TEAM_INFO,
    COST_BY_NAMESPACE,
    COST_BY_TEAM,
)


def _check_durations(spec: PlatformSpec) -> None:
    """Refuse to render what validation rejects (a spec built without `validate`)."""
    errors = [f for f in check_observability(spec) if f.severity == Severity.ERROR]
    if errors:
        raise RenderError.of(errors)


def advertised_resource(pool: NodePool, resource: str) -> str:
    """The resource name nodes advertise: device-plugin `renameByDefault` adds `.shared` to shared GPUs."""
    shared = pool.sharing.mode in (SharingMode.TIME_SLICING, SharingMode.MPS)
    return f"{resource}.shared" if shared and pool.sharing.rename_by_default else resource


def _node_pool_join(spec: PlatformSpec, expr: str) -> str:
    pl = pool_label(spec.label_domain)
    joined = f'{expr} * on (node) group_left ({pl}) kube_node_labels{{{pl}!=""}}'
    return f'label_replace({joined}, "pool", "$1", "{pl}", "(.+)")'


def _utilisation_rules(spec: PlatformSpec) -> list[dict[str, Any]]:
    tl = tier_label(spec.label_domain)
    per_node = f'label_replace({SM_ACTIVE_GPU}, "node", "$1", "{DCGM_NODE_LABEL}", "(.+)")'
    per_tier = f'{SM_ACTIVE_GPU} * on (namespace, pod) group_left ({tl}) kube_pod_labels{{{tl}!=""}}'
    return [
        {"record": SM_ACTIVE_GPU, "expr": "avg_over_time(DCGM_FI_PROF_SM_ACTIVE[1h])"},
        {"record": SM_ACTIVE_POOL, "expr": f"avg by (pool) ({_node_pool_join(spec, per_node)})"},
        {"record": SM_ACTIVE_TIER, "expr": f'avg by (tier) (label_replace({per_tier}, "tier", "$1", "{tl}", "(.+)"))'},
    ]


def _allocation_rules(spec: PlatformSpec) -> list[dict[str, Any]]:
    tl = tier_label(spec.label_domain)
    pl = pool_label(spec.label_domain)
    requests = (
        'kube_pod_container_resource_requests{resource=~"nvidia_com_.+"}'
        ' * on (namespace, pod) group_left () (kube_pod_status_phase{phase="Running"} == 1)'
        f' * on (namespace, pod) group_left ({tl}) kube_pod_labels{{{tl}!=""}}'
    )
    allocatable = 'kube_node_status_allocatable{resource=~"nvidia_com_.+"}'
    nodes = f'count by (pool) (label_replace(kube_node_labels{{{pl}!=""}}, "pool", "$1", "{pl}", "(.+)"))'
    return [
        {
            "record": UNITS_ALLOCATED,
            "expr": f'sum by (namespace, tier, resource) (label_replace({requests}, "tier", "$1", "{tl}", "(.+)"))',
        },
        {"record": UNITS_ALLOCATABLE, "expr": f"sum by (pool, resource) ({_node_pool_join(spec, allocatable)})"},
        {"record": UNITS_EXPECTED, "expr": f"{UNITS_PER_NODE} * on (pool) group_left () {nodes}"},
    ]


def _cost_rules() -> list[dict[str, Any]]:
    by_ns = f"{UNITS_ALLOCATED} * on (tier, resource) group_left (pool) {RATE}"
    return [
        {"record": COST_BY_NAMESPACE, "expr": f"sum by (namespace, tier, pool) ({by_ns})"},
        {
            "record": COST_BY_TEAM,
            "expr": f"sum by (team, tier) ({COST_BY_NAMESPACE} * on (namespace) group_left (team) {TEAM_INFO})",
        },
    ]


def _static(record: str, value: float, labels: dict[str, str]) -> dict[str, Any]:
    # repr() round-trips a float exactly, so Prometheus holds the catalog figure bit for bit.
    return {"record": record, "expr": f"vector({value!r})", "labels": labels}


def catalog_rules(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Static series from the spec: $/hour per tier unit, units per node per pool, team of each namespace."""
    rules = []
    for tier in spec.tiers:
        pool = spec.pools_by_name.get(tier.pool)
        if pool is None:
            continue
        price = pool_price(spec, pool)
        resource = spec.resource_of(tier)
        rate = float(price.unit_hourly.get(resource, 0.0))
        labels = {
            "tier": tier.name,
            "pool": pool.name,
            "resource": ksm_resource(advertised_resource(pool, resource)),
            "instance_type": pool.instance_type,
            "sharing": pool.sharing.mode.value,
        }
        rules.append(_static(RATE, rate, labels))
    for pool in spec.node_pools:
        # by resource name: a map's key order does not survive other languages' programs (protobuf Struct)
        for resource, n in sorted(pool_price(spec, pool).capacity.units_per_node.items()):
            labels = {"pool": pool.name, "resource": ksm_resource(advertised_resource(pool, resource))}
            rules.append(_static(UNITS_PER_NODE, float(n), labels))
    for team in spec.teams:
        rules.extend(_static(TEAM_INFO, 1.0, {"team": team.name, "namespace": ns}) for ns in team.namespaces)
    return rules


def rule_groups(spec: PlatformSpec) -> list[dict[str, Any]]:
    """The rule groups (catalog, recording, alerts) shared by the PrometheusRule and the promtool file."""
    _check_durations(spec)
    return [
        {"name": "gpu-platform.catalog", "interval": "1m", "rules": catalog_rules(spec)},
        {
            "name": "gpu-platform.recording",
            "interval": "1m",
            "rules": [*_utilisation_rules(spec), *_allocation_rules(spec), *_cost_rules()],
        },
        {"name": "gpu-platform.alerts", "rules": alert_rules(spec)},
    ]


def rule_metadata_labels(spec: PlatformSpec) -> dict[str, str]:
    """Labels the PrometheusRule and ServiceMonitors carry so the Prometheus selects them."""
    prom = spec.monitoring.prometheus
    return {PART_OF_LABEL: PLATFORM_NAME, "release": prom.release_name, **prom.rule_labels}


def render_prometheus_rule(spec: PlatformSpec) -> dict[str, Any]:
    """The `monitoring.coreos.com/v1` PrometheusRule with every group."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "gpu-platform",
            "namespace": spec.monitoring.prometheus.namespace,
            "labels": rule_metadata_labels(spec),
        },
        "spec": {"groups": rule_groups(spec)},
    }
