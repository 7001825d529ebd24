"""`gpu-platform preflight FILE`: check an AWS account is ready for the spec's node pools (boto3, read-only).

Checks: the EKS cluster exists and runs the spec's Kubernetes version, the node role exists, every pool's
subnets exist, each pool's instance type is offered in every availability zone of its subnets, each EFA pool's
interface count (from the catalog) matches EC2's `EfaInfo.MaximumEfaInterfaces`, and each managed node group
with a cluster placement group has its subnets in one zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import boto3
from botocore.exceptions import ClientError
from rich.markup import escape
from rich.table import Table

from .catalog import EFA_SOURCE
from .nodepools.efa import efa_count, uses_efa, uses_placement_group
from .nodepools.eks import pool_subnets
from .spec import AwsSpec, CapacityType, PlatformSpec, Provisioner

__all__ = ["FAIL", "OK", "WARN", "preflight_table", "run_preflight"]


class CheckStatus(StrEnum):
    """The outcome of one check, as the table shows it: any FAIL makes `preflight` exit 1."""

    OK = "ok"
    FAIL = "FAIL"
    WARN = "warn"


OK, FAIL, WARN = CheckStatus.OK, CheckStatus.FAIL, CheckStatus.WARN


@dataclass(frozen=True)
class Check:
    """One preflight result."""

    check: str
    target: str
    status: CheckStatus
    detail: str


def _code(e: ClientError) -> str:
    return str(e.response.get("Error", {}).get("Code", ""))


def _aws(spec: PlatformSpec) -> AwsSpec:
    if spec.aws is None:
        raise ValueError("aws: missing; preflight checks an AWS spec (cloud: aws)")
    return spec.aws


def check_cluster(spec: PlatformSpec, eks: Any) -> list[Check]:
    """The cluster exists, is ACTIVE, and runs the spec's Kubernetes version."""
    name = spec.cluster_name
    try:
        cluster = eks.describe_cluster(name=name)["cluster"]
    except ClientError as e:
        if _code(e) == "ResourceNotFoundException":
            return [Check("cluster", name, FAIL, f"EKS cluster {name!r} not found in {_aws(spec).region}")]
        raise
    out = [Check("cluster", name, OK if cluster.get("status") == "ACTIVE" else WARN, f"status {cluster.get('status')}")]
    version = cluster.get("version")
    ok = version == spec.kubernetes_version
    detail = f"cluster runs {version}" + ("" if ok else f", spec says kubernetesVersion {spec.kubernetes_version!r}")
    out.append(Check("kubernetes version", name, OK if ok else FAIL, detail))
    return out


def check_node_role(spec: PlatformSpec, iam: Any) -> list[Check]:
    """The node role named by aws.nodeRoleArn exists."""
    arn = _aws(spec).node_role_arn
    if not arn:
        return [Check("node role", "-", FAIL, "aws.nodeRoleArn is not set")]
    role = arn.rsplit("/", 1)[-1]
    try:
        iam.get_role(RoleName=role)
    except ClientError as e:
        if _code(e) == "NoSuchEntity":
            return [Check("node role", arn, FAIL, f"IAM role {role!r} not found")]
        raise
    return [Check("node role", arn, OK, "exists")]


def subnet_zones(spec: PlatformSpec, ec2: Any) -> tuple[dict[str, str], list[Check]]:
    """Availability zone of every subnet the pools use, and a check per subnet."""
    ids = sorted({s for p in spec.node_pools for s in pool_subnets(spec, p)})
    zones: dict[str, str] = {}
    checks = []
    for sid in ids:  # one call per subnet, so a missing one is named
        try:
            subnet = ec2.describe_subnets(SubnetIds=[sid])["Subnets"][0]
        except ClientError as e:
            if _code(e) in ("InvalidSubnetID.NotFound", "InvalidSubnetID.Malformed"):
                checks.append(Check("subnet", sid, FAIL, f"not found ({_code(e)})"))
                continue
            raise
        zones[sid] = subnet["AvailabilityZone"]
        checks.append(Check("subnet", sid, OK, f"{subnet['AvailabilityZone']}, {subnet.get('VpcId', '?')}"))
    return zones, checks


def offered_zones(ec2: Any, instance_type: str) -> set[str]:
    """Availability zones where EC2 offers `instance_type`."""
    pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [instance_type]}]
    )
    return {o["Location"] for page in pages for o in page["InstanceTypeOfferings"]}


