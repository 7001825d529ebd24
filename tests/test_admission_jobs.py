"""Kueue job routing: the CEL evaluated against sample Jobs, JobSets, PyTorchJobs and RayJobs (celpy)."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from gpu_platform.admission.jobs import JOB_KINDS, QUEUE_PODS_ROUTE, job_kinds, route_name, workload_route_spec
from gpu_platform.admission.render import render_admission, render_routes
from gpu_platform.load import parse_spec
from helpers.admission import TIER, matches, mutate

QUEUE, PRIORITY = "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"


def template(tier=None):
    labels = {TIER: tier} if tier else {}
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "main", "image": "python:3.11"}]}}


def job(labels=None, tier=None, **meta):
    metadata = {"name": "j", **meta, **({"labels": labels} if labels is not None else {})}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": {"template": template(tier)}}


def jobset(*tiers):
    replicated = [{"name": f"r{i}", "template": {"spec": {"template": template(t)}}} for i, t in enumerate(tiers)]
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {"replicatedJobs": replicated},
    }


def pytorchjob(master, worker):
    specs = {
        "Master": {"replicas": 1, "template": template(master)},
        "Worker": {"replicas": 2, "template": template(worker)},
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt", "labels": {}},
        "spec": {"pytorchReplicaSpecs": specs},
    }


def rayjob(head, worker):
    cluster = {
        "headGroupSpec": {"template": template(head)},
        "workerGroupSpecs": [{"groupName": "gpu", "template": template(worker)}],
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "rj"},
        "spec": {"entrypoint": "python train.py", "rayClusterSpec": cluster},
    }


def labels(obj):
    return obj["metadata"].get("labels")


def _spec(dev_data, **changes):
    data = copy.deepcopy(dev_data)
    for path, value in changes.items():
        target = data
        *parents, last = path.split("__")
        for p in parents:
            target = target.setdefault(p, {})
        target[last] = value
    return parse_spec(data)


@pytest.fixture(params=["1.33", "1.36"], ids=["kyverno", "mutating-admission-policy"])
def docs(request, dev_data):
    return render_admission(_spec(dev_data, kubernetesVersion=request.param))


def test_team_job_without_labels_gets_the_team_queue(docs):
    assert labels(mutate(docs, job(), "research")) == {QUEUE: "research"}
    assert labels(mutate(docs, job({"app": "x"}), "prod-inference")) == {"app": "x", QUEUE: "production"}


def test_labels_the_user_set_are_kept(docs):
    mine = job({QUEUE: "mine", PRIORITY: "gpu-ci"}, tier="train")
    assert labels(mutate(docs, mine, "research")) == labels(mine)
    assert labels(mutate(docs, job({PRIORITY: "gpu-ci"}, tier="train"), "research")) == {
        PRIORITY: "gpu-ci",
        QUEUE: "research",
    }


def test_exempt_and_unknown_namespaces_are_untouched(docs):
    for namespace in ("kube-system", "kueue-system", "default"):
        assert mutate(docs, job(tier="train"), namespace) == job(tier="train")


def test_tier_label_on_the_pod_template_sets_the_workload_priority_class(docs):
    routed = mutate(docs, job(tier="inference"), "prod-inference")
    assert labels(routed) == {QUEUE: "production", PRIORITY: "gpu-inference"}
    assert labels(mutate(docs, job(tier="gold"), "research")) == {QUEUE: "research"}  # unknown tier: queue only
    assert mutate(docs, routed, "prod-inference") == routed  # a second pass adds nothing


def test_jobs_controlled_by_a_queued_workload_are_left_to_their_parent(docs):
    child = job(
        ownerReferences=[
            {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js", "uid": "1", "controller": True}
        ]
    )
    assert mutate(docs, child, "research") == child
    from_cron = job(
        ownerReferences=[{"apiVersion": "batch/v1", "kind": "CronJob", "name": "c", "uid": "2", "controller": True}]
    )
    assert labels(mutate(docs, from_cron, "research")) == {QUEUE: "research"}  # Kueue queues a CronJob's Jobs


def test_other_kinds_take_the_tier_their_pod_templates_agree_on(docs):
    assert labels(mutate(docs, jobset("train", "train"), "research")) == {QUEUE: "research", PRIORITY: "gpu-train"}
    assert labels(mutate(docs, jobset("train", "dev"), "research")) == {QUEUE: "research"}  # mixed: no priority
    assert labels(mutate(docs, pytorchjob("train", "train"), "research")) == {QUEUE: "research", PRIORITY: "gpu-train"}
    # Ray: a CPU head without the tier label, GPU workers with it.
    assert labels(mutate(docs, rayjob(None, "dev"), "research")) == {QUEUE: "research", PRIORITY: "gpu-dev"}
    existing_cluster = {**rayjob(None, None), "spec": {"clusterSelector": {"ray.io/cluster": "c"}}}
    assert labels(mutate(docs, existing_cluster, "research")) == {QUEUE: "research"}


ROUTES = [
    f"gpu-platform-route-{k}"
    for k in ("job", "jobset", "pytorchjob", "rayjob", "deployment", "statefulset", "leaderworkerset")
]


def _route(docs, name):
    return next(d for d in docs if d["metadata"]["name"] == name and not d["kind"].endswith("Binding"))


def test_each_workload_route_matches_its_own_kind(docs):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    objects = {"job": job(), "jobset": jobset(), "pytorchjob": pytorchjob(None, None), "rayjob": rayjob(None, None)}
    for kind, obj in objects.items():
        route = _route(docs, f"gpu-platform-route-{kind}")
        assert matches(route, obj) and not matches(route, pod)
        assert not any(matches(_route(docs, f"gpu-platform-route-{k}"), obj) for k in objects if k != kind)
        assert route["spec"]["failurePolicy"] == "Ignore"
    pod_routes = [
        d
        for d in docs
        if d["kind"] in ("MutatingPolicy", "MutatingAdmissionPolicy") and d["metadata"]["name"] not in ROUTES
    ]
    assert pod_routes and not any(matches(d, job()) for d in pod_routes)


def test_routes_follow_the_enabled_integrations(dev_data):
    def routes(**changes):
        return [
            d["metadata"]["name"]
            for d in render_routes(_spec(dev_data, **changes))
            if d["metadata"]["name"] in ROUTES + [QUEUE_PODS_ROUTE]
        ]

    assert routes() == [QUEUE_PODS_ROUTE, *ROUTES]
    assert routes(scheduling__kueue__integrations=["batch/job"]) == ["gpu-platform-route-job"]
    assert routes(scheduling__kueue__integrations=["batch/job", "pod"]) == [QUEUE_PODS_ROUTE, "gpu-platform-route-job"]
    rule = workload_route_spec(_spec(dev_data), JOB_KINDS["jobset.x-k8s.io/jobset"])["matchConstraints"][
        "resourceRules"
    ]
    assert rule == [
        {
            "apiGroups": ["jobset.x-k8s.io"],
            "apiVersions": ["v1alpha2"],
            "operations": ["CREATE"],
            "resources": ["jobsets"],
        }
    ]
    assert [route_name(k) for k in job_kinds(_spec(dev_data))] == ROUTES


def test_nothing_is_rendered_without_kueue_or_a_known_integration(dev_data):
    def names(**changes):
        return [d["metadata"]["name"] for d in render_routes(_spec(dev_data, **changes))]

    assert set(ROUTES) <= set(names())
    assert not set(ROUTES + [QUEUE_PODS_ROUTE]) & set(names(scheduling__kueue__enabled=False))
    assert not set(ROUTES) & set(names(scheduling__kueue__integrations=["kubeflow.org/tfjob"]))
    assert names(admission__mutation="none") == []


def test_only_the_tier_pod_routes_remain_with_kueue_disabled_and_a_job_is_untouched(dev_data):
    docs = render_admission(_spec(dev_data, scheduling__kueue__enabled=False))
    assert mutate(docs, job(tier="train"), "research") == job(tier="train")


@pytest.mark.parametrize("version", ["1.33", "1.36"])
def test_workload_routes_validate_against_kubernetes_schemas(dev_data, version):
    spec = _spec(dev_data, kubernetesVersion=version, admission__mutation="mutating-admission-policy")
    docs = [d for d in render_routes(spec) if d["metadata"]["name"] in ROUTES + [QUEUE_PODS_ROUTE]]
    assert [d["kind"] for d in docs[:2]] == ["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"]
    for doc in docs:
        kubernetes_validate.validate(doc, f"{version}.0", strict=True)


def test_kyverno_workload_routes_are_mutating_admission_policies_plus_namespace_selector(dev_data):
    docs = [d for d in render_routes(_spec(dev_data, kubernetesVersion="1.33")) if d["metadata"]["name"] in ROUTES]
    assert len(docs) == len(ROUTES)
    for doc in docs:
        assert (doc["apiVersion"], doc["kind"]) == ("policies.kyverno.io/v1", "MutatingPolicy")
        assert "kube-system" in doc["spec"]["matchConstraints"]["namespaceSelector"]["matchExpressions"][0]["values"]
        as_map = {**doc, "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy"}
        kubernetes_validate.validate(as_map, "1.36.0", strict=True)


def test_component_creates_the_workload_routes_under_the_component(pulumi_mocks, dev_data):
    from gpu_platform.admission import GpuAdmission, GpuAdmissionArgs

    spec = _spec(dev_data, kubernetesVersion="1.36")
    rec = pulumi_mocks.run(lambda: GpuAdmission("adm", GpuAdmissionArgs(spec=spec)))
    for name in ROUTES:
        policy = rec.named(f"adm-mutatingadmissionpolicy-{name}")
        binding = rec.named(f"adm-mutatingadmissionpolicybinding-{name}")
        assert policy.type == "kubernetes:admissionregistration.k8s.io/v1:MutatingAdmissionPolicy"
        assert binding.inputs["spec"]["policyName"] == name
        assert policy.parent_name == binding.parent_name == "adm"
        assert policy.inputs["spec"]["failurePolicy"] == "Ignore"


def test_validate_warns_about_integrations_admission_does_not_label(dev_data):
    from gpu_platform.admission.checks import check_admission

    spec = _spec(dev_data, scheduling__kueue__integrations=["batch/job", "pod", "kubeflow.org/tfjob"])
    [finding] = [f for f in check_admission(spec) if f.path.startswith("scheduling.")]
    assert (finding.path, finding.severity) == ("scheduling.kueue.integrations[2]", "warning")
    assert finding.message.startswith(
        "'kubeflow.org/tfjob' workloads are not given the team's kueue.x-k8s.io/queue-name"
    )
    assert not [f for f in check_admission(_spec(dev_data)) if f.path.startswith("scheduling.")]
    off = _spec(dev_data, scheduling__kueue__integrations=["kubeflow.org/tfjob"], admission__mutation="none")
    assert not [f for f in check_admission(off) if f.path.startswith("scheduling.")]


def test_readme_job_example_is_admitted_as_documented(dev_spec):
    import re

    import yaml

    from helpers.docs import section

    readme = section("admission")
    block = next(
        b for b in re.findall(r"```yaml\n(.*?)```", readme, flags=re.DOTALL) if b.startswith("# Job submitted")
    )
    namespace = re.match(r"# Job submitted in namespace (\S+)", block).group(1)
    documented = dict(re.findall(r"#\s+(kueue\.x-k8s\.io/[\w-]+): (\S+)", block))
    routed = mutate(render_admission(dev_spec), yaml.safe_load(block), namespace)
    assert documented and labels(routed) == documented


def gpu_template(tier, resource="nvidia.com/gpu", count="1"):
    t = template(tier)
    t["spec"]["containers"][0]["resources"] = {"limits": {resource: count}}
    return t


def _templates(obj):
    from gpu_platform.admission.jobs import JOB_KINDS

    kind = next(k for k in JOB_KINDS.values() if k.kind == obj["kind"])
    out = []
    for slot in kind.slots:
        target = obj
        try:
            for part in slot.pointer.split("/")[1:]:
                target = target[int(part)] if isinstance(target, list) else target[part]
        except (KeyError, IndexError):
            continue
        out.append(target)
    return out


def test_a_dev_job_selects_only_the_dev_flavor_of_a_multi_flavor_cluster_queue(docs, dev_spec):
    """Kueue picks the first flavor with quota unless the pod templates select one flavor's node labels
    (kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go flavorSelector); research's ClusterQueue
    lists gpu-train before gpu-dev, so an unrouted dev Job was admitted on (and charged to) gpu-train."""
    from gpu_platform.queues.kueue import render_kueue_objects

    dev_job = {**job(), "spec": {"template": gpu_template("dev")}}
    [routed] = _templates(mutate(docs, dev_job, "research"))
    flavors = {
        d["metadata"]["name"]: d["spec"] for d in render_kueue_objects(dev_spec) if d["kind"] == "ResourceFlavor"
    }
    fits = [
        name
        for name, f in flavors.items()
        if all(routed["spec"]["nodeSelector"].get(k, v) == v for k, v in f["nodeLabels"].items())
    ]
    assert fits == ["gpu-dev"]
    tolerated = {(t["key"], t.get("value")) for t in routed["spec"]["tolerations"]}
    assert ("gpu.example.com/gpu-pool", "gpu-dev") in tolerated and (
        "gpu.example.com/gpu-pool",
        "gpu-train",
    ) not in tolerated


def test_every_pod_template_of_every_kind_gets_its_tiers_placement_and_resource(docs):
    """Kueue counts the Workload's requests from the job's templates: a MIG tier's template must ask for the MIG
    resource, or the ClusterQueue (covering only nvidia.com/mig-*) never admits it."""
    objects = [
        {**job(), "spec": {"template": gpu_template("inference")}},
        {
            **jobset(),
            "spec": {
                "replicatedJobs": [
                    {"name": f"r{i}", "template": {"spec": {"template": gpu_template(t)}}}
                    for i, t in enumerate(["inference", "finetune"])
                ]
            },
        },
        {
            **pytorchjob(None, None),
            "spec": {
                "pytorchReplicaSpecs": {
                    "Master": {"template": gpu_template("inference")},
                    "Worker": {"template": gpu_template("finetune")},
                }
            },
        },
        {
            **rayjob(None, None),
            "spec": {
                "rayClusterSpec": {
                    "headGroupSpec": {"template": template()},
                    "workerGroupSpecs": [{"template": gpu_template("finetune")}],
                }
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {"template": gpu_template("inference")},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "s"},
            "spec": {"template": gpu_template("inference")},
        },
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "l"},
            "spec": {
                "leaderWorkerTemplate": {
                    "leaderTemplate": gpu_template("inference"),
                    "workerTemplate": gpu_template("inference"),
                }
            },
        },
    ]
    mig = {"inference": "nvidia.com/mig-3g.40gb", "finetune": "nvidia.com/mig-2g.20gb"}
    for obj in objects:
        routed = mutate(docs, obj, "prod-inference")
        assert labels(routed)[QUEUE] == "production", obj["kind"]
        for t in _templates(routed):
            tier = t["metadata"]["labels"].get(TIER)
            if tier is None:
                assert "nodeSelector" not in t["spec"]  # the Ray head asks for no GPU and carries no tier
                continue
            assert t["spec"]["nodeSelector"] == {"gpu.example.com/gpu-pool": "gpu-infer"}, obj["kind"]
            assert t["spec"]["containers"][0]["resources"] == {"limits": {mig[tier]: "1"}}, obj["kind"]
        assert mutate(docs, routed, "prod-inference") == routed  # a second pass changes nothing


def test_a_tier_the_namespace_is_not_granted_is_not_placed(docs):
    train_job = {**job(), "spec": {"template": gpu_template("train")}}
    [t] = _templates(mutate(docs, train_job, "prod-inference"))  # production has no train quota
    assert "nodeSelector" not in t["spec"] and t["spec"]["containers"][0]["resources"] == {
        "limits": {"nvidia.com/gpu": "1"}
    }


def test_gpu_workloads_without_a_granted_tier_are_denied_before_kueue_charges_a_quota(docs):
    from gpu_platform.admission.render import DENY_WORKLOADS_POLICY
    from helpers.admission import validate

    def verdict(obj, namespace):
        return validate(docs, mutate(docs, obj, namespace), namespace, policy_name=DENY_WORKLOADS_POLICY)

    untiered = {**job(), "spec": {"template": gpu_template(None)}}
    assert verdict(untiered, "research").startswith(f"pod templates requesting nvidia.com/* need the label {TIER}")
    mixed = {
        **jobset(),
        "spec": {
            "replicatedJobs": [
                {"name": "a", "template": {"spec": {"template": gpu_template("train")}}},
                {"name": "b", "template": {"spec": {"template": gpu_template("gold")}}},
            ]
        },
    }
    assert 'got "gold"' in verdict(mixed, "research")
    assert verdict({**job(), "spec": {"template": gpu_template("train")}}, "prod-inference") == (
        f"pod templates with the label {TIER}=train are not allowed in namespace prod-inference: no team with a "
        "quota for tier train owns it"
    )
    assert verdict({**job(), "spec": {"template": gpu_template("train")}}, "research") is None
    assert verdict(job(), "research") is None  # no GPU: nothing to classify
