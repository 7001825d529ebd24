"""Admission under attack: every evasion of the deny, evaluated with celpy against the rendered policy.

Each case is a fixture in tests/fixtures/hostile/admission.yaml: a pod, the namespace it is created in, whether
the routing mutation ran (it fails open, so the deny must hold without it) and the expected verdict.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from gpu_platform.admission.render import exempt_namespaces, render_admission
from gpu_platform.load import parse_spec
from helpers.admission import mutate, validate
from helpers.specs import team

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "hostile" / "admission.yaml").read_text())


def _pod(case: dict) -> dict:
    spec = copy.deepcopy(case.get("spec") or {})
    spec.setdefault(
        "containers",
        [{"name": "main", "image": "python:3.11", **({"resources": case["resources"]} if "resources" in case else {})}],
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": case.get("labels") or {}},
        "spec": spec,
    }


@pytest.fixture(scope="module")
def docs(request):
    from conftest import ROOT
    from gpu_platform.load import read_spec_data

    return render_admission(parse_spec(read_spec_data(ROOT / "Pulumi.dev.yaml")))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hostile_pod(docs, case):
    """A CREATE of the case's pod; with `old`, an UPDATE from the pod with that spec (and `old_labels`, else the
    same labels; resources alike)."""
    pod = _pod(case)
    if case.get("mutation", True) and "old" not in case:
        pod = mutate(docs, pod, case["namespace"])
    old = (
        _pod({**case, "spec": case["old"], "labels": case.get("old_labels", case.get("labels"))})
        if "old" in case
        else None
    )
    verdict = validate(docs, pod, case["namespace"], old=old)
    if case["expect"] == "admitted":
        assert verdict is None, verdict
    else:
        assert verdict is not None, "admitted"
        assert case["expect"] in verdict, verdict


def test_exempt_namespaces_follow_what_is_installed(dev_data):
    dev_data["scheduling"] = {"kueue": {"enabled": True}, "volcano": {"enabled": False}}
    names = exempt_namespaces(parse_spec(dev_data))
    assert "volcano-system" not in names and {"kube-system", "gpu-operator", "kueue-system", "monitoring"} <= set(names)
    dev_data["scheduling"]["volcano"]["enabled"] = True
    dev_data["monitoring"] = {"prometheus": {"install": False}}
    names = exempt_namespaces(parse_spec(dev_data))
    assert "volcano-system" in names and "monitoring" not in names


def test_exempt_namespaces_are_configurable(dev_data):
    dev_data["admission"] = {
        "exemptNamespaces": ["kube-system"],
        "additionalExemptNamespaces": ["falco"],
        "mutation": "mutating-admission-policy",
    }
    dev_data["kubernetesVersion"] = "1.36"
    assert exempt_namespaces(parse_spec(dev_data)) == ["kube-system", "falco"]


def _namespace_verdict(docs, labels, old_labels=None, annotations=None, name="research"):
    """The namespace guard's verdict on creating (or updating from `old_labels`) a namespace."""
    from gpu_platform.admission.render import NAMESPACE_GUARD_POLICY
    from gpu_platform.explain.admission import Request, build_chain
    from gpu_platform.explain.workloads import WorkloadKind

    def ns(lbls):
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/metadata.name": name, **lbls},
                **({"annotations": annotations} if annotations else {}),
            },
        }

    guard = [d for d in docs if d["metadata"]["name"] == NAMESPACE_GUARD_POLICY]
    kind = WorkloadKind("Namespace", "", ("v1",), "namespaces", "", None, "")
    old = ns(old_labels) if old_labels is not None else None
    result = build_chain(guard, []).validate(ns(labels), Request("", {}, kind, "v1", name, old_object=old))
    return next((s.message for s in result.steps if s.denied), None)


