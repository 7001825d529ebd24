"""Rendered documents become Pulumi resources with the right type token, name and every top-level field."""


def test_k8s_objects(pulumi_mocks):
    from gpu_platform.k8s import k8s_objects

    docs = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "train"},
            "value": 5,
            "preemptionPolicy": "Never",
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "q", "namespace": "ns"},
            "spec": {"clusterQueue": "a"},
        },
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "b"}},
    ]
    import pulumi

    rec = pulumi_mocks.run(lambda: k8s_objects("p", docs, pulumi.ResourceOptions()))
    pc = rec.named("p-priorityclass-train")
    assert (
        pc.type == "kubernetes:scheduling.k8s.io/v1:PriorityClass"
        and pc.inputs["value"] == 5
        and pc.inputs["preemptionPolicy"] == "Never"
    )
    lq = rec.named("p-localqueue-ns-q")
    assert lq.type == "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue" and lq.inputs["spec"] == {"clusterQueue": "a"}
    cm = rec.named("p-configmap-ns-c")
    assert cm.type == "kubernetes:core/v1:ConfigMap" and cm.inputs["data"] == {"a": "b"}


def test_bottlerocket_pools_disable_operator_operands_and_gke_operator_stack_disables_gke_plugin(dev_data):
    from gpu_platform.contract import pool_labels
    from gpu_platform.load import parse_spec
    from helpers.specs import pool

    pool(dev_data, "gpu-train")["aws"] = {"amiType": "BOTTLEROCKET_x86_64_NVIDIA"}
    spec = parse_spec(dev_data)
    assert pool_labels(spec, pool(spec, "gpu-train"))["nvidia.com/gpu.deploy.operands"] == "false"
    assert "nvidia.com/gpu.deploy.operands" not in pool_labels(spec, pool(spec, "gpu-infer"))
