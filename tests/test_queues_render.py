"""Queues render: flavors, team ClusterQueues and their resource groups, pool isolation, priorities, Volcano,
goldens."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT
from gpu_platform.contract import pool_label_key, pool_labels, pool_taints
from gpu_platform.load import load_spec, parse_spec
from gpu_platform.queues.kueue import resource_groups
from gpu_platform.queues.render import render_queue_artifacts, render_queues
from gpu_platform.synth import dump_documents
from helpers.specs import team, tier

EXAMPLE = ROOT / "examples" / "aws-1000-a100.yaml"


def _by_kind(docs, kind):
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def _shared_resource_spec(dev_data):
    """A team whose tiers put nvidia.com/gpu on two pools and mig-3g.40gb on two MIG pools."""
    data = copy.deepcopy(dev_data)
    data["nodePools"].append(
        {
            "name": "gpu-infer2",
            "instanceType": "p4de.24xlarge",
            "maxSize": 2,
            "sharing": {"mode": "mig", "migLayout": {"3g.40gb": 2}},
        }
    )
    data["tiers"].append(
        {"name": "batch-infer", "pool": "gpu-infer2", "resource": "nvidia.com/mig-3g.40gb", "priority": 30000}
    )
    data["teams"].append(
        {
            "name": "mixed",
            "namespaces": ["mixed"],
            "cohort": "ml",
            "quotas": {"train": 8, "ci": 4, "inference": 2, "finetune": 2, "batch-infer": 4},
            "lendingLimit": {"train": 4},
        }
    )
    return parse_spec(data)


# --- ResourceFlavors -------------------------------------------------------------------------------------------


def test_one_flavor_per_pool_with_pool_label_and_taint_tolerations(dev_spec):
    flavors = _by_kind(render_queues(dev_spec).kueue, "ResourceFlavor")
    assert list(flavors) == [p.name for p in dev_spec.node_pools]
    for pool in dev_spec.node_pools:
        f = flavors[pool.name]["spec"]
        assert f["nodeLabels"] == {pool_label_key(dev_spec.label_domain): pool.name}
        assert f["nodeLabels"].items() <= pool_labels(dev_spec, pool).items()
        assert [(t["key"], t["value"], t["effect"]) for t in f["tolerations"]] == [
            (t["key"], t["value"], t["effect"]) for t in pool_taints(dev_spec, pool)
        ]
        assert "nodeTaints" not in f


# --- ClusterQueues ----------------------------------------------------------------------------------------------


def test_cluster_queue_per_team_with_cohort_namespaces_quota_preemption(dev_spec):
    cqs = _by_kind(render_queues(dev_spec).kueue, "ClusterQueue")
    research, production = cqs["research"]["spec"], cqs["production"]["spec"]
    assert research["cohortName"] == "ml" and "cohortName" not in production
    assert research["namespaceSelector"]["matchExpressions"][0]["values"] == ["research"]
    assert research["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    assert production["preemption"] == {"withinClusterQueue": "LowerPriority"}
    assert research["queueingStrategy"] == "BestEffortFIFO"
    # train (exclusive) and dev (time-sliced) both request nvidia.com/gpu: one group, two flavors
    [group] = research["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/gpu"]
    assert [(f["name"], f["resources"]) for f in group["flavors"]] == [
        ("gpu-train", [{"name": "nvidia.com/gpu", "nominalQuota": 16, "borrowingLimit": 8}]),
        ("gpu-dev", [{"name": "nvidia.com/gpu", "nominalQuota": 8}]),
    ]
    # inference and finetune: two MIG resources of one pool share its flavor
    [group] = production["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb"]
    assert group["flavors"] == [
        {
            "name": "gpu-infer",
            "resources": [
                {"name": "nvidia.com/mig-2g.20gb", "nominalQuota": 4},
                {"name": "nvidia.com/mig-3g.40gb", "nominalQuota": 12},
            ],
        }
    ]


def test_resource_groups_merge_pools_sharing_a_resource(dev_data):
    spec = _shared_resource_spec(dev_data)
    groups = resource_groups(spec, team(spec, "mixed"))
    assert [(g.resources, list(g.flavors)) for g in groups] == [
        (["nvidia.com/gpu"], ["gpu-train", "gpu-ci"]),
        (["nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb"], ["gpu-infer", "gpu-infer2"]),
    ]
    infer2 = groups[1].flavors["gpu-infer2"]
    assert infer2["nvidia.com/mig-2g.20gb"].nominal == 0 and infer2["nvidia.com/mig-2g.20gb"].borrowing == 0
    assert infer2["nvidia.com/mig-3g.40gb"].nominal == 4 and infer2["nvidia.com/mig-3g.40gb"].borrowing is None
    assert groups[0].flavors["gpu-train"]["nvidia.com/gpu"].lending == 4


def test_fair_sharing_weight_only_when_enabled(dev_data):
    assert "fairSharing" not in _by_kind(render_queues(parse_spec(dev_data)).kueue, "ClusterQueue")["research"]["spec"]
    dev_data["scheduling"]["kueue"]["fairSharing"] = True
    team(dev_data, "research")["weight"] = 3
    spec = parse_spec(dev_data)
    assert _by_kind(render_queues(spec).kueue, "ClusterQueue")["research"]["spec"]["fairSharing"] == {"weight": 3}
    cfg = yaml.safe_load(render_queues(spec).kueue_release["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert cfg["fairSharing"]["preemptionStrategies"] == ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]


def test_local_queue_per_namespace_and_cohorts(dev_data):
    team(dev_data, "research")["namespaces"] = ["research", "research-2"]
    dev_data["scheduling"]["cohorts"] = [{"name": "org"}, {"name": "ml", "parent": "org"}]
    q = render_queues(parse_spec(dev_data))
    lqs = [
        (d["metadata"]["namespace"], d["metadata"]["name"], d["spec"]["clusterQueue"])
        for d in q.kueue
        if d["kind"] == "LocalQueue"
    ]
    assert lqs == [
        ("research", "research", "research"),
        ("research-2", "research", "research"),
        ("prod-inference", "production", "production"),
    ]
    cohorts = _by_kind(q.kueue, "Cohort")
    assert cohorts["org"]["spec"] == {} and cohorts["ml"]["spec"] == {"parentName": "org"}
    assert [d["metadata"]["name"] for d in q.namespaces] == ["research", "research-2", "prod-inference"]


# --- Isolation: a tier's workloads can be admitted only on its own pool's flavor --------------------------------


def _admissible_flavors(kueue_docs, cq_name, resource, node_selector):
    """Flavors of a ClusterQueue Kueue could assign a pod set requesting `resource` with `node_selector`.

    Kueue skips a flavor whose nodeLabels conflict with the pod's nodeSelector (same key, other value) and
    needs quota (nominal > 0, or borrowing allowed) for the resource in that flavor.
    """
    flavors = _by_kind(kueue_docs, "ResourceFlavor")
    cq = _by_kind(kueue_docs, "ClusterQueue")[cq_name]
    out = []
    for group in cq["spec"].get("resourceGroups", []):
        if resource not in group["coveredResources"]:
            continue
        for f in group["flavors"]:
            entry = next(r for r in f["resources"] if r["name"] == resource)
            usable = entry["nominalQuota"] > 0 or entry.get("borrowingLimit", 1) > 0 and "cohortName" in cq["spec"]
            labels = flavors[f["name"]]["spec"].get("nodeLabels", {})
            compatible = all(node_selector.get(k, v) == v for k, v in labels.items())
            if usable and compatible:
                out.append(f["name"])
    return out


@pytest.mark.parametrize("which", ["dev", "shared", "example"])
def test_tier_admitted_only_on_its_own_pools_flavor(which, dev_data):
    if which == "example" and not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} not present")
    spec = {
        "dev": lambda: parse_spec(dev_data),
        "shared": lambda: _shared_resource_spec(dev_data),
        "example": lambda: load_spec(EXAMPLE),
    }[which]()
    docs = render_queues(spec).kueue
    flavors = _by_kind(docs, "ResourceFlavor")
    checked = 0
    for tm in spec.teams:
        for tier_name in tm.quotas:
            tier = spec.tiers_by_name[tier_name]
            selector = {pool_label_key(spec.label_domain): tier.pool}
            assert _admissible_flavors(docs, tm.name, spec.resource_of(tier), selector) == [tier.pool]
            # the flavor's labels are the pool's node labels and no other pool's
            for pool in spec.node_pools:
                fits = flavors[tier.pool]["spec"]["nodeLabels"].items() <= pool_labels(spec, pool).items()
                assert fits == (pool.name == tier.pool)
            checked += 1
    assert checked == sum(len(t.quotas) for t in spec.teams) > 0


def test_isolation_check_would_fail_without_the_node_selector(dev_spec):
    """Negative control: without the pool selector research's nvidia.com/gpu could land on either pool."""
    docs = render_queues(dev_spec).kueue
    assert _admissible_flavors(docs, "research", "nvidia.com/gpu", {}) == ["gpu-train", "gpu-dev"]