@pytest.fixture(scope="module")
def guard_docs():
    from conftest import ROOT
    from gpu_platform.admission.render import render_namespace_guard
    from gpu_platform.load import read_spec_data

    return render_namespace_guard(parse_spec(read_spec_data(ROOT / "Pulumi.dev.yaml")))


RESEARCH = {
    "gpu.example.com/team": "research",
    "tier.gpu.example.com/train": "true",
    "tier.gpu.example.com/dev": "true",
}


def test_a_tenant_cannot_grant_its_namespace_a_tier(guard_docs):
    msg = _namespace_verdict(guard_docs, {**RESEARCH, "tier.gpu.example.com/inference": "true"}, old_labels=RESEARCH)
    assert msg.startswith(
        "namespace research may not set the label tier.gpu.example.com/inference=true: team, "
        "tier grant and queue labels on namespaces are set by the platform"
    ), msg


def test_a_new_namespace_cannot_claim_a_team_or_a_grant(guard_docs):
    assert "gpu.example.com/team=production" in _namespace_verdict(
        guard_docs, {"gpu.example.com/team": "production"}, name="sneaky"
    )
    assert "tier.gpu.example.com/train=false" in _namespace_verdict(
        guard_docs, {"tier.gpu.example.com/train": "false"}, name="sneaky"
    )
    assert "scheduling.volcano.sh/queue-name=production" in _namespace_verdict(
        guard_docs, {}, annotations={"scheduling.volcano.sh/queue-name": "production"}, name="sneaky"
    )


def test_the_platforms_own_labels_and_unrelated_updates_pass(guard_docs):
    assert _namespace_verdict(guard_docs, RESEARCH) is None
    assert _namespace_verdict(guard_docs, {}, name="scratch") is None
    # a namespace whose labels predate a spec change: an update that leaves them alone is not blocked
    stale = {**RESEARCH, "tier.gpu.example.com/ci": "true"}
    assert _namespace_verdict(guard_docs, {**stale, "owner": "x"}, old_labels=stale) is None
    # dropping a grant narrows access: allowed
    assert _namespace_verdict(guard_docs, {"gpu.example.com/team": "research"}, old_labels=RESEARCH) is None


def test_a_grant_label_counts_only_when_true(docs):
    from helpers.admission import NAMESPACES

    granted = copy.deepcopy(NAMESPACES)
    granted["research"]["metadata"]["labels"]["tier.gpu.example.com/train"] = "false"
    pod = _pod({"labels": {"gpu.example.com/gpu-tier": "train"}, "resources": {"limits": {"nvidia.com/gpu": 1}}})
    verdict = validate(docs, pod, "research", namespaces=list(granted.values()))
    assert "no team with a quota for tier train owns it" in verdict


def test_the_deployed_component_carries_every_deny(pulumi_mocks):
    from conftest import ROOT
    from gpu_platform.admission import GpuAdmission, GpuAdmissionArgs
    from gpu_platform.admission.render import (
        DENY_EPHEMERAL_POLICY,
        DENY_POLICY,
        DENY_WORKLOADS_POLICY,
        NAMESPACE_GUARD_POLICY,
    )
    from gpu_platform.load import read_spec_data

    spec = parse_spec(read_spec_data(ROOT / "Pulumi.dev.yaml"))
    rec = pulumi_mocks.run(lambda: GpuAdmission("adm", GpuAdmissionArgs(spec=spec)))
    vaps = {
        r.inputs["metadata"]["name"]
        for r in rec.of_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
    }
    assert vaps == {DENY_POLICY, DENY_EPHEMERAL_POLICY, DENY_WORKLOADS_POLICY, NAMESPACE_GUARD_POLICY}


