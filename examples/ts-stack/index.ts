// The dev stack's GPU platform (Pulumi.dev.yaml at the repository root), from TypeScript.
import * as gpuPlatform from "@pulumi/gpu-platform";

const spec: gpuPlatform.GpuPlatformArgs = {
    cloud: "aws",
    clusterName: "ml-dev",
    kubernetesVersion: "1.33",
    labelDomain: "gpu.example.com",
    aws: {
        region: "us-east-1",
        subnetIds: ["subnet-a", "subnet-b"],
        nodeRoleArn: "arn:aws:iam::111122223333:role/gpu-nodes",
    },
    nodePools: [
        { name: "gpu-train", instanceType: "p4de.24xlarge", sharing: { mode: "exclusive" }, minSize: 0, maxSize: 16 },
        {
            name: "gpu-infer",
            instanceType: "p4de.24xlarge",
            sharing: { mode: "mig", migLayout: { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 } },
            minSize: 1,
            maxSize: 8,
        },
        { name: "gpu-dev", instanceType: "p4d.24xlarge", sharing: { mode: "time-slicing", replicas: 4 }, maxSize: 4 },
        { name: "gpu-ci", instanceType: "p4d.24xlarge", sharing: { mode: "mps", replicas: 8 }, maxSize: 2 },
    ],
    tiers: [
        { name: "train", pool: "gpu-train", priority: 100000 },
        { name: "inference", pool: "gpu-infer", resource: "nvidia.com/mig-3g.40gb", priority: 50000 },
        { name: "finetune", pool: "gpu-infer", resource: "nvidia.com/mig-2g.20gb", priority: 40000 },
        { name: "dev", pool: "gpu-dev", priority: 10000 },
        { name: "ci", pool: "gpu-ci", priority: 1000 },
    ],
    teams: [
        { name: "research", namespaces: ["research"], cohort: "ml", quotas: { train: 16, dev: 8 }, borrowingLimit: { train: 8 } },
        { name: "production", namespaces: ["prod-inference"], quotas: { inference: 12, finetune: 4 } },
    ],
    scheduling: { kueue: { enabled: true }, volcano: { enabled: false } },
    monitoring: { prometheus: { install: true }, opencost: { enabled: true } },
    admission: { denyUnclassified: true },
};

const platform = new gpuPlatform.GpuPlatform("gpu-platform", spec);

export const nodePoolNames = platform.nodePoolNames;
export const tiers = platform.tiers;
export const teams = platform.teams;
export const nodeGroups = platform.nodeGroups;
export const prometheusUrl = platform.prometheusUrl;
