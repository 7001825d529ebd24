"""The render bundles the components read: each carries the names its component exports, derived from its objects,
and GpuPlatform's composition follows the spec."""

from __future__ import annotations

from gpu_platform.admission.render import DENY_POLICY, NAMESPACE_GUARD_POLICY, render_admission_objects
from gpu_platform.composition import render_platform
from gpu_platform.load import parse_spec
from gpu_platform.nodepools.addons import render_node_addons
from gpu_platform.nodepools.eks import CA_TEMPLATE_PREFIX, autoscaler_tag_resources, autoscaler_tags
from gpu_platform.observability.render import render_observability
from gpu_platform.outputs import platform_outputs
from gpu_platform.queues.kueue import cluster_queue_name
from gpu_platform.queues.render import render_queues


def test_queue_names_are_those_of_the_rendered_objects(dev_spec):
    q = render_queues(dev_spec)
    assert q.cluster_queue_names == [cluster_queue_name(t) for t in dev_spec.teams]
    assert sorted(q.priority_class_names) == sorted(d["metadata"]["name"] for d in q.priority_classes)
    assert len(set(q.priority_class_names)) == len(dev_spec.tiers)


def test_admission_bundle_names_the_policies_not_their_bindings(dev_spec):
    r = render_admission_objects(dev_spec)
    assert {DENY_POLICY, NAMESPACE_GUARD_POLICY} <= set(r.policy_names)
    assert [d["metadata"]["name"] for d in r.routes if not d["kind"].endswith("Binding")] == [
        n for n in r.policy_names if n not in {d["metadata"]["name"] for d in r.deny}
    ]
    bindings = [d for d in (*r.deny, *r.routes) if d["kind"].endswith("Binding")]
    assert bindings and len(r.policy_names) + len(bindings) == len(r.deny) + len(r.routes)
    assert r.kyverno_release is None or r.kyverno_release["name"] == "kyverno"


def test_admission_bundle_without_deny(dev_data):
    dev_data["admission"] = {**dev_data.get("admission", {}), "denyUnclassified": False}
    spec = parse_spec(dev_data)
    r = render_admission_objects(spec)
    assert r.deny == ()
    assert r.policy_names == [d["metadata"]["name"] for d in r.routes if not d["kind"].endswith("Binding")]


def test_observability_release_names_follow_what_is_installed(dev_data):
    docs = render_observability(parse_spec(dev_data))
    assert docs.release_names == [docs.prometheus["name"], docs.opencost["name"]]
    assert docs.rule_name == docs.rule["metadata"]["name"]
    dev_data["monitoring"]["opencost"] = {"enabled": False}
    assert render_observability(parse_spec(dev_data)).release_names == [docs.prometheus["name"]]


def test_node_addon_release_names(dev_spec):
    r = render_node_addons(dev_spec)
    assert r.release_names == [rel["name"] for rel in r.releases]
    assert r.release_names  # the dev stack runs cluster-autoscaler


def test_platform_composition_follows_the_spec(dev_data):
    spec = parse_spec(dev_data)
    r = render_platform(spec)
    assert r.outputs == platform_outputs(spec)
    assert (r.node_addons, r.node_health, r.gpu_operator) == (True, True, True)
    assert r.autoscaling is spec.autoscaling.keda.enabled
    dev_data["autoscaling"] = {"keda": {"enabled": not spec.autoscaling.keda.enabled}}
    assert render_platform(parse_spec(dev_data)).autoscaling is not r.autoscaling


def test_autoscaler_tag_resources_name_each_tag_by_its_key(dev_spec):
    pool = dev_spec.node_pools[0]
    resources = autoscaler_tag_resources(dev_spec, pool)
    assert [tag["key"] for _, tag in resources] == list(autoscaler_tags(dev_spec, pool))
    assert all(tag["key"] == f"{CA_TEMPLATE_PREFIX}/{suffix}" for suffix, tag in resources)
    assert len({suffix for suffix, _ in resources}) == len(resources)
    assert not any(tag["propagateAtLaunch"] for _, tag in resources)