def _ephemeral_verdict(docs, added, existing=()):
    """The ephemeral-container deny's verdict on adding `added` to a running classified GPU pod."""
    from gpu_platform.admission.render import DENY_EPHEMERAL_POLICY
    from gpu_platform.explain.admission import Request, build_chain
    from gpu_platform.explain.workloads import WorkloadKind
    from helpers.admission import namespace_object

    old = _pod({"labels": {"gpu.example.com/gpu-tier": "train"}, "resources": {"limits": {"nvidia.com/gpu": 1}}})
    old["spec"]["nodeName"] = "ip-10-0-1-5"
    old["spec"]["ephemeralContainers"] = list(existing)
    new = copy.deepcopy(old)
    new["spec"]["ephemeralContainers"] = [*existing, added]
    chain = build_chain([d for d in docs if d["metadata"]["name"] == DENY_EPHEMERAL_POLICY], [])
    kind = WorkloadKind("Pod", "", ("v1",), "pods/ephemeralcontainers", "", None, "")
    result = chain.validate(new, Request("research", namespace_object("research"), kind, "v1", "p", old_object=old))
    return next((s.message for s in result.steps if s.denied), None)


def test_a_debug_container_cannot_expose_every_gpu_of_the_node(docs):
    privileged = {"name": "debugger", "image": "busybox", "securityContext": {"privileged": True}}
    assert _ephemeral_verdict(docs, privileged).startswith(
        "ephemeral container debugger is privileged or sets NVIDIA_VISIBLE_DEVICES"
    )
    env = {"name": "peek", "image": "cuda", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}
    assert "ephemeral container peek" in _ephemeral_verdict(docs, env)
    assert _ephemeral_verdict(docs, {"name": "shell", "image": "busybox"}) is None
    # one added before the policy existed does not block adding a plain one now
    assert _ephemeral_verdict(docs, {"name": "shell", "image": "busybox"}, existing=[privileged]) is None


def _jobset(jobs: int, gpu_job: int) -> dict:
    def job(i):
        container = {"name": "main", "image": "x"}
        if i == gpu_job:
            container["resources"] = {"limits": {"nvidia.com/gpu": 8}}
        return {"name": f"j{i}", "template": {"spec": {"template": {"spec": {"containers": [container]}}}}}

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {"replicatedJobs": [job(i) for i in range(jobs)]},
    }


@pytest.mark.parametrize("gpu_job", [0, 7, 8, 11])
def test_an_unlabelled_gpu_template_is_denied_past_the_routed_indices(docs, gpu_job):
    """Routes patch replicated jobs 0-7 (JSONPatch needs indices); the deny reads every one."""
    from gpu_platform.admission.render import DENY_WORKLOADS_POLICY

    verdict = validate(docs, _jobset(12, gpu_job), "research", policy_name=DENY_WORKLOADS_POLICY)
    assert verdict is not None and "need the label gpu.example.com/gpu-tier" in verdict, verdict


def test_a_ray_job_with_a_ninth_gpu_worker_group_is_denied(docs):
    from gpu_platform.admission.render import DENY_WORKLOADS_POLICY

    groups = [
        {"groupName": f"g{i}", "template": {"spec": {"containers": [{"name": "w", "image": "x"}]}}} for i in range(9)
    ]
    groups[8]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "r"},
        "spec": {
            "rayClusterSpec": {
                "headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "x"}]}}},
                "workerGroupSpecs": groups,
            }
        },
    }
    verdict = validate(docs, job, "research", policy_name=DENY_WORKLOADS_POLICY)
    assert verdict is not None and "need the label" in verdict, verdict


def _tiered_job(tier: str, priority: str | None) -> dict:
    labels = {"kueue.x-k8s.io/priority-class": priority} if priority else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "labels": labels},
        "spec": {
            "template": {
                "metadata": {"labels": {"gpu.example.com/gpu-tier": tier}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "m", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
                },
            }
        },
    }


