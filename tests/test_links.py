"""The links between the domains (DESIGN "What each pool becomes"), checked end to end on rendered objects.

For every team and every tier it has quota for, a plain GPU pod carrying only the tier label is routed by the
admission mutation, and what it becomes must agree with what the other domains rendered: the node pool's labels
and taints, the GPU Operator's config entries, the Kueue flavor and queues, the priority classes, the deny
policy and the policy pack.
"""

from __future__ import annotations

import pytest

from conftest import ROOT
from gpu_platform.admission.render import render_admission
from gpu_platform.contract import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    MIG_CONFIG_LABEL,
    pool_label_key,
    pool_labels,
    tier_label_key,
)
from gpu_platform.gpu_operator.render import render_gpu_operator
from gpu_platform.load import load_spec
from gpu_platform.nodepools.render import render_node_pool
from gpu_platform.policy import config_from_spec
from gpu_platform.policy.workloads import workload_gaps
from gpu_platform.queues.render import render_queues
from helpers.admission import gpu_pod, mutate, validate

SPECS = [ROOT / "Pulumi.dev.yaml", ROOT / "examples" / "aws-1000-a100.yaml", ROOT / "examples" / "gke-a2.yaml"]


def _by_kind(docs, kind):
    return {(d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs if d["kind"] == kind}


def _cases(path):
    spec = load_spec(path)
    return [(path.name, team.name, ns, tier) for team in spec.teams for ns in team.namespaces for tier in team.quotas]


@pytest.fixture(scope="module")
def rendered():
    out = {}
    for path in SPECS:
        spec = load_spec(path)
        out[path.name] = (spec, render_admission(spec), render_queues(spec), render_gpu_operator(spec))
    return out


@pytest.mark.parametrize(("stack", "team", "namespace", "tier"), [c for p in SPECS for c in _cases(p)])
def test_a_tiered_pod_lands_where_every_domain_expects(rendered, stack, team, namespace, tier):
    spec, admission, queues, operator = rendered[stack]
    t = spec.tiers_by_name[tier]
    pool = spec.pools_by_name[t.pool]
    routed = mutate(admission, gpu_pod({tier_label_key(spec.label_domain): tier}), namespace, queues.namespaces)
    pod = routed["spec"]

    # node pool: the selector and tolerations match the pool's labels and taints
    inputs = render_node_pool(spec, pool)["inputs"]
    node = inputs.get("nodeConfig", inputs)  # GKE keeps labels and taints under nodeConfig
    assert pod["nodeSelector"] == {pool_label_key(spec.label_domain): pool.name}
    assert node["labels"][pool_label_key(spec.label_domain)] == pool.name
    tolerated = {(x["key"], x.get("value"), x["effect"]) for x in pod["tolerations"]}
    for taint in node["taints"]:
        effect = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute"}[taint["effect"]]
        assert (taint["key"], taint["value"], effect) in tolerated or (taint["key"], None, effect) in tolerated

    # GPU Operator: the pool's labels name entries that exist, and the entry advertises the tier's resource
    labels = pool_labels(spec, pool)
    entry = operator.device_plugin_configs[labels[DEVICE_PLUGIN_CONFIG_LABEL]]
    if MIG_CONFIG_LABEL in labels:
        assert labels[MIG_CONFIG_LABEL] in operator.mig_parted_config["mig-configs"]
        assert entry["flags"]["migStrategy"] == "mixed"
    resource = spec.resource_of(t)
    assert pod["containers"][0]["resources"] == {"limits": {resource: "1"}, "requests": {resource: "1"}}

    # Kueue: queue label -> LocalQueue -> the team's ClusterQueue, which covers the resource on the pool's flavor
    local = _by_kind(queues.kueue, "LocalQueue")[(namespace, routed["metadata"]["labels"]["kueue.x-k8s.io/queue-name"])]
    cq = _by_kind(queues.kueue, "ClusterQueue")[(None, local["spec"]["clusterQueue"])]
    assert cq["metadata"]["name"] == team
    flavor = _by_kind(queues.kueue, "ResourceFlavor")[(None, pool.name)]
    assert flavor["spec"]["nodeLabels"] == pod["nodeSelector"]
    quota = [
        r
        for g in cq["spec"]["resourceGroups"]
        for f in g["flavors"]
        if f["name"] == pool.name
        for r in f["resources"]
        if r["name"] == resource
    ]
    assert quota and quota[0]["nominalQuota"] >= spec.teams[[x.name for x in spec.teams].index(team)].quotas[tier]

    # priorities: the class exists with the tier's value
    pc = _by_kind(queues.priority_classes, "PriorityClass")[(None, pod["priorityClassName"])]
    assert pc["value"] == spec.priority_of(t) == pod["priority"]

    # guardrails: the deny policy admits the routed pod and the policy pack finds nothing to report
    assert validate(admission, routed, namespace, namespaces=queues.namespaces) is None
    assert workload_gaps(routed, config_from_spec(spec)) == []
