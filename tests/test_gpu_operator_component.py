"""GpuOperator under Pulumi mocks: children, names, parents, Release inputs, and the restart mechanism."""

from __future__ import annotations

import copy

from gpu_platform.gpu_operator.render import render_gpu_operator
from gpu_platform.load import parse_spec
from helpers.specs import dev_fleet_on_gke, pool

TOKEN = "gpu-platform:index:GpuOperator"


def _run(rec, spec, name="gpuop"):
    from gpu_platform.gpu_operator import GpuOperator, GpuOperatorArgs

    return rec.run(lambda: GpuOperator(name, GpuOperatorArgs(spec=spec)))


def test_children_names_types_and_parents(pulumi_mocks, dev_spec):
    rec = _run(pulumi_mocks, dev_spec)
    r = render_gpu_operator(dev_spec)
    assert rec.named("gpuop").type == TOKEN and rec.named("gpuop").custom is False
    ns = rec.named("gpuop-namespace-gpu-operator")
    assert ns.type == "kubernetes:core/v1:Namespace"
    for cm in (r.names.device_plugin, r.names.mig_parted, r.names.dcgm):
        res = rec.named(f"gpuop-configmap-gpu-operator-{cm}")
        assert res.type == "kubernetes:core/v1:ConfigMap" and res.inputs["metadata"]["name"] == cm
    release = rec.named("gpuop-release")
    assert release.type == "kubernetes:helm.sh/v3:Release"
    children = [x for x in rec.resources if x.name != "gpuop"]
    assert len(children) == 5 and all(x.parent_name == "gpuop" for x in children)


def test_release_inputs_match_the_rendered_document(pulumi_mocks, dev_spec):
    rec = _run(pulumi_mocks, dev_spec)
    doc = render_gpu_operator(dev_spec).release
    inputs = rec.named("gpuop-release").inputs
    assert inputs["chart"] == "gpu-operator" and inputs["version"] == "v26.7.0"
    assert inputs["namespace"] == "gpu-operator"
    assert inputs["repositoryOpts"]["repo"] == "https://helm.ngc.nvidia.com/nvidia"
    assert inputs["values"] == doc["values"]


def test_configmap_data_is_passed_unchanged(pulumi_mocks, dev_spec):
    rec = _run(pulumi_mocks, dev_spec)
    r = render_gpu_operator(dev_spec)
    (cm,) = [d for d in r.documents if d["metadata"]["name"] == r.names.device_plugin]
    assert rec.named(f"gpuop-configmap-gpu-operator-{r.names.device_plugin}").inputs["data"] == cm["data"]


def _dp_resource_names(rec) -> set[str]:
    return {x.name for x in rec.resources if x.name.startswith("gpuop-configmap-gpu-operator-device-plugin-config-")}


def test_sharing_change_replaces_the_configmap_and_repoints_the_release(pulumi_mocks, dev_data):
    before = _run(pulumi_mocks, parse_spec(dev_data))
    old_names = _dp_resource_names(before)
    old_values = before.named("gpuop-release").inputs["values"]
    changed = copy.deepcopy(dev_data)
    pool(changed, "gpu-dev")["sharing"]["replicas"] = 6
    pulumi_mocks.resources.clear()
    after = _run(pulumi_mocks, parse_spec(changed))
    new_names = _dp_resource_names(after)
    assert len(old_names) == len(new_names) == 1 and old_names != new_names
    new_values = after.named("gpuop-release").inputs["values"]
    assert new_values["devicePlugin"]["config"]["name"] != old_values["devicePlugin"]["config"]["name"]


def test_size_change_keeps_the_configmap_and_release_values(pulumi_mocks, dev_data):
    before = _run(pulumi_mocks, parse_spec(dev_data))
    old = (_dp_resource_names(before), before.named("gpuop-release").inputs["values"])
    changed = copy.deepcopy(dev_data)
    pool(changed, "gpu-dev")["maxSize"] = 12
    pulumi_mocks.resources.clear()
    after = _run(pulumi_mocks, parse_spec(changed))
    assert (_dp_resource_names(after), after.named("gpuop-release").inputs["values"]) == old


def test_gke_registers_the_resource_quota(pulumi_mocks, dev_data):
    rec = _run(pulumi_mocks, parse_spec(dev_fleet_on_gke(dev_data)))
    quota = rec.named("gpuop-resourcequota-gpu-operator-gpu-operator-quota")
    assert quota.parent_name == "gpuop"


def test_platform_wires_the_operator(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    (op,) = rec.of_type(TOKEN)
    assert op.name == "plat-gpu-operator" and op.parent_name == "plat"
    assert rec.named("plat-gpu-operator-release").parent_name == "plat-gpu-operator"


def test_platform_skips_the_operator_on_gke_native(pulumi_mocks, dev_data):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    data = dev_fleet_on_gke(dev_data, stack="gke-native")
    pool(data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 2}
    for tier in data["tiers"]:
        if tier["pool"] == "gpu-infer":
            tier.pop("resource")  # GKE advertises the partitions as nvidia.com/gpu
    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=parse_spec(data))))
    assert rec.of_type(TOKEN) == []
