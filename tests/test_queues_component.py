"""GpuQueues under Pulumi mocks: type token, pinned child names, parents, inputs, CRD ordering."""

from __future__ import annotations

from gpu_platform.load import parse_spec
from gpu_platform.queues.render import render_queues

TOKEN = "gpu-platform:index:GpuQueues"


def _run(pulumi_mocks, spec):
    from gpu_platform.queues import GpuQueues, GpuQueuesArgs

    return pulumi_mocks.run(lambda: GpuQueues("q", GpuQueuesArgs(spec=spec)))


def test_component_children_names_types_and_parents(pulumi_mocks, dev_spec):
    rec = _run(pulumi_mocks, dev_spec)
    comp = rec.named("q")
    assert comp.type == TOKEN and comp.custom is False
    children = [r for r in rec.resources if r.name != "q"]
    assert all(r.parent == comp.urn for r in children)
    assert all(r.name.startswith("q-") for r in children)
    names = {r.name: r.type for r in children}
    assert names["q-kueue"] == "kubernetes:helm.sh/v3:Release"
    assert names["q-namespace-research"] == "kubernetes:core/v1:Namespace"
    assert names["q-priorityclass-gpu-train"] == "kubernetes:scheduling.k8s.io/v1:PriorityClass"
    assert names["q-workloadpriorityclass-gpu-ci"] == "kubernetes:kueue.x-k8s.io/v1beta2:WorkloadPriorityClass"
    assert names["q-resourceflavor-gpu-infer"] == "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
    assert names["q-clusterqueue-research"] == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
    assert names["q-localqueue-prod-inference-production"] == "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
    assert "q-volcano" not in names
    q = render_queues(dev_spec)
    rendered = len(q.namespaces) + len(q.priority_classes) + len(q.kueue) + 1
    assert len(children) == rendered


def test_component_passes_rendered_objects_unchanged(pulumi_mocks, dev_spec):
    rec = _run(pulumi_mocks, dev_spec)
    q = render_queues(dev_spec)
    cq = next(d for d in q.kueue if d["kind"] == "ClusterQueue" and d["metadata"]["name"] == "research")
    assert rec.named("q-clusterqueue-research").inputs["spec"] == cq["spec"]
    pc = rec.named("q-priorityclass-gpu-ci").inputs
    assert (pc["value"], pc["preemptionPolicy"], pc["globalDefault"]) == (1000, "PreemptLowerPriority", False)
    wpc = rec.named("q-workloadpriorityclass-gpu-train").inputs
    assert wpc["value"] == 100000 and wpc["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    rel = rec.named("q-kueue").inputs
    assert rel["chart"] == "oci://registry.k8s.io/kueue/charts/kueue" and rel["version"] == "0.19.2"
    assert rel["namespace"] == "kueue-system" and "repositoryOpts" not in rel


def test_custom_resources_wait_for_their_release(pulumi_mocks, dev_data):
    from gpu_platform.queues import GpuQueues, GpuQueuesArgs

    dev_data["scheduling"]["volcano"] = {"enabled": True}
    spec = parse_spec(dev_data)
    rec = pulumi_mocks.run(lambda: GpuQueues("q", GpuQueuesArgs(spec=spec)))
    assert rec.named("q-volcano").inputs["repositoryOpts"]["repo"] == "https://volcano-sh.github.io/helm-charts"
    assert rec.named("q-queue-research").type == "kubernetes:scheduling.volcano.sh/v1beta1:Queue"
    assert rec.depends_on("q-clusterqueue-research", "q-kueue")
    assert rec.depends_on("q-localqueue-research-research", "q-namespace-research")
    assert rec.depends_on("q-queue-research", "q-volcano")
    assert not rec.depends_on("q-queue-research", "q-kueue")
    assert rec.named("q-priorityclass-gpu-train").dependencies == []


def test_platform_creates_queues_component(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    q = rec.named("plat-queues")
    assert q.type == TOKEN and q.parent_name == "plat"
    assert rec.named("plat-queues-clusterqueue-production").parent_name == "plat-queues"


def test_kueue_disabled_creates_no_kueue_objects(pulumi_mocks, dev_data):
    dev_data["scheduling"]["kueue"] = {"enabled": False}
    rec = _run(pulumi_mocks, parse_spec(dev_data))
    assert not [r for r in rec.resources if "kueue" in r.type or r.name == "q-kueue"]
    assert rec.of_type("kubernetes:scheduling.k8s.io/v1:PriorityClass")


def test_existing_namespaces_get_the_platform_labels_patched_not_owned(pulumi_mocks, dev_data):
    """Admission reads the team and tier grants from namespace labels: without createNamespaces they are
    server-side applied onto the namespaces (a NamespacePatch owns only those fields)."""
    dev_data["scheduling"]["createNamespaces"] = False
    rec = _run(pulumi_mocks, parse_spec(dev_data))
    assert not rec.of_type("kubernetes:core/v1:Namespace")
    patches = {r.name: r for r in rec.of_type("kubernetes:core/v1:NamespacePatch")}
    assert set(patches) == {"q-patch-namespace-research", "q-patch-namespace-prod-inference"}
    research = patches["q-patch-namespace-research"]
    assert research.inputs["metadata"]["labels"]["tier.gpu.example.com/train"] == "true"
    assert research.parent_name == "q"


def test_team_namespaces_are_retained_on_delete_unless_the_spec_opts_out(pulumi_mocks, dev_data):
    """Removing a team from the spec must not delete every workload in its namespaces."""
    import copy

    from gpu_platform.queues import GpuQueues, GpuQueuesArgs

    kept = _run(pulumi_mocks, parse_spec(dev_data)).of_type("kubernetes:core/v1:Namespace")
    assert kept and all(r.retain_on_delete for r in kept)
    data = copy.deepcopy(dev_data)
    data["scheduling"]["retainNamespaces"] = False
    rec = pulumi_mocks.run(lambda: GpuQueues("q2", GpuQueuesArgs(spec=parse_spec(data))))
    assert not any(r.retain_on_delete for r in rec.of_type("kubernetes:core/v1:Namespace") if r.name.startswith("q2"))
