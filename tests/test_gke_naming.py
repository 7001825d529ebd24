"""GKE node pools are named `<pool>-<hash of what replaces them>` and replaced create-before-delete."""

from __future__ import annotations

import re

import pulumi
import pytest

from gpu_platform.errors import SpecError
from gpu_platform.load import parse_spec
from gpu_platform.nodepools.gke import (
    GKE_NODE_POOL_NAME_MAX,
    GKE_POOL_NAME_MAX,
    node_pool_name,
    render_gke_node_pool,
    replacement_fields,
)
from helpers.specs import gke_data

NP = "gcp:container/nodePool:NodePool"
GKE_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?")  # the GKE API's node pool name rule


def _data(**pool):
    """A one-pool GKE spec (the time-sliced pool of `gke_data`, one zone); `pool` overrides fields of the pool."""
    data = gke_data(**{"gpu-dev": pool})
    data["gcp"]["zones"] = ["us-central1-a"]
    del data["gcp"]["gpuStack"]
    data["nodePools"] = [p for p in data["nodePools"] if p["name"] == pool.get("name", "gpu-dev")]
    data["tiers"] = [{"name": "dev", "pool": data["nodePools"][0]["name"]}]
    return data


def _name(data):
    spec = parse_spec(data)
    return render_gke_node_pool(spec, spec.node_pools[0])["name"]


def test_the_name_is_the_pool_and_a_hash_within_gkes_rule():
    name = _name(_data())
    assert re.fullmatch(r"gpu-dev-[0-9a-f]{8}", name) and GKE_NAME.fullmatch(name)
    longest = _name(_data(name="g" * GKE_POOL_NAME_MAX))
    assert len(longest) == GKE_NODE_POOL_NAME_MAX and GKE_NAME.fullmatch(longest)


@pytest.mark.parametrize(
    "change",
    [
        {"sharing": {"mode": "time-slicing", "replicas": 8}},  # guest accelerator sharing: ForceNew
        {"sharing": {"mode": "mps", "replicas": 4}},
        {"gcp": {"zones": ["us-central1-a"], "spot": True}},  # spot: ForceNew
        {"instanceType": "a2-highgpu-2g"},  # the accelerator count: ForceNew
        {"gcp": {"zones": ["us-central1-a"], "gpuDriverVersion": "DEFAULT"}},  # gpu_driver_installation_config
    ],
)
def test_a_change_that_replaces_the_pool_changes_its_name(change):
    assert _name(_data(**change)) != _name(_data())


@pytest.mark.parametrize(
    "change",
    [
        {"maxSize": 3},
        {"minSize": 1},  # autoscaling: in place
        {"gcp": {"zones": ["us-central1-a"], "diskSizeGb": 500}},  # disk size: in place
        {"gcp": {"zones": ["us-central1-a", "us-central1-b"]}},  # node locations: in place
        {"gcp": {"zones": ["us-central1-a"], "autoUpgrade": False, "maxUnavailable": 2}},  # management, upgrades
    ],
)
def test_a_change_made_in_place_keeps_the_name(change):
    assert _name(_data(**change)) == _name(_data())


def test_labels_taints_and_the_service_account():
    base = _data()
    other_domain = {**base, "labelDomain": "gpu.other.example.com"}  # labels and taints update in place
    assert _name(other_domain) == _name(base)
    other_account = {**base, "gcp": {**base["gcp"], "serviceAccount": "other@proj.iam.gserviceaccount.com"}}
    assert _name(other_account) != _name(base)  # service_account: ForceNew


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        (
            "g" * (GKE_POOL_NAME_MAX + 1),
            f"is {GKE_POOL_NAME_MAX + 1} characters; a GKE node pool is named '<pool>-' "
            f"plus a 8-character hash within GKE's 40, so pool names allow at most "
            f"{GKE_POOL_NAME_MAX}",
        ),
        ("1-gpu", "starts with '1'; GKE node pool names start with a lower-case letter"),
    ],
)
def test_pool_names_that_would_not_fit_are_rejected(name, fragment):
    with pytest.raises(SpecError) as info:
        parse_spec(_data(name=name))
    [finding] = [f for f in info.value.findings if f.path == "nodePools[0].name"]
    assert fragment in finding.message and repr(name) in finding.message


def test_the_component_keeps_its_urn_and_replaces_create_before_delete(pulumi_mocks):
    from gpu_platform.nodepools.gcp import GkeGpuNodePool, GkeGpuNodePoolArgs

    spec = parse_spec(_data())
    rec = pulumi_mocks.run(lambda: GkeGpuNodePool("plat-gpu-dev", GkeGpuNodePoolArgs(spec=spec, pool="gpu-dev")))
    np = rec.named("plat-gpu-dev-np")  # the Pulumi name is unchanged: existing stacks keep the URN
    assert np.type == NP and not np.delete_before_replace
    assert np.inputs["name"] == render_gke_node_pool(spec, spec.node_pools[0])["name"]


def _registered_name(pulumi_mocks, account):
    from gpu_platform.nodepools.gcp import GkeGpuNodePool, GkeGpuNodePoolArgs

    def program():
        data = _data()
        data["gcp"]["serviceAccount"] = pulumi.Output.from_input(account)
        spec = parse_spec(data)
        GkeGpuNodePool("p", GkeGpuNodePoolArgs(spec=spec, pool="gpu-dev"))

    return pulumi_mocks.run(program).named("p-np").inputs["name"]


def test_a_service_account_given_as_an_input_is_hashed_once_resolved(pulumi_mocks):
    account = "gpu-nodes@proj.iam.gserviceaccount.com"
    name = _registered_name(pulumi_mocks, account)
    plain = parse_spec(_data())
    expected = node_pool_name("gpu-dev", replacement_fields(render_gke_node_pool(plain, plain.node_pools[0])))
    assert name == expected  # the token in the rendered inputs is not what is hashed
    pulumi_mocks.resources.clear()
    assert _registered_name(pulumi_mocks, "other@proj.iam.gserviceaccount.com") != name
