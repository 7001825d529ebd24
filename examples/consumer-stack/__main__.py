"""A consumer stack: builds its platform from Python objects, then a workload from the platform's outputs.

The platform exports, per team, its namespaces and LocalQueue, and per tier what a workload must carry (the tier
label, resource, node selector, tolerations and priority classes). `training_job` turns those into a Kueue-managed
Job, so the workload lands on its tier's pool and counts against its team's quota without repeating any of it.
"""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpu_platform import GpuPlatform, GpuPlatformArgs
from gpu_platform.spec import AwsSpec, NodePool, PlatformSpec, Sharing, Team, Tier

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


def build_spec(cluster_name: str) -> PlatformSpec:
    """Two pools: H100s for training, MIG-sliced H100s for inference."""
    return PlatformSpec(
        cloud="aws",
        cluster_name=cluster_name,
        label_domain="gpu.ml-team.example",
        aws=AwsSpec(
            region="us-east-1",
            subnet_ids=["subnet-0123456789abcdef0"],
            node_role_arn="arn:aws:iam::111122223333:role/ml-team-gpu",
        ),
        node_pools=[
            NodePool(name="h100-train", instance_type="p5.48xlarge", sharing=Sharing(mode="exclusive"), max_size=4),
            NodePool(
                name="h100-serve",
                instance_type="p5.48xlarge",
                sharing=Sharing(mode="mig", mig_layout={"3g.40gb": 2}),
                min_size=1,
                max_size=2,
            ),
        ],
        tiers=[
            Tier(name="train", pool="h100-train", priority=100000),
            Tier(name="serve", pool="h100-serve", priority=50000),
        ],
        teams=[Team(name="ml", namespaces=["ml"], quotas={"train": 32, "serve": 32})],
    )


def training_job(name: str, team: dict[str, Any], tier: dict[str, Any], units: int = 1) -> dict[str, Any]:
    """A batch/v1 Job of `tier` in the team's first namespace, queued in its LocalQueue (from the outputs)."""
    labels = {**tier["labels"], QUEUE_LABEL: team["localQueue"], PRIORITY_LABEL: tier["workloadPriorityClassName"]}
    container = {
        "name": "main",
        "image": "nvcr.io/nvidia/pytorch:25.08-py3",
        "command": ["python", "train.py"],
        "resources": {"limits": {tier["resource"]: str(units)}},
    }
    pod = {
        "metadata": {"labels": dict(tier["labels"])},
        "spec": {
            "restartPolicy": "Never",
            "containers": [container],
            "nodeSelector": dict(tier["nodeSelector"]),
            "tolerations": list(tier["tolerations"]),
            "priorityClassName": tier["priorityClassName"],
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": team["namespaces"][0], "labels": labels},
        "spec": {"suspend": True, "backoffLimit": 0, "template": pod},
    }


config = pulumi.Config()
platform = GpuPlatform("ml-team", GpuPlatformArgs(spec=build_spec(config.get("clusterName") or "ml-team")))
jobs = {}
for tier_name in ("train", "serve"):
    manifest = pulumi.Output.all(platform.teams, platform.tiers).apply(
        lambda v, t=tier_name: training_job(f"ml-{t}", v[0]["ml"], v[1][t])
    )
    # The Job needs the platform's namespaces, queues and priority classes: create it after them.
    jobs[tier_name] = k8s.batch.v1.Job(
        f"ml-{tier_name}",
        metadata=manifest.apply(lambda m: m["metadata"]),
        spec=manifest.apply(lambda m: m["spec"]),
        opts=pulumi.ResourceOptions(depends_on=[platform]),
    )
pulumi.export("nodePools", platform.node_pool_names)
pulumi.export("jobs", {t: j.id for t, j in jobs.items()})
