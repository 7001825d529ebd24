"""The workload path across components, for every tier of the dev stack and both examples: every enabled
workload kind, both resource spellings, with and without the tier label, through the rendered admission
chain, Kueue's flavor assignment and the scheduler (`gpu-platform explain`'s model).

A labelled workload in a namespace of a team with quota for the tier ends on the tier's pool, under the team's
ClusterQueue and the pool's flavor, asking for the tier's resource; everything else is denied with a message
naming the tier label.
"""

from __future__ import annotations

import copy

import pytest

from conftest import ROOT
from gpu_platform.contract import tier_label_key
from gpu_platform.explain import RenderedPlatform, explain_object
from gpu_platform.load import load_spec
from gpu_platform.queues.kueue import cluster_queue_name, flavor_name

SPECS = [ROOT / "Pulumi.dev.yaml", ROOT / "examples" / "aws-1000-a100.yaml", ROOT / "examples" / "gke-a2.yaml"]
# Kueue integration -> the kind a user submits ("pod" stands for plain Pods, always admitted by the pod routes).
KINDS = {
    "pod": "Pod",
    "batch/job": "Job",
    "jobset.x-k8s.io/jobset": "JobSet",
    "kubeflow.org/pytorchjob": "PyTorchJob",
    "ray.io/rayjob": "RayJob",
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "leaderworkerset.x-k8s.io/leaderworkerset": "LeaderWorkerSet",
}


def _template(labels: dict[str, str], resource: str) -> dict:
    return {
        "metadata": {"labels": dict(labels)},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "python:3.11",
                    "resources": {"limits": {resource: "1"}, "requests": {resource: "1"}},
                }
            ],
        },
    }


def manifest(kind: str, labels: dict[str, str], resource: str) -> dict:
    """A minimal workload of `kind` whose every pod template asks for one unit of `resource`."""
    t = _template(labels, resource)
    meta = {"name": "w"}
    specs = {
        "Job": ("batch/v1", {"template": t}),
        "JobSet": (
            "jobset.x-k8s.io/v1alpha2",
            {"replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": {"template": t}}}]},
        ),
        "PyTorchJob": ("kubeflow.org/v1", {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": t}}}),
        "RayJob": (
            "ray.io/v1",
            {
                "entrypoint": "python run.py",
                "rayClusterSpec": {
                    "headGroupSpec": {"template": t},
                    "workerGroupSpecs": [{"groupName": "gpu", "replicas": 1, "template": t}],
                },
            },
        ),
        "Deployment": (
            "apps/v1",
            {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "w"}},
                "template": {**t, "metadata": {"labels": {**labels, "app": "w"}}},
            },
        ),
        "StatefulSet": (
            "apps/v1",
            {
                "replicas": 1,
                "serviceName": "w",
                "selector": {"matchLabels": {"app": "w"}},
                "template": {**t, "metadata": {"labels": {**labels, "app": "w"}}},
            },
        ),
        "LeaderWorkerSet": (
            "leaderworkerset.x-k8s.io/v1",
            {"replicas": 1, "leaderWorkerTemplate": {"size": 1, "workerTemplate": t}},
        ),
    }
    if kind == "Pod":
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {**meta, "labels": dict(labels)},
            "spec": copy.deepcopy(t["spec"]),
        }
    api, spec = specs[kind]
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": copy.deepcopy(spec)}


def _cases():
    for path in SPECS:
        spec = load_spec(path)
        kinds = [KINDS[i] for i in spec.scheduling.kueue.integrations if i in KINDS]
        for tier in spec.tiers:
            spellings = sorted({"nvidia.com/gpu", spec.resource_of(tier)})
            for kind in dict.fromkeys(["Pod", *kinds]):
                for resource in spellings:
                    for labelled in (True, False):
                        yield pytest.param(
                            path.name,
                            tier.name,
                            kind,
                            resource,
                            labelled,
                            id=f"{path.stem}-{tier.name}-{kind}-{resource.split('/')[1]}-"
                            f"{'tier' if labelled else 'no-tier'}",
                        )


_PLATFORMS: dict[str, tuple] = {}


def _platform(name: str):
    if name not in _PLATFORMS:
        spec = load_spec(next(p for p in SPECS if p.name == name))
        _PLATFORMS[name] = (spec, RenderedPlatform(spec))
    return _PLATFORMS[name]


@pytest.mark.parametrize(("stack", "tier_name", "kind", "resource", "labelled"), list(_cases()))
def test_every_tier_kind_and_spelling_lands_on_its_pool_or_is_denied(stack, tier_name, kind, resource, labelled):
    spec, platform = _platform(stack)
    tier = spec.tiers_by_name[tier_name]
    key = tier_label_key(spec.label_domain)
    teams = [t for t in spec.teams if tier_name in t.quotas]
    namespace = teams[0].namespaces[0] if teams else "default"
    entries = explain_object(platform, manifest(kind, {key: tier_name} if labelled else {}, resource), namespace)
    assert entries
    for e in entries:
        if not (labelled and teams):
            assert e.denied and key in e.denied, (e.denied, e.stages)
            continue
        assert e.denied is None, e.denied
        assert e.pool == tier.pool, e.stages
        assert e.cluster_queue == cluster_queue_name(teams[0]), e.stages
        assert e.flavor == flavor_name(spec.pools_by_name[tier.pool]), e.stages
        asked = {r for c in e.resources.values() for r in c if r.startswith("nvidia.com/")}
        assert asked == {spec.resource_of(tier)}, e.resources
        assert e.schedulable is True, e.stages
