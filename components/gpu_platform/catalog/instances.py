"""GPU instance types (AWS) and machine types (GCP) with GPU model, count and on-demand $/hour.

Prices are on-demand Linux list prices, with the source of each row in `SOURCES`. Prices move: a spec can
override any price (`catalog.priceOverrides`, `catalog.discountPercent`) or describe a type this table lacks
(`catalog.instanceTypes`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["InstanceType", "INSTANCE_TYPES", "SHAPES", "SOURCES", "Shape"]

SOURCES = {
    "karpenter-aws": "aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go, "
    "us-east-1, generated 2026-07-20 (commit 6fc13b5236fd)",
    "karpenter-aws-2026-02": "aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go, "
    "us-east-1, generated 2026-02-09 (commit 265ee0ba5b8e)",
    "cyclenerd-gcp": "Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml @ 0166a59e, us-central1, "
    "generated 2025-03-06 (GPU included in the machine type price)",
    "cyclenerd-gcp-2024-11": "Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml @ 082120d2, us-central1, "
    "generated 2024-11-07 (GPU and local SSD included in the machine type price)",
    "derived": "derived from a sibling size of the same family (per-GPU price times GPU count)",
    "proxy-p5en": "no us-east-1 on-demand list price (p5e is sold mostly as capacity blocks); the p5en.48xlarge "
    "price (8x H200, karpenter-aws 2026-07-20) is used as a proxy: override it in the spec",
    "spec": "described in the spec",
}


@dataclass(frozen=True)
class InstanceType:
    """One instance / machine type with its GPUs and price."""

    name: str
    cloud: str
    gpu_model: str
    gpu_count: int
    hourly_usd: float
    source: str

    @property
    def hourly_per_gpu(self) -> float:
        """On-demand price of one GPU of this type, including its share of CPU and memory."""
        return self.hourly_usd / self.gpu_count


_ROWS = (
    # AWS us-east-1
    ("p4d.24xlarge", "aws", "A100-SXM4-40GB", 8, 21.957642, "karpenter-aws"),
    ("p4de.24xlarge", "aws", "A100-SXM4-80GB", 8, 27.447050, "karpenter-aws"),
    ("p5.48xlarge", "aws", "H100-80GB", 8, 55.04, "karpenter-aws"),
    ("p5e.48xlarge", "aws", "H200-141GB", 8, 63.296, "proxy-p5en"),
    ("p5en.48xlarge", "aws", "H200-141GB", 8, 63.296, "karpenter-aws"),
    ("g5.xlarge", "aws", "A10G", 1, 1.006, "karpenter-aws-2026-02"),
    ("g5.2xlarge", "aws", "A10G", 1, 1.212, "karpenter-aws-2026-02"),
    ("g5.4xlarge", "aws", "A10G", 1, 1.624, "karpenter-aws-2026-02"),
    ("g5.8xlarge", "aws", "A10G", 1, 2.448, "karpenter-aws-2026-02"),
    ("g5.12xlarge", "aws", "A10G", 4, 5.672, "karpenter-aws-2026-02"),
    ("g5.16xlarge", "aws", "A10G", 1, 4.096, "karpenter-aws-2026-02"),
    ("g5.24xlarge", "aws", "A10G", 4, 8.144, "karpenter-aws-2026-02"),
    ("g5.48xlarge", "aws", "A10G", 8, 16.288, "karpenter-aws-2026-02"),
    ("g6e.xlarge", "aws", "L40S", 1, 1.861, "karpenter-aws-2026-02"),
    ("g6e.2xlarge", "aws", "L40S", 1, 2.24208, "karpenter-aws-2026-02"),
    ("g6e.4xlarge", "aws", "L40S", 1, 3.00424, "karpenter-aws-2026-02"),
    ("g6e.8xlarge", "aws", "L40S", 1, 4.52856, "karpenter-aws-2026-02"),
    ("g6e.12xlarge", "aws", "L40S", 4, 10.49264, "karpenter-aws-2026-02"),
    ("g6e.16xlarge", "aws", "L40S", 1, 7.57719, "karpenter-aws-2026-02"),
    ("g6e.24xlarge", "aws", "L40S", 4, 15.06559, "karpenter-aws-2026-02"),
    ("g6e.48xlarge", "aws", "L40S", 8, 30.13118, "karpenter-aws-2026-02"),
    ("g4dn.xlarge", "aws", "T4", 1, 0.526, "karpenter-aws-2026-02"),
    ("g4dn.12xlarge", "aws", "T4", 4, 3.912, "karpenter-aws-2026-02"),
    # GCP us-central1
    ("a2-highgpu-1g", "gcp", "A100-SXM4-40GB", 1, 3.673385, "cyclenerd-gcp"),
    ("a2-highgpu-2g", "gcp", "A100-SXM4-40GB", 2, 7.34677, "cyclenerd-gcp"),
    ("a2-highgpu-4g", "gcp", "A100-SXM4-40GB", 4, 14.69354, "cyclenerd-gcp-2024-11"),
    ("a2-highgpu-8g", "gcp", "A100-SXM4-40GB", 8, 29.38708, "cyclenerd-gcp"),
    ("a2-megagpu-16g", "gcp", "A100-SXM4-40GB", 16, 55.739504, "cyclenerd-gcp"),
    ("a2-ultragpu-1g", "gcp", "A100-SXM4-80GB", 1, 5.06879789, "cyclenerd-gcp-2024-11"),
    ("a2-ultragpu-2g", "gcp", "A100-SXM4-80GB", 2, 10.13759578, "cyclenerd-gcp-2024-11"),
    ("a2-ultragpu-4g", "gcp", "A100-SXM4-80GB", 4, 20.27519156, "cyclenerd-gcp-2024-11"),
    ("a2-ultragpu-8g", "gcp", "A100-SXM4-80GB", 8, 40.5503831, "cyclenerd-gcp"),
    ("a3-highgpu-8g", "gcp", "H100-80GB", 8, 88.49, "cyclenerd-gcp"),
    ("g2-standard-4", "gcp", "L4", 1, 0.706832255, "cyclenerd-gcp-2024-11"),
    ("g2-standard-8", "gcp", "L4", 1, 0.853624271, "cyclenerd-gcp-2024-11"),
    ("g2-standard-12", "gcp", "L4", 1, 1.000416287, "cyclenerd-gcp-2024-11"),
    ("g2-standard-16", "gcp", "L4", 1, 1.147208303, "cyclenerd-gcp-2024-11"),
    ("g2-standard-24", "gcp", "L4", 2, 2.000832574, "cyclenerd-gcp-2024-11"),
    ("g2-standard-32", "gcp", "L4", 1, 1.734376367, "cyclenerd-gcp-2024-11"),
    ("g2-standard-48", "gcp", "L4", 4, 4.001665148, "cyclenerd-gcp-2024-11"),
    ("g2-standard-96", "gcp", "L4", 8, 8.003330296, "cyclenerd-gcp-2024-11"),
)

INSTANCE_TYPES: dict[str, InstanceType] = {row[0]: InstanceType(*row) for row in _ROWS}


@dataclass(frozen=True)
class Shape:
    """vCPUs and memory of one instance / machine type (what OpenCost prices CPU and RAM on)."""

    vcpus: int
    memory_gib: float
    source: str


SHAPE_SOURCES = {
    "karpenter-aws-types": "aws/karpenter-provider-aws website/content/en/preview/reference/instance-types.md @ "
    "1d927085 (karpenter.k8s.aws/instance-cpu, instance-memory in MiB / 1024)",
    "gcp-docs": "cloud.google.com/compute/docs/accelerator-optimized-machines and general-purpose machine "
    "tables (vCPUs, memory in GB as listed), read 2026-11; a2-highgpu-*, a2-ultragpu-8g, a3-highgpu-8g also "
    "in shared facts.md section 7",
}

_SHAPE_ROWS = (
    ("p4d.24xlarge", 96, 1152, "karpenter-aws-types"),
    ("p4de.24xlarge", 96, 1152, "karpenter-aws-types"),
    ("p5.48xlarge", 192, 2048, "karpenter-aws-types"),
    ("p5e.48xlarge", 192, 2048, "karpenter-aws-types"),
    ("p5en.48xlarge", 192, 2048, "karpenter-aws-types"),
    ("g5.xlarge", 4, 16, "karpenter-aws-types"),
    ("g5.2xlarge", 8, 32, "karpenter-aws-types"),
    ("g5.4xlarge", 16, 64, "karpenter-aws-types"),
    ("g5.8xlarge", 32, 128, "karpenter-aws-types"),
    ("g5.12xlarge", 48, 192, "karpenter-aws-types"),
    ("g5.16xlarge", 64, 256, "karpenter-aws-types"),
    ("g5.24xlarge", 96, 384, "karpenter-aws-types"),
    ("g5.48xlarge", 192, 768, "karpenter-aws-types"),
    ("g6e.xlarge", 4, 32, "karpenter-aws-types"),
    ("g6e.2xlarge", 8, 64, "karpenter-aws-types"),
    ("g6e.4xlarge", 16, 128, "karpenter-aws-types"),
    ("g6e.8xlarge", 32, 256, "karpenter-aws-types"),
    ("g6e.12xlarge", 48, 384, "karpenter-aws-types"),
    ("g6e.16xlarge", 64, 512, "karpenter-aws-types"),
    ("g6e.24xlarge", 96, 768, "karpenter-aws-types"),
    ("g6e.48xlarge", 192, 1536, "karpenter-aws-types"),
    ("g4dn.xlarge", 4, 16, "karpenter-aws-types"),
    ("g4dn.12xlarge", 48, 192, "karpenter-aws-types"),
    ("a2-highgpu-1g", 12, 85, "gcp-docs"),
    ("a2-highgpu-2g", 24, 170, "gcp-docs"),
    ("a2-highgpu-4g", 48, 340, "gcp-docs"),
    ("a2-highgpu-8g", 96, 680, "gcp-docs"),
    ("a2-megagpu-16g", 96, 1360, "gcp-docs"),
    ("a2-ultragpu-1g", 12, 170, "gcp-docs"),
    ("a2-ultragpu-2g", 24, 340, "gcp-docs"),
    ("a2-ultragpu-4g", 48, 680, "gcp-docs"),
    ("a2-ultragpu-8g", 96, 1360, "gcp-docs"),
    ("a3-highgpu-8g", 208, 1872, "gcp-docs"),
    ("g2-standard-4", 4, 16, "gcp-docs"),
    ("g2-standard-8", 8, 32, "gcp-docs"),
    ("g2-standard-12", 12, 48, "gcp-docs"),
    ("g2-standard-16", 16, 64, "gcp-docs"),
    ("g2-standard-24", 24, 96, "gcp-docs"),
    ("g2-standard-32", 32, 128, "gcp-docs"),
    ("g2-standard-48", 48, 192, "gcp-docs"),
    ("g2-standard-96", 96, 384, "gcp-docs"),
)

SHAPES: dict[str, Shape] = {name: Shape(cpu, float(mem), src) for name, cpu, mem, src in _SHAPE_ROWS}