def check_offerings(spec: PlatformSpec, ec2: Any, zones: dict[str, str]) -> list[Check]:
    """Each pool's instance type is offered in the zone of each of its (existing) subnets."""
    out: list[Check] = []
    cache: dict[str, set[str]] = {}
    for pool in spec.node_pools:
        itype = pool.instance_type
        offered = cache.setdefault(itype, offered_zones(ec2, itype))
        pool_zones = sorted({zones[s] for s in pool_subnets(spec, pool) if s in zones})
        missing = [z for z in pool_zones if z not in offered]
        target = f"{pool.name} ({itype})"
        if not pool_zones:
            out.append(Check("instance offering", target, FAIL, "no existing subnet to place nodes in"))
        elif missing:
            hint = (
                "; Capacity Blocks are zonal, check the block's zone"
                if pool.aws.capacity_type == CapacityType.CAPACITY_BLOCK
                else ""
            )
            out.append(
                Check(
                    "instance offering",
                    target,
                    FAIL,
                    f"not offered in {', '.join(missing)} (offered in "
                    f"{', '.join(sorted(offered)) or 'no zone'}); move the pool's subnets{hint}",
                )
            )
        else:
            out.append(Check("instance offering", target, OK, f"offered in {', '.join(pool_zones)}"))
    return out


def ec2_efa_interfaces(ec2: Any, instance_type: str) -> int:
    """EC2's maximum EFA interfaces of `instance_type` (0 when it has no EFA)."""
    info = ec2.describe_instance_types(InstanceTypes=[instance_type])["InstanceTypes"][0].get("NetworkInfo", {})
    return int((info.get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0)) if info.get("EfaSupported") else 0


def check_efa(spec: PlatformSpec, ec2: Any) -> list[Check]:
    """Each EFA pool's interface count (catalog) equals EC2's EfaInfo.MaximumEfaInterfaces for its type."""
    out: list[Check] = []
    cache: dict[str, int] = {}
    for pool in spec.node_pools:
        if not uses_efa(spec, pool):
            continue
        itype, ours = pool.instance_type, efa_count(spec, pool)
        theirs = cache.setdefault(itype, ec2_efa_interfaces(ec2, itype))
        target = f"{pool.name} ({itype})"
        if theirs == ours:
            out.append(Check("efa interfaces", target, OK, f"{ours} (EC2 EfaInfo agrees)"))
        else:
            out.append(
                Check(
                    "efa interfaces",
                    target,
                    FAIL,
                    f"the catalog renders {ours} EFA interfaces ({EFA_SOURCE}) "
                    f"but EC2 reports MaximumEfaInterfaces {theirs}; set aws.efa: false or update the "
                    "catalog",
                )
            )
    return out


def check_placement_zones(spec: PlatformSpec, zones: dict[str, str]) -> list[Check]:
    """A managed node group with a cluster placement group keeps its subnets in one availability zone."""
    out = []
    for pool in spec.node_pools:
        if not uses_placement_group(spec, pool) or pool.aws.provisioner != Provisioner.MANAGED_NODE_GROUP:
            continue
        pool_zones = sorted({zones[s] for s in pool_subnets(spec, pool) if s in zones})
        ok = len(pool_zones) <= 1
        detail = (
            f"subnets in {', '.join(pool_zones) or 'no zone'}"
            if ok
            else f"subnets span {', '.join(pool_zones)}; a cluster placement group lives in one zone: set the "
            "pool's aws.subnetIds to one zone's subnets"
        )
        out.append(Check("placement zone", pool.name, OK if ok else WARN, detail))
    return out


def run_preflight(spec: PlatformSpec, session: boto3.session.Session | None = None) -> list[Check]:
    """Every preflight check for an AWS spec, in order."""
    region = _aws(spec).region
    session = session or boto3.session.Session(region_name=region)
    eks, iam, ec2 = (session.client(s, region_name=region) for s in ("eks", "iam", "ec2"))
    checks = check_cluster(spec, eks) + check_node_role(spec, iam)
    zones, subnet_checks = subnet_zones(spec, ec2)
    return (
        checks
        + subnet_checks
        + check_offerings(spec, ec2, zones)
        + check_efa(spec, ec2)
        + check_placement_zones(spec, zones)
    )


def preflight_table(spec: PlatformSpec, checks: list[Check]) -> Table:
    """The checks as a rich table."""
    table = Table(title=escape(f"preflight: {spec.cluster_name} in {_aws(spec).region}"), title_justify="left")
    for col in ("check", "target", "status", "detail"):
        table.add_column(col)
    style = {OK: "green", FAIL: "red", WARN: "yellow"}
    for c in checks:
        table.add_row(escape(c.check), escape(c.target), f"[{style[c.status]}]{c.status}[/]", escape(c.detail))
    return table
