"""Kueue job routing: the CEL evaluated against sample Jobs, JobSets, PyTorchJobs and RayJobs (celpy)."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest
from gpu_platform.admission.jobs import JOB_KINDS, JOB_ROUTE, job_route_spec
from gpu_platform.admission.render import render_admission, render_routes
from gpu_platform.load import parse_spec
from test_admission import TIER, matches, mutate

QUEUE, PRIORITY = "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"


def template(tier=None):
    labels = {TIER: tier} if tier else {}
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "main", "image": "python:3.11"}]}}


def job(labels=None, tier=None, **meta):
    metadata = {"name": "j", **meta, **({"labels": labels} if labels is not None else {})}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": {"template": template(tier)}}


def jobset(*tiers):
    replicated = [{"name": f"r{i}", "template": {"spec": {"template": template(t)}}} for i, t in enumerate(tiers)]
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
            "spec": {"replicatedJobs": replicated}}


def pytorchjob(master, worker):
    specs = {"Master": {"replicas": 1, "template": template(master)}, "Worker": {"replicas": 2, "template": template(worker)}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt", "labels": {}},
            "spec": {"pytorchReplicaSpecs": specs}}


def rayjob(head, worker):
    cluster = {"headGroupSpec": {"template": template(head)},
               "workerGroupSpecs": [{"groupName": "gpu", "template": template(worker)}]}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "rj"},
            "spec": {"entrypoint": "python train.py", "rayClusterSpec": cluster}}


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
    assert mutate(docs, mine, "research") == mine
    assert labels(mutate(docs, job({PRIORITY: "gpu-ci"}, tier="train"), "research")) == {PRIORITY: "gpu-ci",
                                                                                         QUEUE: "research"}


def test_exempt_and_unknown_namespaces_are_untouched(docs):
    for namespace in ("kube-system", "kueue-system", "default"):
        assert mutate(docs, job(tier="train"), namespace) == job(tier="train")


def test_tier_label_on_the_pod_template_sets_the_workload_priority_class(docs):
    routed = mutate(docs, job(tier="inference"), "prod-inference")
    assert labels(routed) == {QUEUE: "production", PRIORITY: "gpu-inference"}
    assert labels(mutate(docs, job(tier="gold"), "research")) == {QUEUE: "research"}  # unknown tier: queue only
    assert mutate(docs, routed, "prod-inference") == routed  # a second pass adds nothing


def test_jobs_controlled_by_a_queued_workload_are_left_to_their_parent(docs):
    child = job(ownerReferences=[{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js",
                                  "uid": "1", "controller": True}])
    assert mutate(docs, child, "research") == child
    from_cron = job(ownerReferences=[{"apiVersion": "batch/v1", "kind": "CronJob", "name": "c", "uid": "2",
                                      "controller": True}])
    assert labels(mutate(docs, from_cron, "research")) == {QUEUE: "research"}  # Kueue queues a CronJob's Jobs


def test_other_kinds_take_the_tier_their_pod_templates_agree_on(docs):
    assert labels(mutate(docs, jobset("train", "train"), "research")) == {QUEUE: "research", PRIORITY: "gpu-train"}
    assert labels(mutate(docs, jobset("train", "dev"), "research")) == {QUEUE: "research"}  # mixed: no priority
    assert labels(mutate(docs, pytorchjob("train", "train"), "research")) == {QUEUE: "research", PRIORITY: "gpu-train"}
    # Ray: a CPU head without the tier label, GPU workers with it.
    assert labels(mutate(docs, rayjob(None, "dev"), "research")) == {QUEUE: "research", PRIORITY: "gpu-dev"}
    existing_cluster = {**rayjob(None, None), "spec": {"clusterSelector": {"ray.io/cluster": "c"}}}
    assert labels(mutate(docs, existing_cluster, "research")) == {QUEUE: "research"}


def test_pod_routes_and_job_route_match_their_own_kinds(docs):
    [job_route] = [d for d in docs if d["metadata"]["name"] == JOB_ROUTE and not d["kind"].endswith("Binding")]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    assert not matches(job_route, pod)
    assert all(matches(job_route, o) for o in (job(), jobset(), pytorchjob(None, None), rayjob(None, None)))
    pod_routes = [d for d in docs if d["kind"] in ("MutatingPolicy", "MutatingAdmissionPolicy") and d is not job_route]
    assert pod_routes and not any(matches(d, job()) for d in pod_routes)
    assert job_route["spec"]["failurePolicy"] == "Ignore"


def test_rules_follow_the_enabled_integrations(dev_data):
    def rules(**changes):
        return job_route_spec(_spec(dev_data, **changes))["matchConstraints"]["resourceRules"]

    assert rules() == [
        {"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["jobs"]},
        {"apiGroups": ["jobset.x-k8s.io"], "apiVersions": ["v1alpha2"], "operations": ["CREATE"], "resources": ["jobsets"]},
        {"apiGroups": ["kubeflow.org"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pytorchjobs"]},
        {"apiGroups": ["ray.io"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["rayjobs"]},
    ]
    only_jobs = rules(scheduling__kueue__integrations=["batch/job", "pod"])
    assert [r["resources"] for r in only_jobs] == [["jobs"]]
    assert set(JOB_KINDS) == {"batch/job", "jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob", "ray.io/rayjob"}


def test_nothing_is_rendered_without_kueue_or_a_known_integration(dev_data):
    def names(**changes):
        return [d["metadata"]["name"] for d in render_routes(_spec(dev_data, **changes))]

    assert JOB_ROUTE in names()
    assert JOB_ROUTE not in names(scheduling__kueue__enabled=False)
    assert JOB_ROUTE not in names(scheduling__kueue__integrations=["pod"])
    assert names(admission__mutation="none") == []


def test_only_the_tier_pod_routes_remain_with_kueue_disabled_and_a_job_is_untouched(dev_data):
    docs = render_admission(_spec(dev_data, scheduling__kueue__enabled=False))
    assert mutate(docs, job(tier="train"), "research") == job(tier="train")


@pytest.mark.parametrize("version", ["1.33", "1.36"])
def test_job_route_validates_against_kubernetes_schemas(dev_data, version):
    spec = _spec(dev_data, kubernetesVersion=version, admission__mutation="mutating-admission-policy")
    route = [d for d in render_routes(spec) if d["metadata"]["name"] == JOB_ROUTE]
    assert [d["kind"] for d in route] == ["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"]
    for doc in route:
        kubernetes_validate.validate(doc, f"{version}.0", strict=True)


def test_kyverno_job_route_is_a_mutating_admission_policy_plus_namespace_selector(dev_data):
    [doc] = [d for d in render_routes(_spec(dev_data, kubernetesVersion="1.33")) if d["metadata"]["name"] == JOB_ROUTE]
    assert (doc["apiVersion"], doc["kind"]) == ("policies.kyverno.io/v1", "MutatingPolicy")
    assert "kube-system" in doc["spec"]["matchConstraints"]["namespaceSelector"]["matchExpressions"][0]["values"]
    as_map = {**doc, "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy"}
    kubernetes_validate.validate(as_map, "1.36.0", strict=True)


def test_component_creates_the_job_route_under_the_component(pulumi_mocks, dev_data):
    from gpu_platform.admission import GpuAdmission, GpuAdmissionArgs

    spec = _spec(dev_data, kubernetesVersion="1.36")
    rec = pulumi_mocks.run(lambda: GpuAdmission("adm", GpuAdmissionArgs(spec=spec)))
    policy = rec.named(f"adm-mutatingadmissionpolicy-{JOB_ROUTE}")
    binding = rec.named(f"adm-mutatingadmissionpolicybinding-{JOB_ROUTE}")
    assert policy.type == "kubernetes:admissionregistration.k8s.io/v1:MutatingAdmissionPolicy"
    assert binding.inputs["spec"]["policyName"] == JOB_ROUTE
    assert policy.parent_name == binding.parent_name == "adm"
    assert policy.inputs["spec"]["failurePolicy"] == "Ignore"


def test_validate_warns_about_integrations_admission_does_not_label(dev_data):
    from gpu_platform.admission.checks import check_admission

    spec = _spec(dev_data, scheduling__kueue__integrations=["batch/job", "pod", "kubeflow.org/tfjob"])
    [finding] = [f for f in check_admission(spec) if f.path.startswith("scheduling.")]
    assert (finding.path, finding.severity) == ("scheduling.kueue.integrations[2]", "warning")
    assert finding.message.startswith("'kubeflow.org/tfjob' workloads are not given the team's kueue.x-k8s.io/queue-name")
    assert not [f for f in check_admission(_spec(dev_data)) if f.path.startswith("scheduling.")]
    off = _spec(dev_data, scheduling__kueue__integrations=["kubeflow.org/tfjob"], admission__mutation="none")
    assert not [f for f in check_admission(off) if f.path.startswith("scheduling.")]


def test_readme_job_example_is_admitted_as_documented(dev_spec):
    import re

    import yaml
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, flags=re.DOTALL) if b.startswith("# Job submitted"))
    namespace = re.match(r"# Job submitted in namespace (\S+)", block).group(1)
    documented = dict(re.findall(r"#\s+(kueue\.x-k8s\.io/[\w-]+): (\S+)", block))
    routed = mutate(render_admission(dev_spec), yaml.safe_load(block), namespace)
    assert documented and labels(routed) == documented