# --- Priorities -------------------------------------------------------------------------------------------------


def test_priority_ladder_and_workload_priority_classes(dev_data):
    tier(dev_data, "ci")["preemptionPolicy"] = "Never"
    q = render_queues(parse_spec(dev_data))
    pcs = q.priority_classes
    assert [(p["metadata"]["name"], p["value"]) for p in pcs] == [
        ("gpu-train", 100000),
        ("gpu-inference", 50000),
        ("gpu-finetune", 40000),
        ("gpu-dev", 10000),
        ("gpu-ci", 1000),
    ]
    assert pcs[-1]["preemptionPolicy"] == "Never" and pcs[0]["preemptionPolicy"] == "PreemptLowerPriority"
    assert not any(p["globalDefault"] for p in pcs)
    wpcs = _by_kind(q.kueue, "WorkloadPriorityClass")
    assert {n: d["value"] for n, d in wpcs.items()} == {p["metadata"]["name"]: p["value"] for p in pcs}


def test_default_ladder_when_tiers_omit_priority(dev_data):
    """Without explicit values the ladder is pre-training > inference > fine-tune > dev > CI, on both kinds."""
    for t in dev_data["tiers"]:
        t.pop("priority", None)
    q = render_queues(parse_spec(dev_data))
    ladder = [p["metadata"]["name"] for p in q.priority_classes]
    assert ladder == ["gpu-train", "gpu-inference", "gpu-finetune", "gpu-dev", "gpu-ci"]
    values = [p["value"] for p in q.priority_classes]
    assert values == sorted(set(values), reverse=True)  # strictly decreasing: no two tiers tie
    wpcs = _by_kind(q.kueue, "WorkloadPriorityClass")
    assert [wpcs[n]["value"] for n in ladder] == values


