"""Pure render of the Kueue and Volcano Helm release documents (chart, version, namespace, values)."""

from __future__ import annotations

from typing import Any

import yaml

from ..artifacts import deep_merge, helm_release
from ..spec import PlatformSpec
from .kueue import namespace_selector
from .volcano import scheduler_config

__all__ = ["KUEUE_FRAMEWORKS", "kueue_manager_config", "render_kueue_release", "render_volcano_release"]

# Kueue 0.19.2's integration names (charts/kueue/values.yaml managerConfig, enabled and commented entries);
# the manager refuses to start on any other name.
KUEUE_FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
# Kueue refuses a workload requesting a resource its ClusterQueue does not cover ("resource cpu unavailable in
# ClusterQueue"). Quotas cover GPUs only, so every other resource a GPU pod commonly requests is excluded
# from Kueue's accounting (`resources.excludeResourcePrefixes`; EFA and RDMA NICs sit beside training GPUs).
NON_QUOTA_RESOURCE_PREFIXES = ("cpu", "memory", "ephemeral-storage", "hugepages-", "vpc.amazonaws.com/", "rdma/")


# The chart's default webhooks plus `/podgroups/mutate`, which moves a PodGroup left in the `default` queue to
# the queue its namespace names (volcano-sh/volcano v1.15.1 installer/helm/chart/volcano/values.yaml
# `custom.enabled_admissions`; pkg/webhooks/admission/podgroups/mutate/mutate_podgroup.go).
VOLCANO_ADMISSIONS = (
    "/jobs/mutate,/jobs/validate,/podgroups/mutate,/podgroups/validate,/queues/mutate,"
    "/queues/validate,/hypernodes/validate,/cronjobs/validate"
)


def kueue_manager_config(spec: PlatformSpec) -> dict[str, Any]:
    """Kueue's `Configuration` (config.kueue.x-k8s.io/v1beta2): the chart's defaults, the spec's integrations,
    Kueue limited to the teams' namespaces, quota on GPUs only, and fair sharing when asked for."""
    kueue = spec.scheduling.kueue
    config: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "clientConnection": {"qps": 300, "burst": 500},
    }
    namespaces = [ns for t in spec.teams for ns in t.namespaces]
    if namespaces:
        # Only team namespaces are managed; the `pod` integration then never gates system pods.
        config["managedJobsNamespaceSelector"] = namespace_selector(namespaces)
        # A workload created in a team namespace without a queue name is suspended (pods: gated) at creation
        # and waits for one, instead of running outside quota when the label comes late or not at all
        # (kubernetes-sigs/kueue v0.19.2 pkg/controller/jobframework/utils.go WorkloadShouldBeSuspended;
        # pkg/controller/jobs/pod/pod_webhook.go Default). Admission gives every one of them the team's queue.
        config["manageJobsWithoutQueueName"] = kueue.manage_jobs_without_queue_name
    config["integrations"] = {"frameworks": list(kueue.integrations)}
    config["resources"] = {"excludeResourcePrefixes": list(NON_QUOTA_RESOURCE_PREFIXES)}
    if kueue.fair_sharing:
        config["fairSharing"] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    return config


def render_kueue_release(spec: PlatformSpec) -> dict[str, Any]:
    """Kueue's Helm release from its OCI chart (no separate repository), pinned image, manager config.

    `enablePrometheus` is on: the platform's rules and dashboards read `kueue_pending_workloads`, and the
    platform already relies on the Prometheus Operator CRDs (GpuPlatform installs Kueue after them).
    """
    kueue = spec.scheduling.kueue
    values: dict[str, Any] = {
        # The API server calls mutating webhook configurations in name order, so Kueue's
        # (`kueue-mutating-webhook-configuration`) runs before Kyverno's (`kyverno-resource-mutating-webhook-cfg`,
        # kyverno v1.17.2 pkg/config/config.go), which adds the queue label. IfNeeded makes the API server call
        # Kueue's webhook again after that change, so it suspends the job and copies the label to pod templates
        # (kubernetes k8s.io/apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go reinvocation;
        # kueue v0.19.2 charts/kueue/values.yaml `mutatingWebhook.reinvocationPolicy`).
        "mutatingWebhook": {"reinvocationPolicy": "IfNeeded"},
        "enablePrometheus": True,
        "metrics": {"prometheusNamespace": spec.monitoring.prometheus.namespace},
        "controllerManager": {"manager": {"image": {"tag": f"v{kueue.version}", "pullPolicy": "IfNotPresent"}}},
        "managerConfig": {
            "controllerManagerConfigYaml": yaml.safe_dump(kueue_manager_config(spec), sort_keys=False),
        },
    }
    values = deep_merge(values, kueue.values_overrides, "scheduling.kueue.valuesOverrides")
    return helm_release("kueue", kueue.chart, "", kueue.version, kueue.namespace, values)


def render_volcano_release(spec: PlatformSpec) -> dict[str, Any]:
    """Volcano's Helm release: pinned images and a scheduler configuration with the gang plugin on."""
    volcano = spec.scheduling.volcano
    values: dict[str, Any] = {
        "basic": {"image_tag_version": f"v{volcano.version}", "image_pull_policy": "IfNotPresent"},
        "custom": {"scheduler_config_override": scheduler_config(spec), "enabled_admissions": VOLCANO_ADMISSIONS},
    }
    values = deep_merge(values, volcano.values_overrides, "scheduling.volcano.valuesOverrides")
    return helm_release("volcano", "volcano", volcano.repository, volcano.version, volcano.namespace, values)
