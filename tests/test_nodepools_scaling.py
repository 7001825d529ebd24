"""EFA and placement, Karpenter, cluster-autoscaler and GKE drivers: render tests, strict conformance against the
upstream CRDs and Helm values files in ../shared/reference, and validation findings."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from gpu_platform.errors import Severity
from gpu_platform.load import parse_spec
from gpu_platform.nodepools.addons import render_node_addons
from gpu_platform.nodepools.autoscaler import render_cluster_autoscaler_release
from gpu_platform.nodepools.efa import render_efa_device_plugin_release, uses_efa, uses_placement_group
from gpu_platform.nodepools.eks import (
    ACCELERATOR_LABEL,
    CA_TEMPLATE_PREFIX,
    autoscaler_tags,
    render_eks_launch_template,
    render_eks_node_group,
)
from gpu_platform.nodepools.gke import render_gke_node_pool
from gpu_platform.nodepools.karpenter import render_ec2_node_class, render_karpenter_node_pool
from gpu_platform.nodepools.render import render_node_pool
from gpu_platform.spec import PlatformSpec
from gpu_platform.validation import check_spec
from helpers.crd import validate_custom_resource
from helpers.specs import finding_lines, gke_data, pool

KARPENTER_CRDS = {"NodePool": "karpenter.sh_nodepools.yaml", "EC2NodeClass": "karpenter.k8s.aws_ec2nodeclasses.yaml"}


def _karpenter(dev_data: dict, first_only: dict | None = None, validate: bool = True, **aws: Any) -> Any:
    """The dev spec with every non-MIG pool on Karpenter (`aws` options on them, `first_only` on gpu-train); the MIG
    pool gpu-infer stays a managed node group (Karpenter cannot serve MIG resources)."""
    for p in dev_data["nodePools"]:
        if p["sharing"]["mode"] != "mig":
            p["aws"] = {"provisioner": "karpenter", **aws}
    pool(dev_data, "gpu-train")["aws"].update(first_only or {})
    return parse_spec(dev_data) if validate else PlatformSpec.model_validate(dev_data)


# --- EFA and placement (EKS managed node groups) ---------------------------------------------------------------


def _one_zone(dev_data: dict) -> Any:
    """The dev spec with gpu-train in one subnet (so one zone: its placement group can be used)."""
    pool(dev_data, "gpu-train")["aws"] = {"subnetIds": ["subnet-a"]}
    return parse_spec(dev_data)


def test_exclusive_p4de_pool_gets_one_efa_per_network_card(dev_data):
    spec = _one_zone(dev_data)
    pool = spec.pools_by_name["gpu-train"]
    lt = render_eks_launch_template(spec, pool)
    nics = lt["networkInterfaces"]
    assert [(n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in nics] == [
        (0, 0, "efa"),
        (1, 1, "efa-only"),
        (2, 1, "efa-only"),
        (3, 1, "efa-only"),
    ]
    # EKS stops adding the cluster security group once the template names groups: both are on every interface.
    assert all(
        n["securityGroups"] == ["${cluster.vpcConfig.clusterSecurityGroupId}", "${efaSecurityGroup.id}"] for n in nics
    )
    assert all("subnetId" not in n for n in nics)  # EKS forbids a subnet in the launch template
    assert lt["placement"] == {"groupName": "ml-dev-gpu-train"}


@pytest.mark.parametrize("pool", ["gpu-infer", "gpu-dev", "gpu-ci"])
def test_shared_pools_get_no_efa_or_placement_by_default(dev_spec, pool):
    p = dev_spec.pools_by_name[pool]
    lt = render_eks_launch_template(dev_spec, p)
    assert "networkInterfaces" not in lt and "placement" not in lt
    assert not uses_efa(dev_spec, p) and not uses_placement_group(dev_spec, p)


def test_dev_pool_over_two_subnets_gets_efa_but_no_placement_group(dev_spec):
    pool = dev_spec.pools_by_name["gpu-train"]
    lt = render_eks_launch_template(dev_spec, pool)
    assert len(lt["networkInterfaces"]) == 4 and "placement" not in lt
    [info] = [f for f in check_spec(dev_spec) if f.path == "nodePools[0].aws.subnetIds"]
    assert (
        info.severity is Severity.INFO
        and "gets no cluster placement group because its subnets may span zones" in info.message
    )


def test_efa_opt_in_and_placement_opt_out(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"placementGroup": False, "subnetIds": ["subnet-a"]}
    pool(dev_data, "gpu-infer")["aws"] = {"efa": True, "subnetIds": ["subnet-a"]}
    spec = parse_spec(dev_data)
    train, infer = pool(spec, "gpu-train"), pool(spec, "gpu-infer")
    assert "placement" not in render_eks_launch_template(spec, train)
    assert len(render_eks_launch_template(spec, train)["networkInterfaces"]) == 4
    assert len(render_eks_launch_template(spec, infer)["networkInterfaces"]) == 4
    assert render_eks_launch_template(spec, infer)["placement"] == {"groupName": "ml-dev-gpu-infer"}


def test_capacity_block_pool_gets_efa_but_no_placement_group(dev_data):
    # A Capacity Block's instances are already placed together; a reservation serves only its own placement group.
    pool(dev_data, "gpu-train")["aws"] = {
        "subnetIds": ["subnet-a"],
        "capacityType": "CAPACITY_BLOCK",
        "capacityReservationId": "cr-0123",
    }
    spec = parse_spec(dev_data)
    lt = render_eks_launch_template(spec, pool(spec, "gpu-train"))
    assert len(lt["networkInterfaces"]) == 4 and "placement" not in lt
    assert lt["capacityReservationSpecification"] == {"capacityReservationTarget": {"capacityReservationId": "cr-0123"}}


def test_p5_pool_gets_32_interfaces(dev_data):
    pool(dev_data, "gpu-train")["instanceType"] = "p5.48xlarge"
    spec = parse_spec(dev_data)
    nics = render_eks_launch_template(spec, pool(spec, "gpu-train"))["networkInterfaces"]
    assert len(nics) == 32 and nics[-1]["networkCardIndex"] == 31


def test_efa_pool_synth_document_lists_security_group_and_placement_group(dev_data):
    spec = _one_zone(dev_data)
    doc = render_node_pool(spec, spec.pools_by_name["gpu-train"])
    roles = {r["role"]: r for r in doc["resources"]}
    assert roles["pg"]["inputs"] == {
        "name": "ml-dev-gpu-train",
        "strategy": "cluster",
        "tags": {"gpu-platform/cluster": "ml-dev", "gpu-platform/pool": "gpu-train"},
    }
    sg = roles["efa-sg"]["inputs"]
    rule = {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}
    assert [{k: r[k] for k in rule} for r in sg["ingress"]] == [rule]
    assert [{k: r[k] for k in rule} for r in sg["egress"]] == [rule]


def test_efa_nodes_are_labelled_and_advertise_efa_to_the_autoscaler(dev_spec):
    pool = dev_spec.pools_by_name["gpu-train"]
    assert render_eks_node_group(dev_spec, pool)["labels"]["gpu.example.com/efa"] == "true"
    tags = autoscaler_tags(dev_spec, pool)
    assert tags[f"{CA_TEMPLATE_PREFIX}/resources/vpc.amazonaws.com/efa"] == "4"
    assert tags[f"{CA_TEMPLATE_PREFIX}/label/gpu.example.com/efa"] == "true"


def test_efa_on_a_type_without_efa_is_an_error(dev_data):
    pool(dev_data, "gpu-dev").update(instanceType="g5.xlarge", aws={"efa": True})
    errors = finding_lines(PlatformSpec.model_validate(dev_data))
    assert any(
        e.startswith(
            "nodePools[2].aws.efa: true, but 'g5.xlarge' has no EFA interface; allowed: false, or an EFA-capable type ("
        )
        and "p4d.24xlarge" in e
        for e in errors
    ), errors


def test_placement_group_forced_across_subnets_warns(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"placementGroup": True}
    warnings = finding_lines(parse_spec(dev_data), "warning")
    assert any(
        w.startswith(
            "nodePools[0].aws.subnetIds: ['subnet-a', 'subnet-b']: a cluster placement group lives "
            "in one availability zone"
        )
        for w in warnings
    )
    pool(dev_data, "gpu-train")["aws"] = {"subnetIds": ["subnet-a"]}
    assert not any(w.startswith("nodePools[0].aws.subnetIds") for w in finding_lines(parse_spec(dev_data), "warning"))


def test_efa_device_plugin_release_tolerates_the_efa_pools(dev_spec):
    rel = render_efa_device_plugin_release(dev_spec)
    assert (rel["chart"], rel["version"], rel["repository"]) == (
        "aws-efa-k8s-device-plugin",
        "v0.5.30",
        "https://aws.github.io/eks-charts",
    )
    assert rel["values"]["nodeSelector"] == {"gpu.example.com/efa": "true"}
    assert {(t["key"], t["operator"], t["effect"]) for t in rel["values"]["tolerations"]} == {
        ("gpu.example.com/gpu-pool", "Exists", "NoSchedule"),
        ("nvidia.com/gpu", "Exists", "NoSchedule"),
    }


def test_no_efa_pool_no_device_plugin(dev_data):
    pool(dev_data, "gpu-train")["aws"] = {"efa": False}
    assert render_efa_device_plugin_release(parse_spec(dev_data)) is None


# --- accelerator label ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pool", "value"),
    [
        ("gpu-train", "nvidia-a100-sxm4-80gb"),
        ("gpu-dev", "nvidia-a100-sxm4-40gb"),
        ("gpu-ci", "nvidia-a100-sxm4-40gb"),
        ("gpu-infer", None),
    ],
)
def test_accelerator_label_on_gpu_pools_except_mig(dev_spec, pool, value):
    labels = render_eks_node_group(dev_spec, dev_spec.pools_by_name[pool])["labels"]
    # MIG nodes (mixed strategy) advertise no nvidia.com/gpu: with the label the autoscaler would hold them unready.
    assert labels.get(ACCELERATOR_LABEL) == value
    tags = autoscaler_tags(dev_spec, dev_spec.pools_by_name[pool])
    assert tags.get(f"{CA_TEMPLATE_PREFIX}/label/{ACCELERATOR_LABEL}") == value


# --- Karpenter -----------------------------------------------------------------------------------------------------


def test_karpenter_node_pool_carries_the_contract(dev_data):
    spec = _karpenter(dev_data)
    np = render_karpenter_node_pool(spec, spec.pools_by_name["gpu-dev"])
    tmpl = np["spec"]["template"]
    assert tmpl["metadata"]["labels"] == {
        "k8s.amazonaws.com/accelerator": "nvidia-a100-sxm4-40gb",
        "gpu.example.com/gpu-pool": "gpu-dev",
        "nvidia.com/device-plugin.config": "gpu-dev",
    }
    assert tmpl["spec"]["taints"] == [
        {"key": "gpu.example.com/gpu-pool", "value": "gpu-dev", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    ]
    assert tmpl["spec"]["requirements"] == [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    assert tmpl["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu-dev"}


def test_karpenter_disruption_never_consolidates_a_running_training_node(dev_data):
    spec = _karpenter(dev_data)
    train = render_karpenter_node_pool(spec, spec.pools_by_name["gpu-train"])["spec"]
    assert train["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "10m",
        "budgets": [{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "10%"}],
    }
    assert train["template"]["spec"]["expireAfter"] == "Never"
    assert train["limits"] == {"nodes": "16", "nvidia.com/gpu": "128"}
    dev = render_karpenter_node_pool(spec, spec.pools_by_name["gpu-dev"])["spec"]
    # Karpenter counts what a node advertises: 8 GPUs x 4 time-slices x maxSize 4
    assert dev["limits"] == {"nodes": "4", "nvidia.com/gpu": "128"}
    assert dev["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert dev["disruption"]["budgets"] == [{"nodes": "10%"}]


def test_ec2_node_class_hardening_efa_and_placement(dev_data):
    spec = _karpenter(dev_data)
    nc = render_ec2_node_class(spec, spec.pools_by_name["gpu-train"])["spec"]
    assert nc["role"] == "gpu-nodes"
    assert nc["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert nc["subnetSelectorTerms"] == [{"id": "subnet-a"}, {"id": "subnet-b"}]
    assert nc["securityGroupSelectorTerms"] == [
        {"tags": {"aws:eks:cluster-name": "ml-dev"}},
        {"tags": {"gpu-platform/efa": "ml-dev/gpu-train"}},
    ]
    assert nc["metadataOptions"]["httpTokens"] == "required" and nc["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert all(m["ebs"]["encrypted"] is True for m in nc["blockDeviceMappings"])
    assert nc["networkInterfaces"][0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    assert [n["interfaceType"] for n in nc["networkInterfaces"][1:]] == ["efa-only"] * 4
    assert nc["placementGroupSelector"] == {"name": "ml-dev-gpu-train"}
    dev = render_ec2_node_class(spec, spec.pools_by_name["gpu-dev"])["spec"]
    assert "networkInterfaces" not in dev and "placementGroupSelector" not in dev


def test_karpenter_capacity_block_and_bottlerocket(dev_data):
    spec = _karpenter(
        dev_data,
        first_only={
            "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
            "subnetIds": ["subnet-a"],
            "karpenter": {"amiVersion": "v1.40.0"},
        },
        capacityType="CAPACITY_BLOCK",
        capacityReservationId="cr-0123",
    )
    pool = spec.pools_by_name["gpu-train"]
    np, nc = render_karpenter_node_pool(spec, pool), render_ec2_node_class(spec, pool)["spec"]
    assert np["spec"]["template"]["spec"]["requirements"][1]["values"] == ["reserved"]
    assert nc["capacityReservationSelectorTerms"] == [{"id": "cr-0123"}]
    assert "placementGroupSelector" not in nc and len(nc["networkInterfaces"]) == 5
    assert nc["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.40.0"}]
    assert [m["deviceName"] for m in nc["blockDeviceMappings"]] == ["/dev/xvda", "/dev/xvdb"]


def _karpenter_variants(dev_data) -> list:
    out = []
    bottlerocket = {"amiType": "BOTTLEROCKET_x86_64_NVIDIA"}  # exclusive pools only
    for first, aws in (
        ({}, {}),
        (bottlerocket, {"capacityType": "SPOT", "kmsKeyId": "arn:aws:kms:k"}),
        (
            {"subnetIds": ["subnet-a"]},
            {"capacityType": "CAPACITY_BLOCK", "capacityReservationId": "cr-0123", "efa": True},
        ),
    ):
        out.append(_karpenter(json.loads(json.dumps(dev_data)), first, **aws))
    data = json.loads(json.dumps(dev_data))
    pool(data, "gpu-train")["instanceType"] = "p5.48xlarge"
    out.append(_karpenter(data))
    return out


@pytest.mark.conformance
def test_karpenter_objects_validate_strictly_against_the_v1_14_1_crds(reference, dev_data):
    ran, kinds = 0, set()
    for spec in _karpenter_variants(dev_data):
        for p in spec.node_pools:
            for doc in (render_karpenter_node_pool(spec, p), render_ec2_node_class(spec, p)):
                result = validate_custom_resource(reference("crds", "karpenter", KARPENTER_CRDS[doc["kind"]]), doc)
                assert result["skipped"] == [], result["skipped"]  # every CEL rule evaluated
                ran += len(result["ran"])
                kinds.add(doc["kind"])
    assert kinds == {"NodePool", "EC2NodeClass"} and ran > 100


@pytest.mark.conformance
def test_karpenter_crd_check_catches_a_restricted_label_and_a_bad_interface(reference, dev_data):
    spec = _karpenter(dev_data)
    pool = spec.pools_by_name["gpu-train"]
    np = render_karpenter_node_pool(spec, pool)
    np["spec"]["template"]["metadata"]["labels"]["karpenter.sh/custom"] = "x"
    with pytest.raises(AssertionError, match='label domain \\\\"karpenter.sh\\\\" is restricted|karpenter.sh'):
        validate_custom_resource(reference("crds", "karpenter", KARPENTER_CRDS["NodePool"]), np)
    nc = render_ec2_node_class(spec, pool)
    nc["spec"]["networkInterfaces"][0]["interfaceType"] = "efa-only"  # no primary ENA interface
    with pytest.raises(AssertionError, match="primary interface"):
        validate_custom_resource(reference("crds", "karpenter", KARPENTER_CRDS["EC2NodeClass"]), nc)


def test_karpenter_duration_is_checked(dev_data):
    spec = _karpenter(dev_data, validate=False, karpenter={"expireAfter": "30d"})
    assert (
        "nodePools[0].aws.karpenter.expireAfter: '30d' is not a Karpenter duration; allowed: e.g. 30s, 10m, "
        "1h30m, or Never" in finding_lines(spec)
    )


def test_karpenter_pool_min_size_warns(dev_data):
    pool(dev_data, "gpu-dev")["minSize"] = 1
    spec = _karpenter(dev_data)
    assert any(
        w.startswith("nodePools[2].minSize: 1 on a Karpenter pool: Karpenter keeps no minimum")
        for w in finding_lines(spec, "warning")
    )


def test_karpenter_synth_document(dev_data):
    spec = _karpenter(dev_data)
    doc = render_node_pool(spec, spec.pools_by_name["gpu-train"])
    assert doc["type"] == "kubernetes:karpenter.sh/v1:NodePool" and doc["provisioner"] == "karpenter"
    assert [r["role"] for r in doc["resources"]] == ["ec2nodeclass", "pg", "efa-sg"]


# --- cluster-autoscaler --------------------------------------------------------------------------------------------


def test_autoscaler_off_by_default(dev_spec):
    assert render_cluster_autoscaler_release(dev_spec) is None


def test_autoscaler_release_values(dev_data):
    dev_data["clusterAutoscaler"] = {"enabled": True, "roleArn": "arn:aws:iam::111122223333:role/ca"}
    rel = render_cluster_autoscaler_release(parse_spec(dev_data))
    assert (rel["chart"], rel["version"], rel["namespace"]) == ("cluster-autoscaler", "9.59.0", "kube-system")
    v = rel["values"]
    assert v["autoDiscovery"] == {"clusterName": "ml-dev"} and v["awsRegion"] == "us-east-1"
    assert v["extraArgs"] == {"expander": "least-waste", "balance-similar-node-groups": True}
    assert v["image"] == {"tag": "v1.33.6"}  # the cluster's minor, not the chart's v1.35.0
    assert v["rbac"]["serviceAccount"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/ca"
    }


def test_priority_expander_prefers_the_cheapest_pool(dev_data):
    dev_data["clusterAutoscaler"] = {"enabled": True, "expander": "priority", "version": "9.60.0"}
    rel = render_cluster_autoscaler_release(parse_spec(dev_data))
    assert rel["version"] == "9.60.0" and rel["values"]["extraArgs"]["expander"] == "priority,least-waste"
    prios = rel["values"]["expanderPriorities"]
    assert all(isinstance(k, str) for k in prios)  # Pulumi serialises values as JSON: object keys are strings
    ranked = [prios[k][0] for k in sorted(prios, key=int, reverse=True)]
    # p4d ($2.74/GPU-h) before p4de ($3.43/GPU-h); a catch-all last so every node group stays scalable.
    suffix = "[0-9]{18}[0-9a-f]{8}-[0-9a-f-]+$"
    assert ranked == [f"^eks-gpu\\-{p}\\-{suffix}" for p in ("ci", "dev", "infer", "train")] + [".*"]
    import re

    assert re.match(ranked[2], "eks-gpu-infer-20261130124501123400000001-6ac8b6f1-1c2d-4e3f-8a9b-0c1d2e3f4a5b")
    assert not re.match(ranked[2], "eks-gpu-infer-a100-20261130124501123400000001-6ac8b6f1-1c2d")


def test_autoscaler_unknown_kubernetes_minor_is_an_error(dev_data):
    dev_data.update(kubernetesVersion="1.29", clusterAutoscaler={"enabled": True})
    assert any(
        e.startswith("clusterAutoscaler.imageTag: no default image for Kubernetes 1.29")
        for e in finding_lines(PlatformSpec.model_validate(dev_data))
    )
    dev_data["clusterAutoscaler"]["imageTag"] = "v1.29.6"
    assert render_cluster_autoscaler_release(parse_spec(dev_data))["values"]["image"] == {"tag": "v1.29.6"}


def test_autoscaler_on_gke_warns_and_installs_nothing():
    data = gke_data()
    data["clusterAutoscaler"] = {"enabled": True}
    spec = parse_spec(data)
    assert render_cluster_autoscaler_release(spec) is None
    assert any(w.startswith("clusterAutoscaler.enabled: true on GKE") for w in finding_lines(spec, "warning"))


def _values_paths(values: Any, prefix: str = "") -> list[str]:
    if isinstance(values, dict) and values:
        return [p for k, v in values.items() for p in _values_paths(v, f"{prefix}.{k}" if prefix else str(k))]
    return [prefix]


def _known(upstream: Any, path: str, free_form: set[str]) -> bool:
    """The path exists upstream, or sits under a map the chart passes through as a whole."""
    node, walked = upstream, []
    for part in path.split("."):
        if ".".join(walked) in free_form or (isinstance(node, dict) and node == {} and walked):
            return True
        if not isinstance(node, dict) or part not in node:
            return False
        node, walked = node[part], [*walked, part]
    return True


# Maps the charts render as a whole (templates named), where upstream lists examples or nothing.
FREE_FORM = {
    # cluster-autoscaler 9.59.0 templates/deployment.yaml: every extraArgs entry becomes --<key>=<value>;
    # expanderPriorities becomes the priority ConfigMap (templates/priority-expander-configmap.yaml).
    "cluster-autoscaler": {"extraArgs", "expanderPriorities", "rbac.serviceAccount.annotations"},
    # aws-efa-k8s-device-plugin v0.5.30 templates/daemonset.yaml: nodeSelector and tolerations are copied as is.
    "aws-efa-k8s-device-plugin": {"nodeSelector"},
}


@pytest.mark.conformance
@pytest.mark.parametrize(
    ("chart", "file"),
    [
        ("cluster-autoscaler", "cluster-autoscaler-values-9.59.0.yaml"),
        ("aws-efa-k8s-device-plugin", "aws-efa-k8s-device-plugin-values-v0.5.30.yaml"),
    ],
)
def test_helm_values_keys_exist_upstream(chart, file, reference, dev_data):
    dev_data["clusterAutoscaler"] = {
        "enabled": True,
        "expander": "priority",
        "roleArn": "arn:aws:iam::111122223333:role/ca",
    }
    release = next(r for r in render_node_addons(parse_spec(dev_data)).releases if r["chart"] == chart)
    upstream = yaml.safe_load(reference("upstream", file).read_text())
    unknown = [p for p in _values_paths(release["values"]) if not _known(upstream, p, FREE_FORM[chart])]
    assert unknown == [], f"{chart} values keys not in {file}: {unknown}"


@pytest.mark.conformance
def test_values_key_check_catches_a_typo(reference, dev_data):
    upstream = yaml.safe_load(reference("upstream", "cluster-autoscaler-values-9.59.0.yaml").read_text())
    assert not _known(upstream, "autoDiscovery.clustername", FREE_FORM["cluster-autoscaler"])
    assert _known(upstream, "extraArgs.expander", FREE_FORM["cluster-autoscaler"])


# --- GKE: compact placement and drivers ------------------------------------------------------------------------------


def test_gke_exclusive_a2_pool_in_one_zone_gets_compact_placement():
    spec = parse_spec(gke_data())
    assert render_gke_node_pool(spec, spec.pools_by_name["gpu-train"])["placementPolicy"] == {"type": "COMPACT"}
    # shared pools, and pools across two zones, do not
    assert "placementPolicy" not in render_gke_node_pool(spec, spec.pools_by_name["gpu-dev"])
    spec = parse_spec(gke_data(**{"gpu-train": {"gcp": {"zones": ["us-central1-a", "us-central1-c"]}}}))
    assert "placementPolicy" not in render_gke_node_pool(spec, spec.pools_by_name["gpu-train"])


def test_gke_compact_placement_across_zones_is_an_error():
    spec = PlatformSpec.model_validate(gke_data(**{"gpu-dev": {"gcp": {"compactPlacement": True}}}))
    errors = finding_lines(spec)
    assert (
        "nodePools[1].gcp.compactPlacement: true with zones ['us-central1-a', 'us-central1-c']; a compact "
        "placement pool lives in one zone: set gcp.zones to one zone, or compactPlacement: false" in errors
    )


def test_gke_operator_stack_renders_googles_driver_installer():
    spec = parse_spec(gke_data("gpu-operator"))
    (ds,) = render_node_addons(spec).documents
    assert (ds["kind"], ds["metadata"]["namespace"], ds["metadata"]["name"]) == (
        "DaemonSet",
        "kube-system",
        "nvidia-driver-installer",
    )
    pod = ds["spec"]["template"]["spec"]
    assert pod["tolerations"] == [{"operator": "Exists"}]  # reaches the pools' tainted nodes
    exprs = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"} in exprs["matchExpressions"]
    installer = pod["initContainers"][0]
    assert {"name": "NVIDIA_INSTALL_DIR_HOST", "value": "/home/kubernetes/bin/nvidia"} in installer["env"]
    # the pools leave the driver to it
    acc = render_gke_node_pool(spec, spec.pools_by_name["gpu-ci"])["nodeConfig"]["guestAccelerators"][0]
    assert acc["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}


def test_gke_native_stack_needs_no_installer_and_opt_out_warns():
    assert render_node_addons(parse_spec(gke_data())).empty
    data = gke_data("gpu-operator")
    data["gcp"]["driverInstaller"] = False
    spec = parse_spec(data)
    assert not render_node_addons(spec).documents
    assert any(
        w.startswith("gcp.driverInstaller: false with gpuStack gpu-operator") for w in finding_lines(spec, "warning")
    )


@pytest.mark.conformance
def test_driver_installer_is_a_valid_kubernetes_object():
    import kubernetes_validate

    (ds,) = render_node_addons(parse_spec(gke_data("gpu-operator"))).documents
    kubernetes_validate.validate(ds, "1.33", strict=True)


def test_synth_writes_karpenter_objects_for_kubectl_and_reads_their_labels_back(dev_data, tmp_path):
    from gpu_platform.synth import previous_node_labels, render_all, write_artifacts

    spec = _karpenter(dev_data)
    write_artifacts(render_all(spec), tmp_path)
    docs = list(yaml.safe_load_all((tmp_path / "kubernetes" / "karpenter.yaml").read_text()))
    assert [d["kind"] for d in docs] == ["EC2NodeClass", "NodePool"] * 3
    labels = previous_node_labels(tmp_path)
    assert labels["gpu-infer"]["nvidia.com/mig.config"] == "gpu-infer-3g40-2g20-1g10x2"


def test_managed_node_group_stack_writes_no_karpenter_file(dev_spec, tmp_path):
    from gpu_platform.synth import render_all

    assert not [a for a in render_all(dev_spec) if a.name == "karpenter"]


def test_priority_expander_release_registers_under_pulumi(pulumi_mocks, dev_data):
    """The rendered values go through Pulumi's serialisation (int keys used to fail the program)."""
    from gpu_platform.nodepools.component import GpuNodeAddons, GpuNodeAddonsArgs

    dev_data["clusterAutoscaler"] = {"enabled": True, "expander": "priority"}
    spec = parse_spec(dev_data)
    rec = pulumi_mocks.run(lambda: GpuNodeAddons("x", GpuNodeAddonsArgs(spec)))
    [release] = [r for r in rec.resources if r.type.endswith(":Release") and "cluster-autoscaler" in r.name]
    prios = release.inputs["values"]["expanderPriorities"]
    assert set(prios) == {str(k) for k in (1, 11, 21, 31, 41)} and prios["1"] == [".*"]