def test_a_workload_cannot_claim_another_tiers_kueue_priority(docs):
    from gpu_platform.admission.render import DENY_WORKLOADS_POLICY

    verdict = validate(docs, _tiered_job("dev", "gpu-train"), "research", policy_name=DENY_WORKLOADS_POLICY)
    assert verdict == (
        "the label kueue.x-k8s.io/priority-class=gpu-train is not the priority of a tier of this "
        "workload's GPU pod templates (gpu-dev); remove it: admission sets the tier's"
    ), verdict
    assert validate(docs, _tiered_job("dev", "gpu-dev"), "research", policy_name=DENY_WORKLOADS_POLICY) is None
    assert validate(docs, _tiered_job("dev", None), "research", policy_name=DENY_WORKLOADS_POLICY) is None


def _routed_job(priority: str, **template_spec) -> dict:
    job = _tiered_job("dev", priority)
    job["spec"]["template"]["spec"].update({"nodeSelector": {"gpu.example.com/gpu-pool": "gpu-dev"}, **template_spec})
    return job


def test_a_running_workload_cannot_be_relabelled_to_another_tiers_kueue_priority(docs):
    """Kueue accepts a changed priority-class label on a running Job and re-prioritises its Workload (kueue v0.19.2
    pkg/controller/jobframework/validation.go ValidateUpdateForWorkloadPriorityClassName forbids only adding it
    to a running workload and removing it; reconciler.go ensureOneWorkload calls UpdateWorkloadPriority)."""
    from gpu_platform.admission.render import DENY_WORKLOADS_POLICY

    old = _routed_job("gpu-dev")
    verdict = validate(docs, _routed_job("gpu-train"), "research", old=old, policy_name=DENY_WORKLOADS_POLICY)
    assert verdict is not None and "kueue.x-k8s.io/priority-class=gpu-train" in verdict, verdict
    # an update that leaves the label alone (Kueue unsuspending it, a scale) is not checked
    resumed = _routed_job("gpu-dev")
    resumed["spec"]["suspend"] = False
    assert validate(docs, resumed, "research", old=old, policy_name=DENY_WORKLOADS_POLICY) is None
    # nor is one that sets it to the tier's own
    assert (
        validate(docs, _routed_job("gpu-dev"), "research", old=_routed_job(None), policy_name=DENY_WORKLOADS_POLICY)
        is None
    )


def test_a_gpu_template_cannot_carry_another_tiers_priority_class(docs):
    """Without the Kueue label (the route failed open), Kueue takes the priority from the first template that names
    a priorityClassName (kueue v0.19.2 pkg/controller/jobframework/reconciler.go ExtractPriority)."""
    from gpu_platform.admission.render import DENY_WORKLOADS_POLICY

    job = _routed_job(None, priorityClassName="gpu-train")
    verdict = validate(docs, job, "research", policy_name=DENY_WORKLOADS_POLICY)
    assert verdict is not None and verdict.startswith(
        "a pod template sets priorityClassName gpu-train, not the "
        "priority of a tier of this workload's GPU pod templates (gpu-dev)"
    ), verdict
    assert (
        validate(docs, _routed_job(None, priorityClassName="gpu-dev"), "research", policy_name=DENY_WORKLOADS_POLICY)
        is None
    )
    # with the label (the route ran, or set by hand and checked above) Kueue ignores the templates' classes
    assert (
        validate(
            docs, _routed_job("gpu-dev", priorityClassName="gpu-train"), "research", policy_name=DENY_WORKLOADS_POLICY
        )
        is None
    )


