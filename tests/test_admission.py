"""Admission objects: the CEL evaluated by explain's admission chain against sample pods, the objects against
Kubernetes schemas."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from gpu_platform.admission.render import (
    DENY_EPHEMERAL_POLICY,
    DENY_POLICY,
    DENY_WORKLOADS_POLICY,
    mutation_engine,
    render_admission,
    render_admission_artifacts,
    render_deny,
    render_routes,
)
from gpu_platform.errors import RenderError
from gpu_platform.load import parse_spec
from gpu_platform.spec import MutationEngine, PlatformSpec
from helpers.admission import QUEUE, TIER, admit, gpu_pod, mutate, validate


@pytest.fixture
def docs(dev_spec):
    return render_admission(dev_spec)


def test_unlabelled_gpu_pod_is_denied(docs):
    msg = admit(docs, gpu_pod(), "research")
    assert msg == (
        "pods requesting nvidia.com/* need the label gpu.example.com/gpu-tier set to a known tier "
        '(train, inference, finetune, dev, ci); got ""'
    )


def test_unknown_tier_and_wrong_resource_are_denied(docs):
    assert 'got "gold"' in admit(docs, gpu_pod({TIER: "gold"}), "research")
    wrong = gpu_pod({TIER: "train"}, {"limits": {"nvidia.com/mig-1g.10gb": "1"}})
    assert admit(docs, wrong, "research") == (
        "container 'main' requests nvidia.com/mig-1g.10gb, which tier train does not allow: request nvidia.com/gpu "
        "instead (tiers and their resources: train: nvidia.com/gpu; inference: nvidia.com/mig-3g.40gb; "
        "finetune: nvidia.com/mig-2g.20gb; dev: nvidia.com/gpu; ci: nvidia.com/gpu)"
    )


def test_wrong_resource_in_an_init_container_or_requests_only_is_named(docs):
    pod = gpu_pod({TIER: "train"})
    pod["spec"]["initContainers"] = [{"name": "warm", "resources": {"requests": {"nvidia.com/mig-2g.20gb": "1"}}}]
    assert validate(docs, pod, "research").startswith(
        "container 'warm' requests nvidia.com/mig-2g.20gb, which tier train does not allow"
    )


def test_updates_are_denied_only_when_they_change_the_tier(docs):
    legacy = gpu_pod()  # admitted before the policy existed, no tier label
    finalized = copy.deepcopy(legacy)
    finalized["metadata"]["finalizers"] = []
    assert validate(docs, finalized, "research", old=legacy) is None  # e.g. a finalizer removed: not blocked
    tiered = gpu_pod({TIER: "train"})
    assert validate(docs, gpu_pod(), "research", old=tiered).startswith("pods requesting nvidia.com/* need the label")
    assert validate(docs, gpu_pod({TIER: "inference"}), "prod-inference", old=tiered).startswith(
        "container 'main' requests nvidia.com/gpu, which tier inference does not allow"
    )


def test_cpu_pods_get_only_the_team_queue_and_exempt_namespaces_are_not_touched(docs):
    cpu = gpu_pod(resources={"limits": {"cpu": "1"}})
    assert admit(docs, cpu, "research") is None
    # Kueue's pod integration holds every pod of a team namespace until it names a queue.
    assert mutate(docs, cpu, "research") == {**cpu, "metadata": {"name": "p", "labels": {QUEUE: "research"}}}
    assert mutate(docs, cpu, "kube-system") == cpu
    assert admit(docs, gpu_pod(), "kube-system") is None  # exempt system namespace


def test_a_tier_is_honoured_only_in_namespaces_granted_it(docs):
    for namespace in ("research", "default"):  # research has no inference quota; default is no team's
        pod = gpu_pod({TIER: "inference"}, resources={"limits": {"nvidia.com/mig-3g.40gb": "1"}})
        routed = mutate(docs, pod, namespace)
        assert "nodeSelector" not in routed["spec"] and "priorityClassName" not in routed["spec"]
        assert validate(docs, routed, namespace) == (
            f"pods with the label {TIER}=inference are not allowed in namespace {namespace}: no team with a quota "
            "for tier inference owns it (team namespaces carry the label tier.gpu.example.com/<tier>=true for each "
            "tier of the team)"
        )
    assert (
        admit(
            docs, gpu_pod({TIER: "inference"}, resources={"limits": {"nvidia.com/mig-3g.40gb": "1"}}), "prod-inference"
        )
        is None
    )


def test_inference_pod_is_routed_and_rewritten(docs):
    pod = gpu_pod({TIER: "inference"})
    routed = mutate(docs, pod, "prod-inference")
    spec = routed["spec"]
    assert spec["nodeSelector"] == {"gpu.example.com/gpu-pool": "gpu-infer"}
    assert {
        "key": "gpu.example.com/gpu-pool",
        "operator": "Equal",
        "value": "gpu-infer",
        "effect": "NoSchedule",
    } in spec["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    assert spec["containers"][0]["resources"] == {
        "limits": {"nvidia.com/mig-3g.40gb": "1"},
        "requests": {"nvidia.com/mig-3g.40gb": "1"},
    }
    assert spec["priorityClassName"] == "gpu-inference" and spec["priority"] == 50000
    assert routed["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "production"
    assert validate(docs, routed, "prod-inference") is None


def test_routing_keeps_existing_selectors_tolerations_and_queue(docs):
    pod = gpu_pod(
        {TIER: "train", "kueue.x-k8s.io/queue-name": "mine"},
        nodeSelector={"zone": "a"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    )
    routed = mutate(docs, pod, "research")["spec"]
    assert routed["nodeSelector"] == {"zone": "a", "gpu.example.com/gpu-pool": "gpu-train"}
    assert [t["key"] for t in routed["tolerations"]] == ["nvidia.com/gpu", "gpu.example.com/gpu-pool"]
    assert mutate(docs, pod, "research")["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "mine"
    assert routed["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1"}  # train uses whole GPUs


def test_broken_mutator_fails_open_and_the_deny_still_holds(docs):
    routes = [d for d in docs if d["kind"] in ("MutatingPolicy", "MutatingAdmissionPolicy")]
    assert routes and all(d["spec"]["failurePolicy"] == "Ignore" for d in routes)
    deny = next(d for d in docs if d["kind"] == "ValidatingAdmissionPolicy")
    assert deny["spec"]["failurePolicy"] == "Fail"
    # Without the mutation (mutator down), a MIG-tier pod asking for a whole GPU is still denied.
    msg = validate(docs, gpu_pod({TIER: "inference"}), "prod-inference")
    assert msg and msg.startswith(
        "container 'main' requests nvidia.com/gpu, which tier inference does not allow: "
        "request nvidia.com/mig-3g.40gb instead"
    )


def test_init_containers_are_checked_and_rewritten(docs):
    pod = gpu_pod({TIER: "finetune"})
    pod["spec"]["initContainers"] = [{"name": "warm", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]
    routed = mutate(docs, pod, "prod-inference")
    assert routed["spec"]["initContainers"][0]["resources"]["limits"] == {"nvidia.com/mig-2g.20gb": "1"}
    assert validate(docs, routed, "prod-inference") is None


def test_engine_choice_by_kubernetes_version(dev_data):
    def engine(version, mode=None):
        data = copy.deepcopy(dev_data)
        data["kubernetesVersion"] = version
        if mode:
            data["admission"] = {**data.get("admission", {}), "mutation": mode}
        return mutation_engine(parse_spec(data))

    assert engine("1.33") == (MutationEngine.KYVERNO, None)
    assert engine("1.36") == (MutationEngine.MUTATING_ADMISSION_POLICY, "admissionregistration.k8s.io/v1")
    assert engine("1.34", "mutating-admission-policy")[1] == "admissionregistration.k8s.io/v1beta1"
    assert engine("1.32", "mutating-admission-policy")[1] == "admissionregistration.k8s.io/v1alpha1"
    assert engine("1.36", "kyverno") == (MutationEngine.KYVERNO, None)
    old = PlatformSpec.model_validate(
        {**dev_data, "kubernetesVersion": "1.31", "admission": {"mutation": "mutating-admission-policy"}}
    )
    with pytest.raises(RenderError, match=r"needs Kubernetes >= 1.32, kubernetesVersion is '1.31'"):
        mutation_engine(old)  # the renderer refuses too; `validate` reports it first (test_spec_rules)


@pytest.mark.parametrize("version", ["1.32", "1.33", "1.34", "1.36"])
def test_objects_validate_against_kubernetes_schemas(dev_data, version):
    data = copy.deepcopy(dev_data)
    data["kubernetesVersion"] = version
    data["admission"] = {"mutation": "mutating-admission-policy"}
    spec = parse_spec(data)
    for doc in render_admission(spec):
        kubernetes_validate.validate(doc, f"{version}.0", strict=True)


def test_kyverno_policies_are_mutating_admission_policies_plus_namespace_selector(dev_spec):
    kyverno = [d for d in render_routes(dev_spec) if d["kind"] == "MutatingPolicy"]
    # a route per tier, the team queue on pods, and a route per workload kind Kueue queues
    assert len(kyverno) == len(dev_spec.tiers) + 1 + len(dev_spec.scheduling.kueue.integrations) - 1
    for doc in kyverno:
        as_map = {**doc, "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy"}
        kubernetes_validate.validate(as_map, "1.36.0", strict=True)
        assert "kyverno" in doc["spec"]["matchConstraints"]["namespaceSelector"]["matchExpressions"][0]["values"]


def test_artifacts_and_kyverno_release(dev_spec, dev_data):
    arts = render_admission_artifacts(dev_spec)
    assert [(a.kind, a.name) for a in arts] == [
        ("kubernetes", "admission"),
        ("kubernetes", "namespace-guard"),
        ("helm", "kyverno"),
    ]
    release = arts[2].documents[0]
    assert (release["chart"], release["version"], release["namespace"]) == ("kyverno", "3.7.0", "kyverno")
    data = copy.deepcopy(dev_data)
    data["admission"] = {"denyUnclassified": False, "mutation": "none"}
    assert render_admission(parse_spec(data)) == []
    data["admission"] = {"mutation": "none"}
    assert [(d["kind"], d["metadata"]["name"]) for d in render_admission(parse_spec(data))] == [
        ("ValidatingAdmissionPolicy", DENY_POLICY),
        ("ValidatingAdmissionPolicyBinding", DENY_POLICY),
        ("ValidatingAdmissionPolicy", DENY_EPHEMERAL_POLICY),
        ("ValidatingAdmissionPolicyBinding", DENY_EPHEMERAL_POLICY),
        ("ValidatingAdmissionPolicy", DENY_WORKLOADS_POLICY),
        ("ValidatingAdmissionPolicyBinding", DENY_WORKLOADS_POLICY),
    ]
    assert render_deny(dev_spec)[1]["spec"]["policyName"] == DENY_POLICY


def test_component_registers_policies_under_the_component(pulumi_mocks, dev_spec):
    from gpu_platform.admission import GpuAdmission, GpuAdmissionArgs

    rec = pulumi_mocks.run(lambda: GpuAdmission("adm", GpuAdmissionArgs(spec=dev_spec)))
    [comp] = rec.of_type("gpu-platform:index:GpuAdmission")
    assert comp.name == "adm"
    release = rec.named("adm-kyverno")
    assert release.type == "kubernetes:helm.sh/v3:Release" and release.parent_name == "adm"
    vap = rec.named(f"adm-validatingadmissionpolicy-{DENY_POLICY}")
    assert vap.type == "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
    assert vap.inputs["spec"]["failurePolicy"] == "Fail" and vap.parent_name == "adm"
    routes = rec.of_type("kubernetes:policies.kyverno.io/v1:MutatingPolicy")
    assert sorted(r.name for r in routes) == sorted(
        [f"adm-mutatingpolicy-gpu-platform-route-{t.name}" for t in dev_spec.tiers]
        + ["adm-mutatingpolicy-gpu-platform-queue-pods"]
        + [
            f"adm-mutatingpolicy-gpu-platform-route-{k}"
            for k in ("job", "jobset", "pytorchjob", "rayjob", "deployment", "statefulset", "leaderworkerset")
        ]
    )
    assert all(r.parent_name == "adm" for r in routes)


def test_synth_writes_admission(dev_spec):
    from gpu_platform.synth import render_all

    names = {(a.kind, a.name) for a in render_all(dev_spec)}
    assert {("kubernetes", "admission"), ("helm", "kyverno")} <= names


def test_notes_say_what_the_cluster_must_offer(dev_data):
    def notes(version, mode="auto"):
        data = copy.deepcopy(dev_data)
        data["kubernetesVersion"] = version
        data["admission"] = {"mutation": mode}
        return tuple(str(n) for n in render_admission_artifacts(parse_spec(data))[0].notes)

    assert notes("1.33") == ("admission: tiered pods routed by kyverno",)
    assert notes("1.36") == (
        "admission: tiered pods routed by mutating-admission-policy (admissionregistration.k8s.io/v1)",
    )
    [_, gate] = notes("1.34", "mutating-admission-policy")
    assert "--runtime-config=admissionregistration.k8s.io/v1beta1=true" in gate
    [_, kyverno] = notes("1.31")
    assert "supports Kubernetes 1.32-1.35, kubernetesVersion is '1.31'" in kyverno


def test_admission_does_not_grow_with_teams_or_namespaces(monkeypatch):
    """Policies read the team and its tier grants from namespace labels, so 1,000 teams (2,000 namespaces)
    render the same admission objects as 10 teams with the same tiers."""
    from conftest import ROOT

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from specgen import make_spec

    few, many = (parse_spec(make_spec(10_000, teams)) for teams in (10, 1_000))
    assert few.tiers == many.tiers and len(many.teams) == 100 * len(few.teams)
    assert render_admission(few) == render_admission(many)
