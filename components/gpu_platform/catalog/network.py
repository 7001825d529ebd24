"""EC2 network facts of the GPU instance types: EFA interfaces per instance (one per network card).

Source: aws/karpenter-provider-aws tag v1.14.1 (bde00654cd31) `website/content/en/preview/reference/instance-types.md`,
the `vpc.amazonaws.com/efa` capacity of each type, which Karpenter takes from EC2 DescribeInstanceTypes
`NetworkInfo.EfaInfo.MaximumEfaInterfaces` (`pkg/providers/instancetype/types.go`, func `efas`). Read 2026-11-30;
`gpu-platform preflight` compares each pool's count with the account's DescribeInstanceTypes answer.
Types absent here have no EFA (g5.xlarge-4xlarge, g6e.xlarge-4xlarge, g4dn.xlarge).
"""

from __future__ import annotations

__all__ = ["EFA_INTERFACES", "EFA_SOURCE"]

EFA_SOURCE = (
    "aws/karpenter-provider-aws v1.14.1 website/content/en/preview/reference/instance-types.md "
    "(vpc.amazonaws.com/efa = DescribeInstanceTypes EfaInfo.MaximumEfaInterfaces)"
)

EFA_INTERFACES: dict[str, int] = {
    "p4d.24xlarge": 4,
    "p4de.24xlarge": 4,
    "p5.48xlarge": 32,
    "p5e.48xlarge": 32,
    "p5en.48xlarge": 16,
    "g5.8xlarge": 1,
    "g5.12xlarge": 1,
    "g5.16xlarge": 1,
    "g5.24xlarge": 1,
    "g5.48xlarge": 1,
    "g6e.8xlarge": 1,
    "g6e.12xlarge": 1,
    "g6e.16xlarge": 1,
    "g6e.24xlarge": 2,
    "g6e.48xlarge": 4,
    "g4dn.12xlarge": 1,
}
