"""A consumer stack: builds its platform from Python objects, not YAML, and exports what it built."""

import pulumi
from gpu_platform import GpuPlatform, GpuPlatformArgs
from gpu_platform.spec import AwsSpec, NodePool, PlatformSpec, Sharing, Team, Tier


def build_spec(cluster_name: str) -> PlatformSpec:
    """Two pools: H100s for training, MIG-sliced H100s for inference."""
    return PlatformSpec(
        cloud="aws",
        cluster_name=cluster_name,
        label_domain="gpu.ml-team.example",
        aws=AwsSpec(region="us-east-1", subnet_ids=["subnet-0123456789abcdef0"],
                    node_role_arn="arn:aws:iam::111122223333:role/ml-team-gpu"),
        node_pools=[
            NodePool(name="h100-train", instance_type="p5.48xlarge", sharing=Sharing(mode="exclusive"), max_size=4),
            NodePool(name="h100-serve", instance_type="p5.48xlarge",
                     sharing=Sharing(mode="mig", mig_layout={"3g.40gb": 2}), min_size=1, max_size=2),
        ],
        tiers=[
            Tier(name="train", pool="h100-train", priority=100000),
            Tier(name="serve", pool="h100-serve", priority=50000),
        ],
        teams=[Team(name="ml", namespaces=["ml"], quotas={"train": 32, "serve": 32})],
    )


config = pulumi.Config()
platform = GpuPlatform("ml-team", GpuPlatformArgs(spec=build_spec(config.get("clusterName") or "ml-team")))
pulumi.export("nodePools", platform.node_pool_names)