# --- Volcano ----------------------------------------------------------------------------------------------------


def _volcano(dev_data, kueue: bool):
    dev_data["scheduling"] = {"kueue": {"enabled": kueue}, "volcano": {"enabled": True}}
    team(dev_data, "research")["lendingLimit"] = {"train": 6}
    return render_queues(parse_spec(dev_data))


def test_volcano_alone_owns_quota(dev_data):
    q = _volcano(dev_data, kueue=False)
    assert q.kueue == [] and q.kueue_release is None
    queues = _by_kind(q.volcano, "Queue")
    research, production = queues["research"]["spec"], queues["production"]["spec"]
    assert research["reclaimable"] is True and research["weight"] == 1
    assert research["deserved"] == {"nvidia.com/gpu": 24}
    # train: 16 + borrowing 8; dev: unlimited borrowing -> the pool's 4 x 8 x 4 = 128
    assert research["capability"] == {"nvidia.com/gpu": 24 + 128}
    assert research["guarantee"] == {"resource": {"nvidia.com/gpu": 10}}  # train 16 - lends 6
    assert production["guarantee"] == {"resource": {"nvidia.com/mig-3g.40gb": 12, "nvidia.com/mig-2g.20gb": 4}}
    conf = yaml.safe_load(q.volcano_release["values"]["custom"]["scheduler_config_override"])
    assert "reclaim" in conf["actions"] and "preempt" in conf["actions"]
    assert {"name": "gang", "enablePreemptable": False} in conf["tiers"][0]["plugins"]


def test_kueue_admits_volcano_schedules(dev_data):
    q = _volcano(dev_data, kueue=True)
    for queue in q.volcano:
        assert queue["spec"]["reclaimable"] is False and "guarantee" not in queue["spec"]
    cq = _by_kind(q.kueue, "ClusterQueue")["production"]["spec"]
    nominal = {r["name"]: r["nominalQuota"] for g in cq["resourceGroups"] for f in g["flavors"] for r in f["resources"]}
    assert _by_kind(q.volcano, "Queue")["production"]["spec"]["capability"] == nominal  # no cohort: ceiling = nominal
    conf = yaml.safe_load(q.volcano_release["values"]["custom"]["scheduler_config_override"])
    assert conf["actions"] == "enqueue, allocate, backfill"
    assert any(p["name"] == "gang" for p in conf["tiers"][0]["plugins"])


# --- Releases and synth ----------------------------------------------------------------------------------------


