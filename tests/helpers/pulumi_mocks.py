"""What the Pulumi mocks answer to the provider functions a program calls (shared by conftest's recording mocks and
the URN pinning helper)."""

from __future__ import annotations

from typing import Any

__all__ = ["mock_call"]


def mock_call(token: str, args: dict[str, Any]) -> dict[str, Any]:
    """The result of the function call `token` under mocks: the EKS cluster the EFA security groups join, else {}."""
    if token == "aws:eks/getCluster:getCluster":
        return {
            "name": args.get("name"),
            "vpcConfig": {"vpcId": "vpc-0mock", "clusterSecurityGroupId": "sg-0cluster"},
        }
    return {}