def test_a_cpu_head_cannot_carry_the_priority_of_a_ray_job(docs):
    """A RayJob's CPU head comes first: its priorityClassName would be the workload's without the Kueue label."""
    from gpu_platform.admission.render import DENY_WORKLOADS_POLICY

    worker = {
        "groupName": "g",
        "template": {
            "metadata": {"labels": {"gpu.example.com/gpu-tier": "dev"}},
            "spec": {"containers": [{"name": "w", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
        },
    }
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "r"},
        "spec": {
            "rayClusterSpec": {
                "headGroupSpec": {
                    "template": {
                        "spec": {
                            "priorityClassName": "system-cluster-critical",
                            "containers": [{"name": "h", "image": "x"}],
                        }
                    }
                },
                "workerGroupSpecs": [worker],
            }
        },
    }
    verdict = validate(docs, job, "research", policy_name=DENY_WORKLOADS_POLICY)
    assert verdict is not None and "priorityClassName system-cluster-critical" in verdict, verdict


def test_a_team_namespace_admission_skips_is_an_error(dev_data):
    """A team listing kube-system (or an added exemption) would run GPU pods that nothing checks or routes."""
    from gpu_platform.errors import SpecError

    team(dev_data, "research")["namespaces"].append("kube-system")
    dev_data["admission"] = {"additionalExemptNamespaces": ["falco"]}
    team(dev_data, "production")["namespaces"].append("falco")
    with pytest.raises(SpecError) as e:
        parse_spec(dev_data)
    errors = {f.path: f.message for f in e.value.findings}
    assert set(errors) == {"teams[0].namespaces[1]", "teams[1].namespaces[1]"}, errors
    assert errors["teams[1].namespaces[1]"].startswith("'falco' is exempt from admission (")
    assert "tiers of team 'production'" in errors["teams[1].namespaces[1]"]


@pytest.fixture(scope="module")
def volcano_docs():
    from conftest import ROOT
    from gpu_platform.load import read_spec_data
    from gpu_platform.queues.render import render_namespaces

    data = read_spec_data(ROOT / "Pulumi.dev.yaml")
    data["scheduling"] = {"kueue": {"enabled": False}, "volcano": {"enabled": True}}
    spec = parse_spec(data)
    return render_admission(spec), render_namespaces(spec)


_VOLCANO = [
    (
        "PodGroup",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g"},
            "spec": {"minMember": 1, "queue": "production"},
        },
    ),
    (
        "Job",
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {"queue": "production", "tasks": []},
        },
    ),
    (
        "Pod",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "annotations": {"scheduling.volcano.sh/queue-name": "production"}},
            "spec": {"containers": [{"name": "m", "image": "x"}]},
        },
    ),
]


@pytest.mark.parametrize(("kind", "obj"), _VOLCANO, ids=[k for k, _ in _VOLCANO])
def test_a_team_cannot_charge_another_teams_volcano_queue(volcano_docs, kind, obj):
    """Volcano v1.15.1 checks only that a named queue exists and is open (pkg/webhooks/admission/podgroups/validate
    validate_podgroup.go checkQueueState, jobs/validate/admit_job.go): with Volcano alone its queues hold the quota."""
    from gpu_platform.admission.render import DENY_VOLCANO_QUEUES_POLICY

    docs, namespaces = volcano_docs
    verdict = validate(docs, obj, "research", policy_name=DENY_VOLCANO_QUEUES_POLICY, namespaces=namespaces)
    assert verdict == (
        f"{kind} in namespace research may not use the Volcano queue production: work in a team "
        "namespace goes to its team's queue (research) or to default"
    ), verdict
    assert validate(docs, obj, "prod-inference", policy_name=DENY_VOLCANO_QUEUES_POLICY, namespaces=namespaces) is None

    def naming(queue):
        named = copy.deepcopy(obj)
        if kind == "Pod":
            named["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] = queue
        else:
            named["spec"]["queue"] = queue
        return named

    for queue in ("research", "default"):  # default is moved to the namespace's queue by Volcano's webhook
        assert (
            validate(docs, naming(queue), "research", policy_name=DENY_VOLCANO_QUEUES_POLICY, namespaces=namespaces)
            is None
        )
    assert "queue batch-ops" in validate(
        docs, naming("batch-ops"), "research", policy_name=DENY_VOLCANO_QUEUES_POLICY, namespaces=namespaces
    )
    # outside team namespaces no tier is granted, so no GPU pod runs there whatever queue it names
    assert validate(docs, obj, "default", policy_name=DENY_VOLCANO_QUEUES_POLICY, namespaces=namespaces) is None