def test_kueue_release_pins_chart_and_manages_team_namespaces(dev_spec):
    rel = render_queues(dev_spec).kueue_release
    assert (rel["chart"], rel["repository"], rel["version"], rel["namespace"]) == (
        "oci://registry.k8s.io/kueue/charts/kueue",
        "",
        "0.19.2",
        "kueue-system",
    )
    assert rel["values"]["controllerManager"]["manager"]["image"]["tag"] == "v0.19.2"
    cfg = yaml.safe_load(rel["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert cfg["integrations"]["frameworks"] == list(dev_spec.scheduling.kueue.integrations)
    assert cfg["managedJobsNamespaceSelector"]["matchExpressions"][0]["values"] == ["prod-inference", "research"]
    assert "fairSharing" not in cfg


def test_kueue_accounts_only_for_the_gpu_resources_queues_cover(dev_spec):
    """Kueue refuses a pod set requesting a resource no resource group covers, so CPU, memory and NICs are
    excluded from its accounting while every quota'd GPU resource still counts."""
    cfg = yaml.safe_load(
        render_queues(dev_spec).kueue_release["values"]["managerConfig"]["controllerManagerConfigYaml"]
    )
    excluded = cfg["resources"]["excludeResourcePrefixes"]
    for requested in ("cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "vpc.amazonaws.com/efa"):
        assert any(requested.startswith(p) for p in excluded), requested
    covered = {
        r
        for d in render_queues(dev_spec).kueue
        if d["kind"] == "ClusterQueue"
        for g in d["spec"]["resourceGroups"]
        for r in g["coveredResources"]
    }
    assert covered and not [r for r in covered if any(r.startswith(p) for p in excluded)]


def test_version_and_values_overrides(dev_data):
    dev_data["scheduling"] = {
        "kueue": {"version": "0.19.3", "valuesOverrides": {"enablePrometheus": True}},
        "volcano": {"enabled": True, "version": "1.15.0"},
    }
    q = render_queues(parse_spec(dev_data))
    assert q.kueue_release["version"] == "0.19.3" and q.kueue_release["values"]["enablePrometheus"] is True
    assert q.volcano_release["version"] == "1.15.0"
    assert q.volcano_release["values"]["basic"]["image_tag_version"] == "v1.15.0"
    assert q.volcano_release["repository"] == "https://volcano-sh.github.io/helm-charts"


def test_synth_files(dev_data):
    names = [(a.kind, a.name) for a in render_queue_artifacts(parse_spec(dev_data))]
    assert names == [
        ("kubernetes", "team-namespaces"),
        ("kubernetes", "priorities"),
        ("kubernetes", "kueue"),
        ("helm", "kueue"),
    ]
    dev_data["scheduling"] = {"kueue": {"enabled": False}, "volcano": {"enabled": True}, "createNamespaces": False}
    names = [(a.kind, a.name) for a in render_queue_artifacts(parse_spec(dev_data))]
    assert names == [
        ("kubernetes", "team-namespace-labels"),
        ("kubernetes", "priorities"),
        ("kubernetes", "volcano"),
        ("helm", "volcano"),
    ]


def test_synth_registers_queues(dev_spec):
    from gpu_platform.synth import RENDERERS, render_all

    assert RENDERERS["queues"] is render_queue_artifacts
    assert {("helm", "kueue"), ("kubernetes", "kueue")} <= {(a.kind, a.name) for a in render_all(dev_spec)}


def _golden_text(spec) -> str:
    return "".join(f"# {a.kind}/{a.name}.yaml\n{dump_documents(a.documents)}" for a in render_queue_artifacts(spec))


def test_golden_dev(golden, dev_spec):
    golden("queues/dev.yaml", _golden_text(dev_spec))


def test_golden_aws_1000_a100(golden):
    if not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} not present")
    golden("queues/aws-1000-a100.yaml", _golden_text(load_spec(EXAMPLE)))


# --- README: the copy-paste Job lands on the right pool ----------------------------------------------------------


def _readme_docs():
    import re

    from helpers.docs import section as doc_section

    section = doc_section("queues")
    return [d for b in re.findall(r"```yaml\n(.*?)```", section, re.S) for d in yaml.safe_load_all(b) if d]


def test_readme_jobs_match_rendered_objects(dev_data):
    dev_data["scheduling"]["volcano"] = {"enabled": True}
    spec = parse_spec(dev_data)
    q = render_queues(spec)
    docs = _readme_docs()
    jobs = [d for d in docs if d["kind"] == "Job"]
    assert len(jobs) >= 2
    for job in jobs:
        ns, labels, pod = job["metadata"]["namespace"], job["metadata"]["labels"], job["spec"]["template"]
        lq = next(
            d
            for d in q.kueue
            if d["kind"] == "LocalQueue"
            and d["metadata"]["namespace"] == ns
            and d["metadata"]["name"] == labels["kueue.x-k8s.io/queue-name"]
        )
        tier = spec.tiers_by_name[pod["metadata"]["labels"][f"{spec.label_domain}/gpu-tier"]]
        assert labels["kueue.x-k8s.io/priority-class"] in _by_kind(q.kueue, "WorkloadPriorityClass")
        assert pod["spec"]["priorityClassName"] in {p["metadata"]["name"] for p in q.priority_classes}
        assert pod["spec"]["priorityClassName"] == f"gpu-{tier.name}"
        selector = pod["spec"]["nodeSelector"]
        assert selector == {pool_label_key(spec.label_domain): tier.pool}
        [resource] = pod["spec"]["containers"][0]["resources"]["limits"]
        assert resource == spec.resource_of(tier)
        assert _admissible_flavors(q.kueue, lq["spec"]["clusterQueue"], resource, selector) == [tier.pool]
        # after admission the flavor's tolerations let the pod onto the pool's tainted nodes
        tolerated = {
            (t["key"], t["value"], t["effect"])
            for t in _by_kind(q.kueue, "ResourceFlavor")[tier.pool]["spec"]["tolerations"]
        }
        pool = spec.pools_by_name[tier.pool]
        assert {(t["key"], t["value"], t["effect"]) for t in pool_taints(spec, pool)} <= tolerated
        group = pod["metadata"].get("annotations", {}).get("scheduling.k8s.io/group-name")
        if pod["spec"].get("schedulerName") == "volcano":
            pg = next(d for d in docs if d["kind"] == "PodGroup" and d["metadata"]["name"] == group)
            assert pg["metadata"]["namespace"] == ns and pg["spec"]["minMember"] <= job["spec"]["parallelism"]
            assert pg["spec"]["queue"] in _by_kind(q.volcano, "Queue")


def test_kueue_holds_workloads_until_they_name_a_queue_and_rereads_them_after_later_webhooks(dev_spec):
    """Kueue's webhook runs before Kyverno's (configurations are called in name order); without reinvocation a
    Job labelled only by Kyverno was not suspended and started outside quota."""
    import yaml as _yaml

    from gpu_platform.queues.releases import render_kueue_release

    values = render_kueue_release(dev_spec)["values"]
    assert values["mutatingWebhook"] == {"reinvocationPolicy": "IfNeeded"}
    config = _yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["manageJobsWithoutQueueName"] is True
    team_namespaces = sorted(ns for t in dev_spec.teams for ns in t.namespaces)
    assert config["managedJobsNamespaceSelector"]["matchExpressions"][0]["values"] == team_namespaces


def test_serving_workloads_are_kueue_integrations_by_default(dev_spec):
    """Deployments, StatefulSets, LeaderWorkerSets and plain pods count against the inference quotas."""
    import yaml as _yaml

    from gpu_platform.queues.releases import render_kueue_release

    config = _yaml.safe_load(render_kueue_release(dev_spec)["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert {"pod", "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset"} <= set(
        config["integrations"]["frameworks"]
    )


def test_volcano_enforces_deserved_and_puts_team_podgroups_in_the_team_queue(dev_data):
    """`proportion` ignores a queue's deserved; `capacity` enforces it. PodGroups land in `default` unless the
    namespace annotation names the team's queue and the chart's podgroup mutating webhook is on."""
    import yaml as _yaml

    from gpu_platform.queues.releases import render_volcano_release
    from gpu_platform.queues.render import render_namespaces

    data = copy.deepcopy(dev_data)
    data["scheduling"] = {**data.get("scheduling", {}), "volcano": {"enabled": True}}
    spec = parse_spec(data)
    values = render_volcano_release(spec)["values"]["custom"]
    plugins = [
        p["name"] for tier in _yaml.safe_load(values["scheduler_config_override"])["tiers"] for p in tier["plugins"]
    ]
    assert "capacity" in plugins and "proportion" not in plugins
    assert "/podgroups/mutate" in values["enabled_admissions"].split(",")
    ns = {d["metadata"]["name"]: d["metadata"] for d in render_namespaces(spec)}
    assert ns["research"]["annotations"] == {"scheduling.volcano.sh/queue-name": "research"}
    assert ns["prod-inference"]["annotations"] == {"scheduling.volcano.sh/queue-name": "production"}
    assert "annotations" not in render_namespaces(parse_spec(dev_data))[0]["metadata"]  # no Volcano: no annotation


def test_team_namespaces_carry_the_team_and_a_grant_per_tier_it_has_quota_for(dev_spec):
    from gpu_platform.queues.render import render_namespaces

    labels = {d["metadata"]["name"]: d["metadata"]["labels"] for d in render_namespaces(dev_spec)}
    assert labels["research"] == {
        "gpu.example.com/team": "research",
        "tier.gpu.example.com/train": "true",
        "tier.gpu.example.com/dev": "true",
    }
    assert labels["prod-inference"]["gpu.example.com/team"] == "production"
