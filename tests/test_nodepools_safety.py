"""Node pools that cannot silently fail: what Karpenter can and cannot serve, reservations it uses, replacements
an upgrade would cause, bounds and field syntax, scale-down protection for training, cost at min size."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpu_platform.admission.render import KEEP_ON_NODE_ANNOTATIONS, render_admission
from gpu_platform.errors import SpecError
from gpu_platform.load import parse_spec
from gpu_platform.nodepools.efa import efa_count, uses_efa
from gpu_platform.nodepools.eks import autoscaler_tags, render_eks_launch_template
from gpu_platform.nodepools.karpenter import render_ec2_node_class, render_karpenter_node_pool
from gpu_platform.observability.cost import cost_report
from gpu_platform.spec import PlatformSpec
from helpers.admission import TIER, gpu_pod, mutate
from helpers.crd import validate_custom_resource
from helpers.specs import finding_lines, gke_data, pool, pool_path

KARPENTER_CRDS = {"NodePool": "karpenter.sh_nodepools.yaml", "EC2NodeClass": "karpenter.k8s.aws_ec2nodeclasses.yaml"}


def _spec(data: dict) -> PlatformSpec:
    return PlatformSpec.model_validate(data)


def _on_karpenter(data: dict, name: str, **aws: Any) -> dict:
    pool(data, name)["aws"] = {"provisioner": "karpenter", **aws}
    return data


# --- 1. Karpenter and shared GPUs ----------------------------------------------------------------------------------


def test_karpenter_on_a_mig_pool_is_an_error_naming_the_alternative(dev_data):
    errors = finding_lines(_on_karpenter(dev_data, "gpu-infer"))  # a MIG pool
    [err] = [e for e in errors if e.startswith("nodePools[1].aws.provisioner")]
    assert "karpenter on a MIG pool" in err and "kubernetes-sigs/karpenter#751" in err
    assert "no instance type satisfied resources" in err and "allowed: managed-node-group" in err


@pytest.mark.parametrize(("name", "pods", "nodes"), [("gpu-dev", 32, 4), ("gpu-ci", 64, 8)])  # x4, x8 replicas
def test_karpenter_on_a_shared_pool_warns_with_the_figure(dev_data, name, pods, nodes):
    warnings = finding_lines(_on_karpenter(dev_data, name), "warning")
    [w] = [w for w in warnings if w.startswith(f"{pool_path(dev_data, name)}.aws.provisioner")]
    assert f"sizes a p4d.24xlarge node as 8 nvidia.com/gpu, but it advertises {pods}" in w
    assert f"{pods} pending one-unit pods launch {nodes} nodes instead of 1" in w


# --- 2. reservations on Karpenter ------------------------------------------------------------------------------------


def test_on_demand_reservation_allows_reserved_then_on_demand(dev_data, reference):
    spec = parse_spec(_on_karpenter(dev_data, "gpu-train", capacityReservationId="cr-0123456789abcdef0"))
    pool = spec.pools_by_name["gpu-train"]
    np, nc = render_karpenter_node_pool(spec, pool), render_ec2_node_class(spec, pool)
    [req] = [r for r in np["spec"]["template"]["spec"]["requirements"] if r["key"] == "karpenter.sh/capacity-type"]
    assert req == {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved", "on-demand"]}
    assert nc["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0123456789abcdef0"}]
    for doc in (np, nc):
        result = validate_custom_resource(reference("crds", "karpenter", KARPENTER_CRDS[doc["kind"]]), doc)
        assert result["skipped"] == []
    # The CRD's enum of capacity types is what Karpenter v1.14.1 accepts for this key.
    crd = reference("crds", "karpenter", KARPENTER_CRDS["NodePool"]).read_text()
    assert "reserved" in crd


def test_capacity_block_is_reserved_only_and_plain_pools_are_unchanged(dev_data):
    data = _on_karpenter(
        dev_data, "gpu-train", capacityType="CAPACITY_BLOCK", capacityReservationId="cr-0123", subnetIds=["subnet-a"]
    )
    _on_karpenter(data, "gpu-dev", capacityType="SPOT")
    _on_karpenter(data, "gpu-ci")
    spec = parse_spec(data)

    def capacity(name: str) -> list[str]:
        reqs = render_karpenter_node_pool(spec, spec.pools_by_name[name])["spec"]["template"]["spec"]["requirements"]
        return next(r["values"] for r in reqs if r["key"] == "karpenter.sh/capacity-type")

    assert (capacity("gpu-train"), capacity("gpu-dev"), capacity("gpu-ci")) == (["reserved"], ["spot"], ["on-demand"])


# --- 3. replacements an upgrade would cause ---------------------------------------------------------------------------


def test_default_efa_on_an_existing_node_group_warns_until_set(dev_data):
    pool(dev_data, "gpu-train").pop("aws", None)
    warnings = finding_lines(dev_data, "warning")
    [w] = [w for w in warnings if w.startswith("nodePools[0].aws.efa")]
    assert "EFA interfaces on by default for pool 'gpu-train'" in w and "EKS replaces every node" in w
    for choice in (True, False):
        pool(dev_data, "gpu-train")["aws"] = {"efa": choice}
        assert not [w for w in finding_lines(dev_data, "warning") if w.startswith("nodePools[0].aws.efa")]


def test_default_placement_group_is_part_of_the_warning(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"subnetIds": ["subnet-a"]}
    [w] = [w for w in finding_lines(dev_data, "warning") if w.startswith("nodePools[0].aws.efa")]
    assert "EFA interfaces and a cluster placement group on by default" in w
    pool(dev_data, "gpu-train")["aws"] = {"subnetIds": ["subnet-a"], "efa": True, "placementGroup": True}
    assert not [w for w in finding_lines(dev_data, "warning") if w.startswith("nodePools[0].aws.efa")]


def test_default_compact_placement_on_gke_warns_until_set():
    data = gke_data("gpu-operator")
    [w] = [w for w in finding_lines(data, "warning") if w.startswith("nodePools[0].gcp.compactPlacement")]
    assert "only when it creates a node pool" in w and "replaces the pool" in w
    pool(data, "gpu-train").setdefault("gcp", {})["compactPlacement"] = True
    assert not [w for w in finding_lines(data, "warning") if w.startswith("nodePools[0].gcp.compactPlacement")]


# --- 4. EFA-only interfaces on managed node groups --------------------------------------------------------------------


def test_p5_node_group_uses_one_efa_and_31_efa_only_interfaces(dev_data):
    pool(dev_data, "gpu-train").update(instanceType="p5.48xlarge", aws={"subnetIds": ["subnet-a"], "efa": True})
    spec = parse_spec(dev_data)
    nics = render_eks_launch_template(spec, spec.pools_by_name["gpu-train"])["networkInterfaces"]
    assert len(nics) == 32
    assert (nics[0]["networkCardIndex"], nics[0]["deviceIndex"], nics[0]["interfaceType"]) == (0, 0, "efa")
    assert {(n["deviceIndex"], n["interfaceType"]) for n in nics[1:]} == {(1, "efa-only")}
    assert [n["networkCardIndex"] for n in nics] == list(range(32))


# --- 5. training nodes are not drained by the autoscalers -------------------------------------------------------------


def test_exclusive_tier_pods_are_annotated_so_no_autoscaler_drains_their_node(dev_spec):
    docs = render_admission(dev_spec)
    routed = mutate(docs, gpu_pod({TIER: "train"}), "research")
    assert (
        routed["metadata"]["annotations"]
        == KEEP_ON_NODE_ANNOTATIONS
        == {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false", "karpenter.sh/do-not-disrupt": "true"}
    )
    # A pod's own choice stands, and other annotations are kept.
    pod = gpu_pod({TIER: "train"})
    pod["metadata"]["annotations"] = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true", "team": "x"}
    assert mutate(docs, pod, "research")["metadata"]["annotations"] == {
        "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
        "team": "x",
        "karpenter.sh/do-not-disrupt": "true",
    }
    # Shared pools may be consolidated: their pods are not annotated.
    assert "annotations" not in mutate(docs, gpu_pod({TIER: "dev"}), "research")["metadata"]


# --- 6. what Karpenter's CRDs would reject, and sane bounds ----------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("v2026 latest; rm -rf", "'v2026 latest; rm -rf' is not a release of the al2023 AMI"),
        ("20260801", "'20260801' is not a release of the al2023 AMI"),
        ("v1.40.0", "'v1.40.0' is not a release of the al2023 AMI"),
    ],
)
def test_karpenter_ami_version_must_be_a_release(dev_data, version, message):
    errors = finding_lines(_on_karpenter(dev_data, "gpu-train", karpenter={"amiVersion": version}))
    assert any(e.startswith(f"nodePools[0].aws.karpenter.amiVersion: {message}") for e in errors), errors


def test_karpenter_ami_alias_must_fit_the_crd(dev_data):
    data = _on_karpenter(
        dev_data, "gpu-train", amiType="BOTTLEROCKET_x86_64_NVIDIA", karpenter={"amiVersion": "v1.400000.0000000"}
    )
    assert not [e for e in finding_lines(data) if "amiVersion" in e]  # bottlerocket@ + 17 = 30 characters: fits
    data = _on_karpenter(
        dev_data, "gpu-train", amiType="BOTTLEROCKET_x86_64_NVIDIA", karpenter={"amiVersion": "v1.4000000.00000000"}
    )
    assert any(
        "alias 'bottlerocket@v1.4000000.00000000' is 32 characters; Karpenter's EC2NodeClass allows 30" in e
        for e in finding_lines(data)
    )


def test_karpenter_ami_versions_that_resolve_are_accepted(dev_data):
    assert not [e for e in finding_lines(_on_karpenter(dev_data, "gpu-train", karpenter={"amiVersion": "v20260801"}))]
    data = _on_karpenter(
        dev_data, "gpu-train", amiType="BOTTLEROCKET_x86_64_NVIDIA", karpenter={"amiVersion": "v1.44.0"}
    )
    assert not finding_lines(data)


@pytest.mark.parametrize(
    "key",
    [
        "kubernetes.io/hostname",
        "karpenter.sh/nodepool",
        "karpenter.sh/custom",
        "sub.karpenter.sh/x",
        "karpenter.k8s.aws/custom",
    ],
)
def test_karpenter_restricted_label_keys_are_errors(dev_data, reference, key):
    pool(dev_data, "gpu-train")["labels"] = {key: "x"}
    errors = finding_lines(_on_karpenter(dev_data, "gpu-train"))
    assert any(
        e.startswith(f"nodePools[0].labels.{key}:") and "restricted in a Karpenter NodePool" in e for e in errors
    ), errors
    # ... which the CRD itself rejects.
    spec = _spec(dev_data)
    doc = render_karpenter_node_pool(spec, spec.pools_by_name["gpu-train"])
    with pytest.raises(AssertionError, match="restricted"):
        validate_custom_resource(reference("crds", "karpenter", KARPENTER_CRDS["NodePool"]), doc)


def test_managed_node_group_may_keep_its_labels(dev_data):
    pool(dev_data, "gpu-train")["labels"] = {"karpenter.sh/custom": "x"}
    assert not [e for e in finding_lines(dev_data) if "restricted" in e]


def test_zero_expiry_is_an_error_and_short_expiry_on_training_warns(dev_data):
    for value in ("0s", "0m", "0h0m"):
        errors = finding_lines(_on_karpenter(dev_data, "gpu-train", karpenter={"expireAfter": value}))
        assert any(
            e.startswith(f"nodePools[0].aws.karpenter.expireAfter: '{value}': every node would expire") for e in errors
        ), errors
    data = _on_karpenter(dev_data, "gpu-train", karpenter={"expireAfter": "1h"})
    assert not finding_lines(data)
    [w] = [w for w in finding_lines(data, "warning") if "expireAfter" in w]
    assert w.startswith("nodePools[0].aws.karpenter.expireAfter: '1h' on exclusive (training) pool 'gpu-train'")
    shared = _on_karpenter(dev_data, "gpu-dev", karpenter={"expireAfter": "720h"})
    assert not [w for w in finding_lines(shared, "warning") if w.startswith("nodePools[2].aws.karpenter.expireAfter")]


@pytest.mark.parametrize(("index", "aws"), [(0, {}), (0, {"provisioner": "karpenter"})])
def test_max_size_above_a_cluster_is_an_error(dev_data, index, aws):
    dev_data["nodePools"][index].update(maxSize=10**9, aws=aws)
    assert (
        "nodePools[0].maxSize: 1000000000 nodes; a Kubernetes cluster supports at most 5000 nodes, so "
        "allowed: 0..5000" in finding_lines(dev_data)
    )


def test_managed_node_group_over_the_eks_quota_warns(dev_data):
    pool(dev_data, "gpu-dev")["maxSize"] = 600
    assert not finding_lines(dev_data)
    assert any(
        w.startswith("nodePools[2].maxSize: 600 nodes; EKS's default quota is 450")
        for w in finding_lines(dev_data, "warning")
    )


def test_gke_pool_over_1000_nodes_per_zone_is_an_error():
    data = gke_data()
    pool(data, "gpu-train")["maxSize"] = 1500
    pool(data, "gpu-train").setdefault("gcp", {})["zones"] = ["us-central1-a"]
    assert any(
        e.startswith("nodePools[0].maxSize: 1500 nodes over 1 zone(s); GKE allows at most 1000")
        for e in finding_lines(data)
    )


def _errors(data: dict[str, Any]) -> list[str]:
    """Every error `parse_spec` raises, structural and cross-field, as the CLI prints them."""
    try:
        parse_spec(data)
    except SpecError as e:
        return [str(f) for f in e.findings]
    return []


# --- 7. release fields reach Helm as they are -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("imageTag", "$(whoami)", "clusterAutoscaler.imageTag: '$(whoami)' is not an image tag"),
        ("imageTag", "-v1", "clusterAutoscaler.imageTag: '-v1' is not an image tag"),
        ("namespace", "Kube_System!", "clusterAutoscaler.namespace: 'Kube_System!' is not a namespace name"),
        ("version", "latest; rm", "clusterAutoscaler.version: 'latest; rm' is not a chart version"),
        ("roleArn", "ca-role", "clusterAutoscaler.roleArn: 'ca-role' is not an IAM role ARN"),
        ("roleArn", "arn:aws:iam::1:role/ca", "clusterAutoscaler.roleArn: 'arn:aws:iam::1:role/ca' is not an IAM role"),
    ],
)
def test_cluster_autoscaler_fields_are_checked(dev_data, field, value, message):
    dev_data["clusterAutoscaler"] = {"enabled": True, field: value}
    assert any(e.startswith(message) for e in _errors(dev_data)), _errors(dev_data)


def test_good_cluster_autoscaler_fields_pass(dev_data):
    dev_data["clusterAutoscaler"] = {
        "enabled": True,
        "imageTag": "v1.33.6",
        "namespace": "autoscaler",
        "version": "9.59.0",
        "roleArn": "arn:aws-us-gov:iam::111122223333:role/ca/x",
    }
    assert not finding_lines(dev_data)


def test_efa_device_plugin_namespace_and_version_are_checked(dev_data):
    dev_data["efaDevicePlugin"] = {"namespace": "BAD NS", "version": "x"}
    errors = _errors(dev_data)
    assert any(e.startswith("efaDevicePlugin.namespace: 'BAD NS' is not a namespace name") for e in errors)
    assert any(e.startswith("efaDevicePlugin.version: 'x' is not a chart version") for e in errors)


# --- 9. cost at min size ----------------------------------------------------------------------------------------------


def test_karpenter_pool_costs_nothing_at_min_size(dev_data):
    pool(dev_data, "gpu-dev")["minSize"] = 2
    before = cost_report(parse_spec(json.loads(json.dumps(dev_data)))).to_json()
    after = cost_report(parse_spec(_on_karpenter(dev_data, "gpu-dev"))).to_json()
    dev_pool = next(p for p in after["pools"] if p["name"] == "gpu-dev")
    assert dev_pool["nodesMin"] == 0 and dev_pool["hourlyMin"] == 0 and dev_pool["gpusMin"] == 0
    assert all(t["unitsMin"] == 0 and t["hourlyMin"] == 0 for t in dev_pool["tiers"])
    was = next(p for p in before["pools"] if p["name"] == "gpu-dev")
    assert was["hourlyMin"] > 0
    assert after["totalHourlyMin"] == pytest.approx(before["totalHourlyMin"] - was["hourlyMin"], abs=1e-3)
    assert dev_pool["hourlyMax"] == was["hourlyMax"]


# --- 10. one zone for Karpenter placement groups; EFA on custom instance types ----------------------------------------


def test_karpenter_placement_group_pool_pins_its_zone(dev_data, reference):
    spec = parse_spec(_on_karpenter(dev_data, "gpu-train", zone="us-east-1a"))
    doc = render_karpenter_node_pool(spec, spec.pools_by_name["gpu-train"])
    assert {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]} in doc["spec"][
        "template"
    ]["spec"]["requirements"]
    assert validate_custom_resource(reference("crds", "karpenter", KARPENTER_CRDS["NodePool"]), doc)["skipped"] == []


def test_karpenter_placement_group_over_several_subnets_without_a_zone_warns(dev_data):
    warnings = finding_lines(_on_karpenter(dev_data, "gpu-train"), "warning")
    assert any(
        w.startswith("nodePools[0].aws.zone: unset on pool 'gpu-train', whose cluster placement group")
        for w in warnings
    )
    assert not [
        w
        for w in finding_lines(_on_karpenter(dev_data, "gpu-train", subnetIds=["subnet-a"]), "warning")
        if w.startswith("nodePools[0].aws.zone")
    ]


@pytest.mark.parametrize("zone", ["us-west-2a", "us-east-1", "us-east-1a; x"])
def test_zone_must_be_in_the_region(dev_data, zone):
    assert any(
        e.startswith(f"nodePools[0].aws.zone: {zone!r} is not an availability zone of region 'us-east-1'")
        for e in finding_lines(_on_karpenter(dev_data, "gpu-train", zone=zone))
    )
    assert not finding_lines(_on_karpenter(dev_data, "gpu-train", zone="us-east-1-bos-1a"))


def test_zone_on_a_managed_node_group_is_an_error(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"zone": "us-east-1a"}
    assert any(
        e.startswith("nodePools[0].aws.zone: set, but aws.provisioner is managed-node-group")
        for e in finding_lines(dev_data)
    )


def test_custom_instance_type_declares_its_efa_interfaces(dev_data):
    dev_data["catalog"] = {
        "instanceTypes": [
            {
                "name": "p6-b200.48xlarge",
                "gpuModel": "H100-80GB",
                "gpuCount": 8,
                "hourlyPrice": 100,
                "efaInterfaces": 8,
            },
            {"name": "p9.fake", "gpuModel": "H100-80GB", "gpuCount": 8, "hourlyPrice": 100},
        ]
    }
    pool(dev_data, "gpu-train").update(
        instanceType="p6-b200.48xlarge", aws={"subnetIds": ["subnet-a"], "efa": True, "placementGroup": True}
    )
    spec = parse_spec(json.loads(json.dumps(dev_data)))
    train = spec.pools_by_name["gpu-train"]
    assert efa_count(spec, train) == 8 and uses_efa(spec, train)
    assert len(render_eks_launch_template(spec, train)["networkInterfaces"]) == 8
    assert (
        autoscaler_tags(spec, train)["k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"] == "8"
    )
    pool(dev_data, "gpu-train")["instanceType"] = "p9.fake"  # no efaInterfaces: no EFA
    assert any(
        e.startswith("nodePools[0].aws.efa: true, but 'p9.fake' has no EFA interface") for e in finding_lines(dev_data)
    )


@pytest.mark.parametrize(
    ("section", "field", "value", "message"),
    [
        ("autoscaling.keda", "version", "latest", "autoscaling.keda.version: 'latest' is not a chart version"),
        ("autoscaling.keda", "namespace", "Keda NS", "autoscaling.keda.namespace: 'Keda NS' is not a namespace name"),
        (
            "autoscaling.keda",
            "releaseName",
            "../keda",
            "autoscaling.keda.releaseName: '../keda' is not a Helm release name",
        ),
        ("scheduling.kueue", "version", "^0.19", "scheduling.kueue.version: '^0.19' is not a chart version"),
        ("scheduling.kueue", "version", "v0.19.2", "scheduling.kueue.version: 'v0.19.2': the image tag is made as"),
        ("scheduling.volcano", "version", "v1.15.1", "scheduling.volcano.version: 'v1.15.1': the image tag is made"),
        ("monitoring.prometheus", "version", "88.5", "monitoring.prometheus.version: '88.5' is not a chart"),
        ("monitoring.opencost", "version", "2.5.17 ", "monitoring.opencost.version: '2.5.17 ' is not a chart"),
        ("gpuOperator", "version", "", "gpuOperator.version: '' is not a chart version"),
        ("admission", "kyvernoVersion", "3.7.0;x", "admission.kyvernoVersion: '3.7.0;x' is not a chart version"),
        ("aws", "region", "us-east-1/../x", "aws.region: 'us-east-1/../x' is not an AWS region"),
        ("aws", "nodeRoleArn", "my-node-role", "aws.nodeRoleArn: 'my-node-role' is not an IAM role ARN"),
    ],
)
def test_release_and_account_fields_are_checked(dev_data, section, field, value, message):
    target = dev_data
    for key in section.split("."):
        target = target.setdefault(key, {})
    target[field] = value
    assert any(e.startswith(message) for e in _errors(dev_data)), _errors(dev_data)


@pytest.mark.parametrize("region", ["us-east-1", "us-gov-west-1", "ap-southeast-5", "eusc-de-east-1", "cn-north-1"])
def test_real_aws_regions_pass(dev_data, region):
    dev_data["aws"]["region"] = region
    for p in dev_data["nodePools"]:
        p.get("aws", {}).pop("zone", None)
    assert not [e for e in _errors(dev_data) if "region" in e]


@pytest.mark.parametrize(
    ("location", "zones", "message"),
    [
        ("us-central1", ["europe-west4-a"], "gcp.zones: 'europe-west4-a' (zones[0]) not in the cluster's region"),
        (
            "us-central1-a",
            ["us-east1-b"],
            "gcp.zones: 'us-east1-b' (zones[0]) not in the cluster's region 'us-central1'",
        ),
        ("us-central1", ["us-central1"], "gcp.zones[0]: 'us-central1' is not a GCP zone"),
        ("central", ["us-central1-a"], "gcp.location: 'central' is not a GCP region or zone"),
    ],
)
def test_gke_zones_belong_to_the_cluster_location(location, zones, message):
    data = gke_data()
    data["gcp"].update(location=location, zones=zones)
    assert any(e.startswith(message) for e in _errors(data)), _errors(data)


def test_a_zone_of_another_region_is_reported_with_the_other_fields_errors():
    data = gke_data()
    data["gcp"].update(zones=["europe-west4-a"], project="ab", serviceAccount="nope")
    data["clusterName"] = "Bad Name"
    paths = {e.split(":")[0] for e in _errors(data)}
    assert paths >= {"gcp.zones", "gcp.project", "gcp.serviceAccount", "clusterName"}, paths


def test_gke_zonal_cluster_takes_zones_of_its_region():
    data = gke_data()
    data["gcp"].update(location="us-central1-a", zones=["us-central1-a", "us-central1-b"])
    assert not [e for e in _errors(data) if "zones" in e or "location" in e]
    data["nodePools"][0].setdefault("gcp", {})["zones"] = ["asia-east1-a"]
    assert any(e.startswith("nodePools[0].gcp.zones[0]: 'asia-east1-a' is not in") for e in _errors(data))


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("project", "ml-project", True),
        ("project", "example.com:ml-project", True),
        ("project", "p", False),
        ("project", "My_Project", False),
        ("project", "ml-project-", False),
        ("serviceAccount", "gpu-nodes@ml-project.iam.gserviceaccount.com", True),
        ("serviceAccount", "default", True),
        ("serviceAccount", "gpu-nodes", False),
        ("serviceAccount", "a@b@c.com", False),
    ],
)
def test_gcp_project_and_service_account_are_spelled_as_gcp_spells_them(field, value, ok):
    data = gke_data()
    data["gcp"][field] = value
    errors = [e for e in _errors(data) if e.startswith(f"gcp.{field}:")]
    assert not errors if ok else errors, errors


@pytest.mark.parametrize(
    ("section", "values", "message"),
    [
        (
            "autoscaling.keda",
            {"releaseName": "kube-prometheus-stack", "namespace": "monitoring"},
            "autoscaling.keda.releaseName: 'kube-prometheus-stack' in namespace 'monitoring' is already "
            "monitoring.prometheus",
        ),
        (
            "autoscaling.keda",
            {"releaseName": "opencost", "namespace": "opencost"},
            "autoscaling.keda.releaseName: 'opencost' in namespace 'opencost' is already monitoring.opencost",
        ),
        (
            "monitoring.opencost",
            {"releaseName": "gpu-operator", "namespace": "gpu-operator"},
            "monitoring.opencost.releaseName: 'gpu-operator' in namespace 'gpu-operator' is already the gpu-operator "
            "release",
        ),
        ("autoscaling.keda", {"releaseName": "k" * 54}, "autoscaling.keda.releaseName: '" + "k" * 54),
        (
            "scheduling.kueue",
            {"version": "0.19.2+build.1"},
            "scheduling.kueue.version: '0.19.2+build.1': the image tag",
        ),
    ],
)
def test_helm_releases_keep_to_helm_rules(dev_data, section, values, message):
    target = dev_data
    for key in section.split("."):
        target = target.setdefault(key, {})
    target.update(values)
    assert any(e.startswith(message) for e in _errors(dev_data)), _errors(dev_data)


def test_a_release_name_another_release_had_is_fine_in_another_namespace(dev_data):
    dev_data.setdefault("autoscaling", {})["keda"] = {"releaseName": "kube-prometheus-stack", "namespace": "keda"}
    assert not _errors(dev_data)
    dev_data["autoscaling"]["keda"].update(namespace="monitoring", enabled=False)
    assert not _errors(dev_data)
    dev_data["autoscaling"]["keda"]["releaseName"] = "k" * 53
    assert not _errors(dev_data)


def test_field_errors_come_together_not_one_after_another(dev_data):
    dev_data["aws"].update(region="bad", nodeRoleArn="bad")
    dev_data["kubernetesVersion"] = "9"
    dev_data.setdefault("scheduling", {}).setdefault("kueue", {})["version"] = "v1.0.0"
    dev_data["nodePools"][0]["maxSize"] = -1
    paths = {e.split(":")[0] for e in _errors(dev_data)}
    assert paths >= {
        "aws.region",
        "aws.nodeRoleArn",
        "kubernetesVersion",
        "scheduling.kueue.version",
        "nodePools[0].maxSize",
    }, paths
    data = gke_data()
    data["gcp"].update(project="Bad!", location="nowhere", serviceAccount="nope")
    paths = {e.split(":")[0] for e in _errors(data)}
    assert paths >= {"gcp.project", "gcp.location", "gcp.serviceAccount"}, paths


def test_account_fields_are_checked_when_the_model_is_built_in_python():
    from pydantic import ValidationError

    from gpu_platform.spec import AwsSpec, GcpSpec

    with pytest.raises(ValidationError) as info:
        GcpSpec(project="Bad!", location="nowhere", service_account="nope")
    assert {e["loc"][0] for e in info.value.errors()} == {"project", "location", "service_account"}
    with pytest.raises(ValidationError, match="is not an IAM role ARN"):
        AwsSpec(region="us-east-1", node_role_arn="my-role")


@pytest.mark.parametrize(
    ("arn", "ok"),
    [
        ("arn:aws:iam::111122223333:role/gpu-nodes", True),
        ("arn:aws:iam::111122223333:role/service-role/gpu-nodes", True),
        ("arn:aws-cn:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_x_1", True),
        ("arn:aws:iam::111122223333:role/" + "r" * 64, True),
        ("arn:aws:iam::111122223333:role/" + "r" * 65, False),  # IAM role names stop at 64
        ("arn:aws:iam::111122223333:role//gpu-nodes", False),  # an empty path segment
        ("arn:aws:iam::111122223333:role/gpu-nodes/", False),  # no name
    ],
)
def test_role_arns_follow_iam_limits(dev_data, arn, ok):
    dev_data["aws"]["nodeRoleArn"] = arn
    errors = [e for e in _errors(dev_data) if e.startswith("aws.nodeRoleArn")]
    assert not errors if ok else errors, errors


@pytest.mark.parametrize(
    ("zone", "ok"),
    [("us-central1-a", True), ("us-central1-ai1a", True), ("us-central1-0", False), ("us-central1-zz9", False)],
)
def test_gcp_zones_are_spelled_as_gcp_spells_them(zone, ok):
    data = gke_data()
    data["gcp"]["zones"] = [zone]
    errors = [e for e in _errors(data) if e.startswith("gcp.zones")]
    assert not errors if ok else errors, errors
