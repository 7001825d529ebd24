"""An EKS cluster and the GPU platform on it, in one program: the platform takes the cluster, its name and the
node role as Outputs, and installs into the cluster through a provider built from the cluster's own outputs."""

import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpu_platform import GpuPlatform, GpuPlatformArgs
from gpu_platform.spec import AwsSpec, NodePool, PlatformSpec, Sharing, Team, Tier

config = pulumi.Config()
subnet_ids = config.require_object("subnetIds")  # private subnets of an existing VPC


def role(name: str, service: str, policies: list[str]) -> tuple[aws.iam.Role, list[pulumi.Resource]]:
    """An IAM role that `service` assumes, with AWS managed policies attached."""
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": service}, "Action": ["sts:AssumeRole", "sts:TagSession"]}
        ],
    }
    made = aws.iam.Role(name, assume_role_policy=json.dumps(trust))
    return made, [
        aws.iam.RolePolicyAttachment(f"{name}-{p}", role=made.name, policy_arn=f"arn:aws:iam::aws:policy/{p}")
        for p in policies
    ]


cluster_role, cluster_policies = role("eks-cluster", "eks.amazonaws.com", ["AmazonEKSClusterPolicy"])
node_role, node_policies = role(
    "gpu-nodes",
    "ec2.amazonaws.com",
    ["AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly"],
)
cluster = aws.eks.Cluster(
    "ml",
    role_arn=cluster_role.arn,
    version="1.33",
    vpc_config={"subnet_ids": subnet_ids},
    access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
    opts=pulumi.ResourceOptions(depends_on=cluster_policies),
)


def kubeconfig_json(endpoint: str, ca_data: str, name: str) -> str:
    """A kubeconfig for the cluster that authenticates with `aws eks get-token`."""
    token = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws"}
    user = {"exec": {**token, "args": ["eks", "get-token", "--cluster-name", name]}}
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "ml", "users": [{"name": "ml", "user": user}]}
    config["clusters"] = [{"name": "ml", "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}]
    config["contexts"] = [{"name": "ml", "context": {"cluster": "ml", "user": "ml"}}]
    return json.dumps(config)


kubeconfig = pulumi.Output.all(cluster.endpoint, cluster.certificate_authority.data, cluster.name).apply(
    lambda v: kubeconfig_json(*v)
)
provider = k8s.Provider("ml", kubeconfig=kubeconfig)

spec = PlatformSpec(
    cloud="aws",
    cluster_name=cluster.name,
    kubernetes_version="1.33",
    label_domain="gpu.example.com",
    aws=AwsSpec(region=aws.config.region or "us-east-1", subnet_ids=subnet_ids, node_role_arn=node_role.arn),
    node_pools=[NodePool(name="h100", instance_type="p5.48xlarge", sharing=Sharing(mode="exclusive"), max_size=4)],
    tiers=[Tier(name="train", pool="h100")],
    teams=[Team(name="research", namespaces=["research"], quotas={"train": 32})],
)
# Every child waits for the cluster, and the node groups for the node role's policies.
platform = GpuPlatform(
    "gpu",
    GpuPlatformArgs(spec=spec, cluster=cluster, k8s_provider=provider),
    pulumi.ResourceOptions(depends_on=node_policies),
)
pulumi.export("kubeconfig", pulumi.Output.secret(kubeconfig))
pulumi.export("tiers", platform.tiers)
pulumi.export("teams", platform.teams)
