"""`gpu-platform explain`: the command's behaviour on the dev stack, and the simulator's rules on small objects."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from gpu_platform.cli import main
from gpu_platform.explain import RenderedPlatform, explain_object
from gpu_platform.explain.admission import Request, build_chain
from gpu_platform.explain.cel import CelError, activation, evaluate
from gpu_platform.explain.flavors import assign_flavor, assign_workload
from gpu_platform.explain.kueue import kueue_setup
from gpu_platform.explain.manifest import MAX_BYTES, MAX_NODES
from gpu_platform.explain.selectors import (
    find_untolerated_taint,
    label_selector_matches,
    required_node_affinity_matches,
)
from gpu_platform.explain.workloads import KINDS
from helpers.docs import section

TIER = "gpu.example.com/gpu-tier"
DEV = str(ROOT / "Pulumi.dev.yaml")
README = section("explain")  # the explain page, where the worked example is


def run(*args: str):
    return CliRunner().invoke(main, ["explain", *args])


def write(tmp_path, *docs, name="w.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def containers(gpus=1, resource="nvidia.com/gpu"):
    return [{"name": "main", "image": "python:3.11", "resources": {"limits": {resource: gpus}}}]


def pod(labels=None, **spec):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": labels or {}},
        "spec": {"containers": containers(), **spec},
    }


def job(tier=None, gpus=1, labels=None, parallelism=1, resource="nvidia.com/gpu"):
    meta = {"labels": {TIER: tier}} if tier else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "labels": labels or {}},
        "spec": {
            "parallelism": parallelism,
            "template": {
                "metadata": meta,
                "spec": {"restartPolicy": "Never", "containers": containers(gpus, resource)},
            },
        },
    }


def unit_price(spec_path, pool, resource):
    from gpu_platform.load import load_spec
    from gpu_platform.observability.pricing import pool_price

    spec = load_spec(spec_path)
    return pool_price(spec, spec.pools_by_name[pool]).unit_hourly[resource]


def explain_json(tmp_path, *docs, spec=DEV, namespace=None):
    args = [write(tmp_path, *docs), "--spec", spec, "--format", "json"]
    res = run(*args, *(["--namespace", namespace] if namespace else []))
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def spec_file(tmp_path, dev_data, **values_overrides):
    data = copy.deepcopy(dev_data)
    data.setdefault("scheduling", {}).setdefault("kueue", {})["valuesOverrides"] = values_overrides
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


# --- the command ---------------------------------------------------------------------------------------------


def test_readme_worked_example_is_the_command_output():
    block = re.search(r"```text\n\$ (gpu-platform explain [^\n]+)\n(.*?)```", README, flags=re.S)
    assert block, "README has no explain example"
    command, shown = block.group(1), block.group(2)
    res = CliRunner().invoke(main, command.split()[1:])
    assert res.exit_code == 0, res.output
    assert [line.rstrip() for line in res.output.rstrip().splitlines()] == shown.rstrip().splitlines()


def test_worked_example_lands_on_the_inference_pool_as_a_mig_slice(tmp_path):
    code, [entry] = explain_json(
        tmp_path,
        yaml.safe_load((ROOT / "examples/workloads/inference-job.yaml").read_text()),
        namespace="prod-inference",
    )
    assert code == 0
    assert (entry["kind"], entry["name"], entry["template"], entry["pods"]) == ("Job", "llm-eval", "spec.template", 2)
    assert entry["pool"] == "gpu-infer" and entry["denied"] is None and entry["schedulable"] is True
    assert (
        entry["resources"]["eval"]["nvidia.com/mig-3g.40gb"] == 1 and "nvidia.com/gpu" not in entry["resources"]["eval"]
    )
    assert entry["priorityClass"] == "gpu-inference" and entry["priority"] == 50000
    unit = unit_price(DEV, "gpu-infer", "nvidia.com/mig-3g.40gb")  # 3 of 7 compute slices of a p4de GPU
    assert entry["hourly"] == pytest.approx(2 * unit, abs=1e-3)
    assert (entry["clusterQueue"], entry["flavor"], entry["outsideQuota"]) == ("production", "gpu-infer", False)


def test_unlabelled_gpu_pod_is_denied_with_the_tier_label_named(tmp_path):
    code, [entry] = explain_json(tmp_path, pod(), namespace="research")
    assert code == 1 and entry["schedulable"] is False and entry["pool"] is None
    assert entry["denied"].startswith("ValidatingAdmissionPolicy 'gpu-platform-deny-unclassified' with binding")
    assert f"need the label {TIER} set to a known tier" in entry["denied"]


def test_a_kind_that_is_not_modelled_says_so_and_does_not_fail(tmp_path):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}}
    old_jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha1", "kind": "JobSet", "metadata": {"name": "js"}, "spec": {}}
    code, entries = explain_json(tmp_path, cm, old_jobset)
    assert code == 0
    assert [(e["kind"], e["template"], e["pool"], e["denied"]) for e in entries] == [
        ("ConfigMap", None, None, None),
        ("JobSet", None, None, None),
    ]
    assert "kind ConfigMap is not modelled" in entries[0]["stages"][0]["note"]
    assert "jobset.x-k8s.io/v1alpha1 JobSet is not modelled" in entries[1]["stages"][0]["note"]


def test_multi_document_files_give_one_entry_per_pod_template_in_order(tmp_path):
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "a",
                    "replicas": 2,
                    "template": {"spec": {"parallelism": 2, "template": job("dev")["spec"]["template"]}},
                },
                {"name": "b", "template": {"spec": {"template": job("dev")["spec"]["template"]}}},
            ]
        },
    }
    _, entries = explain_json(tmp_path, job("train"), None, jobset, namespace="research")
    assert [(e["kind"], e["template"], e["pods"]) for e in entries] == [
        ("Job", "spec.template", 1),
        ("JobSet", "spec.replicatedJobs[0].template.spec.template", 4),
        ("JobSet", "spec.replicatedJobs[1].template.spec.template", 1),
    ]
    assert [e["pool"] for e in entries] == ["gpu-train", "gpu-dev", "gpu-dev"]


def test_exit_codes(tmp_path):
    ok = write(tmp_path, job("train"), name="ok.yaml")
    assert run(ok, "--spec", DEV, "--namespace", "research").exit_code == 0
    denied = write(tmp_path, pod(), name="denied.yaml")
    assert run(denied, "--spec", DEV, "--namespace", "research").exit_code == 1
    too_big = write(tmp_path, job("train", gpus=9), name="big.yaml")  # 9 GPUs: no p4de node has them
    res = run(too_big, "--spec", DEV, "--namespace", "research", "--format", "json")
    assert res.exit_code == 1
    [entry] = json.loads(res.stdout)
    assert entry["schedulable"] is False and entry["pool"] is None
    pools = next(s for s in entry["stages"] if s["stage"] == "scheduler")["pools"]
    assert {
        "pool": "gpu-train",
        "fits": False,
        "reason": "insufficient nvidia.com/gpu: requests 9, a node allocates 8",
    } in pools
    assert run(ok).exit_code == 2  # --spec missing
    assert run(ok, "--spec", DEV, "--format", "xml").exit_code == 2
    assert run(ok, "--spec", DEV, "--namespace", "Not_A_Namespace").exit_code == 2


@pytest.mark.parametrize(
    "content, words",
    [
        (None, "cannot read"),
        ("kind: Job\n  bad: [indent", "not valid YAML at line"),
        ("- just\n- a list\n", "not a Kubernetes object"),
        ("a: " + "[" * 200 + "]" * 200 + "\n", "nested"),
        ("", "no Kubernetes object"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
            "values",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: c, image: b}]\n"
            "  terminationGracePeriodSeconds: 99999999999999999999\n",
            "64-bit range",
        ),
        ('apiVersion: v1\nkind: Pod\nmetadata: {name: "a\x00"}\n', "at line 3, column 20: the character #x0000"),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {1: a}\n", "at line 4, column 12: found key 1 (a number)"),
        ("cloud: aws\nnodePools: []\ntiers: []\n", "this is a spec or stack file: give it with --spec"),
        ("cloud: aws\ntiers: [{name: a, gpus: 8}]\n", "this is a planner demand, which `gpu-platform plan` takes"),
    ],
    ids=[
        "missing",
        "invalid-yaml",
        "not-an-object",
        "too-deep",
        "empty",
        "alias-bomb",
        "int-overflow",
        "nul",
        "int-key",
        "a-spec",
        "a-demand",
    ],
)
def test_bad_input_exits_two_cleanly(tmp_path, content, words):
    path = tmp_path / "w.yaml"
    if content is not None:
        path.write_text(content)
    res = run(str(path), "--spec", DEV)
    assert res.exit_code == 2, res.output
    assert words in res.stderr and "Traceback" not in res.output + res.stderr


def test_huge_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("# padding\n" * (MAX_BYTES // 10 + 1))
    res = run(str(path), "--spec", DEV)
    assert res.exit_code == 2 and f"allowed: at most {MAX_BYTES:,} bytes" in res.stderr


def test_a_small_file_of_many_values_is_refused_before_admission(tmp_path):
    # 650 bytes that expand to 160,000 values took 43 s: each pod is converted for CEL once per policy and mutation.
    lines = ["    a0: &a0 [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"] + [
        f"    a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, 5)
    ]
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: research}\nspec:\n"
        "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n  x:\n" + "\n".join(lines)
    )
    path = tmp_path / "w.yaml"
    path.write_text(pod)
    res = run(str(path), "--spec", DEV)
    assert res.exit_code == 2, res.output
    assert f"holds more than {MAX_NODES:,} values" in res.stderr and "(split it)" in res.stderr
    smaller = pod.rsplit("\n", 1)[0]  # without a4: 16,000 values, and two such documents in one file
    path.write_text(f"{smaller}\n---\n{smaller}\n")
    res = run(str(path), "--spec", DEV)
    assert res.exit_code == 2 and "document 2: the file holds more than" in res.stderr, res.output


def test_invalid_or_missing_spec_is_a_usage_error(tmp_path):
    workload = write(tmp_path, job("train"))
    assert run(workload, "--spec", str(tmp_path / "nope.yaml")).exit_code == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("cloud: aws\n")
    res = run(workload, "--spec", str(bad))
    assert res.exit_code == 2 and "clusterName" in res.stderr


def test_namespace_flag_overrides_the_manifest_and_defaults_to_default(tmp_path):
    labelled = job("train")
    labelled["metadata"]["namespace"] = "prod-inference"
    _, [given] = explain_json(tmp_path, labelled, namespace="research")
    _, [own] = explain_json(tmp_path, labelled)
    _, [default] = explain_json(tmp_path, job("train"))
    assert (given["namespace"], own["namespace"], default["namespace"]) == ("research", "prod-inference", "default")


def test_a_cpu_template_has_no_pool_and_runs(tmp_path):
    cpu = job()
    cpu["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    code, [entry] = explain_json(tmp_path, cpu, namespace="research")
    assert code == 0 and entry["pool"] is None and entry["schedulable"] is True and entry["hourly"] is None


def test_table_output_names_every_stage(tmp_path):
    res = run(write(tmp_path, job("dev")), "--spec", DEV, "--namespace", "research")
    for stage in ("admission", "pod admission", "kueue", "priority", "scheduler", "cost", "verdict: runs on gpu-dev"):
        assert stage in res.output


# --- Kueue's webhook, reinvocation and flavor assignment, read from the rendered release and queues -----------


def _kueue_release(reinvocation, manage_without_queue_name):
    config = {"manageJobsWithoutQueueName": manage_without_queue_name, "integrations": {"frameworks": ["batch/job"]}}
    return {
        "name": "kueue",
        "namespace": "kueue-system",
        "values": {
            "mutatingWebhook": {"reinvocationPolicy": reinvocation},
            "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config)},
        },
    }


def _label_jobs_policy():
    """A Kyverno MutatingPolicy that adds the queue label to Jobs, as a routing policy could."""
    rules = [{"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["jobs"]}]
    patch = "[JSONPatch{op: 'add', path: '/metadata/labels/kueue.x-k8s.io~1queue-name', value: 'q'}]"
    return {
        "kind": "MutatingPolicy",
        "metadata": {"name": "label-jobs"},
        "spec": {
            "matchConstraints": {"resourceRules": rules},
            "failurePolicy": "Ignore",
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": patch}}],
        },
    }


@pytest.mark.parametrize(
    "reinvocation, manage, suspended, reinvoked",
    [
        ("Never", False, False, False),  # Kueue's configuration sorts first: the label comes too late
        ("IfNeeded", False, True, True),  # ... unless Kueue's webhook is called again after Kyverno's change
        ("Never", True, True, False),  # or Kueue holds every job of a managed namespace
    ],
)
def test_kueue_webhook_order_reinvocation_and_manage_jobs_without_queue_name(
    reinvocation, manage, suspended, reinvoked
):
    from gpu_platform.explain.kueue import kueue_hook

    setup = kueue_setup(_kueue_release(reinvocation, manage), [])
    chain = build_chain([_label_jobs_policy()], [kueue_hook(setup)])
    obj = job("train")
    req = Request(
        "team",
        {"metadata": {"name": "team", "labels": {"kubernetes.io/metadata.name": "team"}}},
        KINDS["Job"],
        "v1",
        "j",
    )
    result = chain.admit(obj, req)
    assert [(s.via, s.reinvoked) for s in result.steps][:2] == [
        ("kueue-mutating-webhook-configuration", False),
        ("kyverno-resource-mutating-webhook-cfg", False),
    ]
    assert result.object["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "q"
    assert result.object["spec"].get("suspend", False) is suspended
    assert any(s.reinvoked for s in result.steps) is reinvoked


def test_the_dev_stack_holds_a_job_that_gets_its_queue_from_the_routing(tmp_path, dev_data):
    _, [entry] = explain_json(tmp_path, job("train"), namespace="research")
    assert (entry["clusterQueue"], entry["flavor"], entry["outsideQuota"]) == ("research", "gpu-train", False)
    steps = next(s for s in entry["stages"] if s["stage"] == "admission")["steps"]
    assert steps[0]["webhookConfiguration"] == "kueue-mutating-webhook-configuration"
    assert {"op": "add", "path": "/spec/suspend", "value": True} in steps[0]["patches"]
    never = spec_file(tmp_path, dev_data, mutatingWebhook={"reinvocationPolicy": "Never"})
    _, [entry] = explain_json(tmp_path, job("train"), spec=never, namespace="research")
    steps = next(s for s in entry["stages"] if s["stage"] == "admission")["steps"]
    assert not any(s.get("reinvoked") for s in steps)  # read from the rendered release values


def test_quota_is_checked_for_the_whole_workload(tmp_path):
    labels = {"kueue.x-k8s.io/queue-name": "research"}
    _, [fits] = explain_json(tmp_path, job("train", gpus=8, parallelism=2, labels=labels), namespace="research")
    assert fits["schedulable"] is True
    assert fits["hourly"] == pytest.approx(16 * unit_price(DEV, "gpu-train", "nvidia.com/gpu"), abs=1e-3)
    code, [over] = explain_json(tmp_path, job("train", gpus=8, parallelism=4, labels=labels), namespace="research")
    kueue = next(s for s in over["stages"] if s["stage"] == "kueue")
    assert code == 1 and over["schedulable"] is False and kueue["quotaHolds"] is False
    assert (
        "insufficient quota for nvidia.com/gpu in flavor gpu-train: request 32 > maximum capacity 16"
        in kueue["reasons"]
    )


def _cq(name, flavors, cohort=None, **extra):
    resources = sorted({r for f in flavors.values() for r in f})
    spec = {
        "resourceGroups": [
            {
                "coveredResources": resources,
                "flavors": [
                    {"name": f, "resources": [{"name": r, **q} for r, q in rs.items()]} for f, rs in flavors.items()
                ],
            }
        ]
    }
    if cohort:
        spec["cohortName"] = cohort
    return {"kind": "ClusterQueue", "metadata": {"name": name}, "spec": {**spec, **extra}}


def _setup(*cqs, flavors=None):
    release = {
        "name": "kueue",
        "namespace": "kueue-system",
        "values": {
            "managerConfig": {"controllerManagerConfigYaml": "resources: {excludeResourcePrefixes: [cpu, memory]}\n"}
        },
    }
    objects = [{"kind": "ResourceFlavor", "metadata": {"name": n}, "spec": s} for n, s in (flavors or {}).items()]
    objects += list(cqs) + [
        {
            "kind": "LocalQueue",
            "metadata": {"name": "q", "namespace": "ns"},
            "spec": {"clusterQueue": cqs[0]["metadata"]["name"]},
        }
    ]
    return kueue_setup(release, objects)


_FLAVORS = {
    "a": {"nodeLabels": {"pool": "a"}},
    "b": {"nodeLabels": {"pool": "b"}},
    "t": {"nodeLabels": {"pool": "t"}, "nodeTaints": [{"key": "x", "value": "y", "effect": "NoSchedule"}]},
}


def _podspec(gpus=1, **spec):
    return {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": gpus, "cpu": 4}}}], **spec}


def test_flavors_are_tried_in_order_and_only_their_own_label_keys_count():
    setup = _setup(
        _cq("cq", {"a": {"nvidia.com/gpu": {"nominalQuota": 2}}, "b": {"nvidia.com/gpu": {"nominalQuota": 4}}}),
        flavors=_FLAVORS,
    )
    assert assign_flavor(setup, "ns", "q", _podspec(), 1).flavor == "a"  # no selector: the first with quota
    assert assign_flavor(setup, "ns", "q", _podspec(nodeSelector={"pool": "b", "zone": "z"}), 1).flavor == "b"
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["a"]}]}]
            }
        }
    }
    assert assign_flavor(setup, "ns", "q", _podspec(affinity=affinity), 1).flavor == "b"
    assert assign_flavor(setup, "ns", "q", _podspec(gpus=3), 1).flavor == "b"  # 3 > a's 2: the next flavor
    assert assign_flavor(setup, "ns", "q", _podspec(gpus=3), 2).admitted is False  # 6 fits neither


def test_flavor_taints_need_a_toleration_and_cpu_is_excluded_from_quota():
    setup = _setup(_cq("cq", {"t": {"nvidia.com/gpu": {"nominalQuota": 1}}}), flavors=_FLAVORS)
    result = assign_flavor(setup, "ns", "q", _podspec(), 1)
    assert not result.admitted and "untolerated taint x=y:NoSchedule in flavor t" in result.reasons
    tolerated = assign_flavor(setup, "ns", "q", _podspec(tolerations=[{"key": "x", "operator": "Exists"}]), 1)
    assert tolerated.admitted and tolerated.requests == {"nvidia.com/gpu": 1}  # cpu: excludeResourcePrefixes


def test_borrowing_reaches_the_cohort_up_to_the_borrowing_limit():
    mine = _cq("cq", {"a": {"nvidia.com/gpu": {"nominalQuota": 2, "borrowingLimit": 3}}}, cohort="c")
    other = _cq("other", {"a": {"nvidia.com/gpu": {"nominalQuota": 10, "lendingLimit": 4}}}, cohort="c")
    setup = _setup(mine, other, flavors=_FLAVORS)
    assert assign_flavor(setup, "ns", "q", _podspec(5), 1).borrowing is True
    assert assign_flavor(setup, "ns", "q", _podspec(6), 1).admitted is False
    [first, second] = assign_workload(setup, "ns", "q", [(_podspec(3), 1), (_podspec(3), 1)])
    assert not first.admitted and not second.admitted  # 3 + 3 > 2 + 3
    assert "request 6 > maximum capacity 5" in " ".join(second.reasons)


def test_unknown_local_queue_and_uncovered_resource():
    setup = _setup(_cq("cq", {"a": {"nvidia.com/gpu": {"nominalQuota": 1}}}), flavors=_FLAVORS)
    assert "LocalQueue nope doesn't exist in namespace ns" in assign_flavor(setup, "ns", "nope", _podspec(), 1).reasons
    mig = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/mig-1g.10gb": 1}}}]}
    assert (
        "resource nvidia.com/mig-1g.10gb unavailable in ClusterQueue cq"
        in assign_flavor(setup, "ns", "q", mig, 1).reasons
    )


# --- the generic admission chain on hand-written policies ---------------------------------------------------------


def _request(obj, ns="team", labels=None):
    ns_obj = {"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns, **(labels or {})}}}
    return Request(ns, ns_obj, KINDS[obj["kind"]], "v1", "p")


def _map(name, mutation, selector=None, **spec):
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    policy = {
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": rules},
            "failurePolicy": "Ignore",
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": mutation}}],
            **spec,
        },
    }
    binding = {
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "matchResources": {"namespaceSelector": selector or {}}},
    }
    return [policy, binding]


def test_policies_match_on_namespace_object_labels_and_see_each_others_patches():
    docs = _map(
        "b-second", "[JSONPatch{op: 'add', path: '/metadata/labels/second', value: object.metadata.labels.first}]"
    ) + _map(
        "a-first",
        "[JSONPatch{op: 'add', path: '/metadata/labels/first', value: namespaceObject.metadata.labels.team}]",
        selector={"matchExpressions": [{"key": "team", "operator": "Exists"}]},
    )
    chain = build_chain(docs, [])
    result = chain.admit(pod(), _request(pod(), labels={"team": "blue"}))
    assert result.object["metadata"]["labels"] == {"first": "blue", "second": "blue"}
    assert [s.name for s in result.steps] == ["a-first", "b-second"]
    other = chain.admit(pod(), _request(pod()))  # no team label: a-first is not bound, b-second fails open
    assert other.object["metadata"]["labels"] == {} and "failed open" in other.steps[0].note


def test_variables_are_lazy_and_in_order():
    variables = [
        {"name": "boom", "expression": "object.missing.field"},
        {"name": "x", "expression": "'a'"},
        {"name": "y", "expression": "variables.x + 'b'"},
    ]
    assert str(evaluate("variables.y", activation({"object": {}}, variables))) == "ab"  # boom never evaluated
    with pytest.raises(CelError):
        evaluate("variables.boom", activation({"object": {}}, variables))


def test_validation_message_expression_and_binding_actions():
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    policy = {
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "v"},
        "spec": {
            "matchConstraints": {"resourceRules": rules},
            "matchConditions": [{"name": "labelled", "expression": "has(object.metadata.labels)"}],
            "validations": [
                {
                    "expression": "'ok' in object.metadata.labels",
                    "messageExpression": "'pod ' + object.metadata.name + ' needs ok'",
                }
            ],
        },
    }
    binding = {
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "vb"},
        "spec": {
            "policyName": "v",
            "validationActions": ["Deny"],
            "matchResources": {"objectSelector": {"matchLabels": {"check": "yes"}}},
        },
    }
    chain = build_chain([policy, binding], [])
    checked = pod({"check": "yes"})
    assert chain.admit(checked, _request(checked)).denied == (
        "ValidatingAdmissionPolicy 'v' with binding 'vb' denied request: pod p needs ok"
    )
    assert chain.admit(pod({"check": "no"}), _request(checked)).denied is None  # object selector
    warn = copy.deepcopy(binding)
    warn["spec"]["validationActions"] = ["Warn"]
    result = build_chain([policy, warn], []).admit(checked, _request(checked))
    assert result.denied is None and result.steps[0].note == "warning: pod p needs ok"


# --- selectors, taints and the scheduler's view of pools -----------------------------------------------------------


@pytest.mark.parametrize(
    "selector, labels, expected",
    [
        ({}, {}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
        ({"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "Exists"}]}, {"a": "1"}, False),
    ],
)
def test_label_selectors(selector, labels, expected):
    assert label_selector_matches(selector, labels) is expected


def test_node_affinity_terms_and_numeric_operators():
    def affinity(*terms):
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}

    gt = {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["4"]}]}
    lt = {"matchExpressions": [{"key": "gpus", "operator": "Lt", "values": ["4"]}]}
    assert required_node_affinity_matches(affinity(gt), {"gpus": "8"})
    assert not required_node_affinity_matches(affinity(lt), {"gpus": "8"})
    assert required_node_affinity_matches(affinity(lt, gt), {"gpus": "8"})  # terms are ORed
    assert not required_node_affinity_matches(affinity(gt), {"gpus": "many"})
    assert not required_node_affinity_matches(affinity({"matchExpressions": []}), {})  # an empty term matches nothing


def test_tolerations():
    taints = [{"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "soft", "effect": "PreferNoSchedule"}]
    assert find_untolerated_taint(taints, []) == taints[0]
    assert find_untolerated_taint(taints, [{"operator": "Exists"}]) is None  # empty key + Exists: every taint
    assert find_untolerated_taint(taints, [{"key": "k", "value": "w"}]) == taints[0]  # Equal compares the value
    assert find_untolerated_taint(taints, [{"key": "k", "value": "v", "effect": "NoExecute"}]) == taints[0]
    assert find_untolerated_taint(taints, [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]) is None


def test_scheduler_reads_the_device_plugin_rename(tmp_path, dev_data):
    data = copy.deepcopy(dev_data)
    dev_pool = next(p for p in data["nodePools"] if p["name"] == "gpu-dev")
    dev_pool["sharing"]["renameByDefault"] = True
    from gpu_platform.explain.scheduler import pool_nodes
    from gpu_platform.spec import PlatformSpec

    # `validate` refuses renameByDefault on shared pools; the scheduler still reads what the nodes would advertise
    nodes = {n.pool: n for n in pool_nodes(PlatformSpec.model_validate(data))}
    assert nodes["gpu-dev"].allocatable == {"nvidia.com/gpu.shared": 32}
    assert nodes["gpu-infer"].allocatable == {
        "nvidia.com/mig-3g.40gb": 8,
        "nvidia.com/mig-2g.20gb": 8,
        "nvidia.com/mig-1g.10gb": 16,
    }


def test_explain_object_works_as_a_library(dev_spec):
    platform = RenderedPlatform(dev_spec)
    entries = explain_object(platform, job("finetune"), "prod-inference")
    assert [(e.pool, e.resources["main"]) for e in entries] == [("gpu-infer", {"nvidia.com/mig-2g.20gb": 1})]


@pytest.mark.parametrize(
    "field, value, problem",
    [
        (("spec", "template"), "x", "spec.template: must be an object"),
        (("spec", "template", "spec", "containers"), {"a": 1}, "spec.template.spec.containers: must be a list"),
        (
            ("spec", "template", "metadata", "labels"),
            {TIER: 1},
            f"spec.template.metadata.labels.{TIER}: must be a string",
        ),
        (
            ("spec", "template", "spec", "tolerations"),
            [{"key": 3}],
            "spec.template.spec.tolerations[0].key: must be a string",
        ),
    ],
)
def test_objects_the_api_server_cannot_decode_are_rejected_naming_the_field(tmp_path, field, value, problem):
    obj = job("train")
    target = obj
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    code, [entry] = explain_json(tmp_path, obj, namespace="research")
    assert code == 1 and entry["denied"] == f"the API server rejects the object: {problem}"


def test_explain_imports_no_pulumi_or_cloud_sdk():
    import subprocess
    import sys

    program = (
        "import sys; import gpu_platform.explain.cli; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'pulumi', 'pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes', 'boto3', 'scipy', 'grpc'}))"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("['a', 'b'].join(',')", "a,b"),
        ("'gpu.example.com/gpu-tier'.split('/')[1]", "gpu-tier"),
        ("'MIG-3G'.lowerAscii()", "mig-3g"),
        ("'nvidia.com/gpu'.replace('gpu', 'mig-1g.10gb')", "nvidia.com/mig-1g.10gb"),
        ("'nvidia.com/gpu'.substring(0, 6)", "nvidia"),
        ("['a', 'b'].indexOf('b') == 1 && [1, 2].sum() == 3 && [1, 2].isSorted()", True),
    ],
)
def test_kubernetes_cel_string_and_list_functions(expression, expected):
    from gpu_platform.explain.cel import to_plain

    assert to_plain(evaluate(expression, activation({}))) == expected


def test_the_api_server_validates_extended_resources_after_mutation(tmp_path):
    fractional = job("train", gpus="500m")
    code, [entry] = explain_json(tmp_path, fractional, namespace="research")
    assert code == 1 and entry["denied"] == (
        'Job "j" is invalid: spec.template.spec.containers[0].resources.'
        "limits[nvidia.com/gpu]: Invalid value: '500m': must be an integer"
    )
    unequal = pod({TIER: "train"})
    unequal["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 2}}
    code, [entry] = explain_json(tmp_path, unequal, namespace="research")
    assert code == 1 and entry["denied"].endswith(
        "requests[nvidia.com/gpu]: Invalid value: 2: must be equal to nvidia.com/gpu limit of 1"
    )
    negative = job("train", gpus=-1)
    code, [entry] = explain_json(tmp_path, negative, namespace="research")
    assert code == 1 and entry["denied"].endswith(
        "limits[nvidia.com/gpu]: Invalid value: -1: must be greater than or equal to 0"
    ), entry
    assert entry["hourly"] is None or entry["hourly"] >= 0


@pytest.mark.parametrize(
    "value, amount",
    [
        ("1", 1),
        ("1k", 1000),
        ("1Ki", 1024),
        ("500m", "0.5"),
        ("1e3", 1000),
        ("1E-2", "0.01"),
        (".5", "0.5"),
        ("1.", 1),
        ("k", 0),
        ("+1", 1),
        ("0.5Gi", 536870912),
        (3, 3),
        (1.5, "1.5"),
        (None, 0),
        # UnmarshalJSON trims spaces; ParseQuantity rounds a magnitude up to a whole nano and caps binary values
        # at 2^63 - 1; an exponent is parsed to 64 bits and kept as an int32 (apimachinery v0.33.0 quantity.go)
        (" 2 ", 2),
        ("1.0000000015", "1.000000002"),
        ("-1.5n", "-2e-9"),
        ("1e-999999999", "1e-9"),
        ("1.00000000000000000000000000001", "1.000000001"),
        ("1e999999999", "1e999999999"),
        ("1e0000000000", 1),
        ("1e4294967296", 1),
        ("8Ei", 2**63 - 1),
        ("9" * 130, "9" * 130),
        ("Ti", 0),
        ("e3", 0),
        ("\xa01\u3000", 1),
    ],
)
def test_quantities_read_as_the_api_server_reads_them(value, amount):
    from decimal import Decimal

    from gpu_platform.explain.quantity import parse_quantity

    assert parse_quantity(value) == Decimal(str(amount))


@pytest.mark.parametrize(
    "value, message",
    [
        ("2c", "regular expression"),
        ("=", "regular expression"),
        ("1.5.5", "regular expression"),
        ("", "regular expression"),
        (True, "regular expression"),
        ("1e", "suffix"),
        ("1i", "suffix"),
        ("1mi", "suffix"),
        ("1e" + "9" * 20, "suffix"),
        # no digits: the int64 path reads 0 ("Ti", "e3"), the other path (scale below a nano, or a binary factor
        # too large for it) parses the number's text, and "" or "." is none (quantity.go ParseQuantity)
        ("e-10", "numeric part"),
        ("Pi", "numeric part"),
        ("+.e-10", "numeric part"),
        ("\x1f1", "regular expression"),  # strings.TrimSpace keeps U+001F
        ([1], "regular expression"),
        ({"a": 1}, "regular expression"),
    ],
)
def test_values_that_are_no_quantity_are_refused(value, message):
    from gpu_platform.explain.quantity import QuantityError, parse_quantity

    with pytest.raises(QuantityError, match=message):
        parse_quantity(value)


def test_the_api_server_validates_every_resource_quantity(tmp_path):
    # Decoding refuses a cpu of "2c"; validation a memory request above its limit and a negative cpu
    # (kubernetes v1.33.0 ValidateResourceRequirements); `1e0` GPUs is the whole number 1.
    typo = job("train")
    typo["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "2c", "nvidia.com/gpu": 1}
    code, [entry] = explain_json(tmp_path, typo, namespace="research")
    assert [stage["stage"] for stage in entry["stages"]] == ["decode"], entry  # before any webhook runs
    assert code == 1 and entry["denied"].endswith(
        "requests[cpu]: Invalid value: '2c': quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    ), entry
    above = job("train")
    above["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "1Gi"
    above["spec"]["template"]["spec"]["containers"][0]["resources"].setdefault("requests", {})["memory"] = "2Gi"
    code, [entry] = explain_json(tmp_path, above, namespace="research")
    assert code == 1 and entry["denied"].endswith(
        "requests[memory]: Invalid value: '2Gi': must be less than or equal to memory limit of 1Gi"
    ), entry
    negative = job("train")
    negative["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "-1"
    code, [entry] = explain_json(tmp_path, negative, namespace="research")
    assert code == 1 and "limits[cpu]: Invalid value: '-1': must be greater than or equal to 0" in entry["denied"]
    exponent = job("train", gpus="1e0")
    code, [entry] = explain_json(tmp_path, exponent, namespace="research")
    assert code == 0 and entry["denied"] is None, entry
    assert entry["hourly"] == pytest.approx(unit_price(DEV, entry["pool"], "nvidia.com/gpu"), abs=1e-3)


def test_quantities_of_no_json_scalar_and_overflowing_ones_are_judged_as_the_api_server_does(tmp_path):
    listed = job("train", gpus=[1])
    code, [entry] = explain_json(tmp_path, listed, namespace="research")
    assert code == 1 and entry["denied"].endswith(
        "limits[nvidia.com/gpu]: Invalid value: [1]: quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    ), entry
    nothing = job("train")
    nothing["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = None
    code, [entry] = explain_json(tmp_path, nothing, namespace="research")
    assert code == 0 and entry["denied"] is None, entry
    huge = job("train")
    huge["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "99e999999"
    code, [entry] = explain_json(tmp_path, huge, namespace="research")
    assert code == 0 and entry["denied"] is None, entry
    # quoted (a YAML float would underflow to 0, as in go-yaml): rounded up to 1n, which is no whole number
    below_a_nano = job("train", gpus="1.0e-999999999")
    code, [entry] = explain_json(tmp_path, below_a_nano, namespace="research")
    assert code == 1 and entry["denied"].endswith("Invalid value: '1.0e-999999999': must be an integer"), entry


def test_pods_of_a_serving_workload_are_gated_then_admitted_by_kueue(tmp_path):
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "template": job("inference")["spec"]["template"]},
    }
    code, [entry] = explain_json(tmp_path, deployment, namespace="prod-inference")
    assert code == 0 and (entry["pool"], entry["clusterQueue"], entry["flavor"]) == (
        "gpu-infer",
        "production",
        "gpu-infer",
    )
    pod_steps = next(s for s in entry["stages"] if s["stage"] == "pod admission")["steps"]
    assert {"op": "add", "path": "/spec/schedulingGates", "value": [{"name": "kueue.x-k8s.io/admission"}]} in pod_steps[
        0
    ]["patches"]
    kueue = next(s for s in entry["stages"] if s["stage"] == "kueue")
    assert kueue["quotaHolds"] and kueue["requests"] == {"nvidia.com/mig-3g.40gb": 3}
    assert entry["hourly"] == pytest.approx(3 * unit_price(DEV, "gpu-infer", "nvidia.com/mig-3g.40gb"), abs=1e-3)


def test_a_job_denied_in_a_namespace_of_no_team_is_told_the_teams_namespaces():
    path = str(ROOT / "examples/workloads/inference-job.yaml")
    res = run(path, "--spec", DEV)
    assert res.exit_code == 1
    assert (
        "hint: namespace 'default' belongs to no team; the teams' namespaces (team: tiers with quota): "
        "prod-inference (production: inference, finetune), research (research: train, dev)"
        in " ".join(res.output.split())
    )
    assert "hint:" not in run(path, "--spec", DEV, "--namespace", "prod-inference").output
