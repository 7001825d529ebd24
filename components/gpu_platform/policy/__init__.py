"""The CrossGuard policies as plain functions `(args, report_violation)`; the pack is built in `policies/`.

`POLICIES` lists each policy with its name, description, kind (resource or stack) and default enforcement;
`policies/__main__.py` turns them into a `PolicyPack`, and `gpu-platform audit` runs them offline.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..contract import DEVICE_PLUGIN_CONFIG_LABEL, GPU_TAINT
from ..names import shortened
from .budget import check_budget
from .config import (
    Enforcement,
    PolicyConfig,
    PolicyConfigError,
    TierRule,
    config_from_spec,
    config_schema,
    parse_config,
)
from .nodepools import (
    NODE_POOL_TYPES,
    check_pool_classified,
    check_pools_detectable,
    check_pools_hardened,
    check_pools_resolved,
)
from .props import EKS_LAUNCH_TEMPLATE
from .remediate import check_imdsv2, remediate_imdsv2
from .sharing import check_sharing_configs_exist
from .workloads import check_workload_classified, is_workload_type

__all__ = [
    "POLICIES",
    "Enforcement",
    "PolicyConfig",
    "PolicyConfigError",
    "PolicyDef",
    "PolicyKind",
    "PolicySeverity",
    "TierRule",
    "config_from_spec",
    "config_schema",
    "enforcement_of",
    "level_problem",
    "pack_config",
    "parse_config",
]


# Where each policy's documentation lives (docs/guardrails.md, "The policies"); a published pack can point it at
# the project's hosted docs with GPU_PLATFORM_DOCS_URL.
DOCS_URL = os.environ.get("GPU_PLATFORM_DOCS_URL", "docs/guardrails.md#the-policies-mandatory-by-default")


class PolicyKind(StrEnum):
    """What a policy sees: one resource at a time or the whole stack (pulumi-policy's `ResourceValidationPolicy`
    and `StackValidationPolicy`)."""

    RESOURCE = "resource"
    STACK = "stack"


class PolicySeverity(StrEnum):
    """How serious a violation is: the values of `pulumi_policy.Severity`."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


@dataclass(frozen=True)
class PolicyDef:
    """One policy: its public name, what it checks, whether it sees one resource or the whole stack, and what
    Pulumi shows with a violation (severity, remediation steps, documentation URL)."""

    name: str
    description: str
    kind: PolicyKind
    validate: Callable[[Any, Callable[..., None]], None]
    enforcement: Enforcement = Enforcement.MANDATORY
    severity: PolicySeverity = PolicySeverity.HIGH
    remediation_steps: str = ""
    remediate: Callable[[Any], dict[str, Any] | None] | None = None
    # Resource policies: the types the policy may report on (it returns at once for any other); `audit` skips the
    # call for other types, the engine still makes it.
    applies_to: Callable[[str], bool] | None = None

    @property
    def url(self) -> str:
        """The policy's documentation."""
        return f"{DOCS_URL}"


POLICIES: list[PolicyDef] = [
    PolicyDef(
        "gpu-node-pool-classified",
        "GPU node pools carry the pool and device-plugin config labels and the GPU and pool NoSchedule taints.",
        PolicyKind.RESOURCE,
        check_pool_classified,
        severity=PolicySeverity.HIGH,
        applies_to=NODE_POOL_TYPES.__contains__,
        remediation_steps="Create the pool with gpu-platform (a spec nodePools entry routed to by a tier), or "
        f"add the labels <labelDomain>/gpu-pool and {DEVICE_PLUGIN_CONFIG_LABEL} and the "
        f"taints <labelDomain>/gpu-pool=<pool>:NoSchedule and {GPU_TAINT['key']}:NoSchedule.",
    ),
    PolicyDef(
        "gpu-node-pool-resolved",
        "Node pools whose GPUs come from a launch template in the stack (EKS node groups, self-managed auto "
        "scaling groups) are classified like every GPU pool.",
        PolicyKind.STACK,
        check_pools_resolved,
        severity=PolicySeverity.HIGH,
        remediation_steps=f"Add the labels <labelDomain>/gpu-pool and {DEVICE_PLUGIN_CONFIG_LABEL} and both "
        "NoSchedule taints to the node group (or to the kubelet flags in the launch template "
        "of a self-managed group), or create the pool with gpu-platform.",
    ),
    PolicyDef(
        "gpu-node-pool-detectable",
        "Node pools whose GPU capacity the pack cannot determine (custom AMI, launch template outside the "
        "stack) are reported for review instead of passing.",
        PolicyKind.STACK,
        check_pools_detectable,
        Enforcement.ADVISORY,
        severity=PolicySeverity.MEDIUM,
        remediation_steps="Set the pool's instance types on the node group, or keep its launch template in "
        "the same stack, so the GPU policies can check it.",
    ),
    PolicyDef(
        "gpu-node-pool-hardened",
        "GPU node pools require IMDSv2, encrypt their root volume and allow no remote SSH.",
        PolicyKind.STACK,
        check_pools_hardened,
        severity=PolicySeverity.CRITICAL,
        remediation_steps="Attach a launch template with metadataOptions.httpTokens=required and an encrypted "
        "root volume, and remove remoteAccess from the node group.",
    ),
    PolicyDef(
        "gpu-sharing-config-exists",
        "The sharing labels of every GPU pool name configs of the stack's GPU Operator release.",
        PolicyKind.STACK,
        check_sharing_configs_exist,
        severity=PolicySeverity.HIGH,
        remediation_steps="Add the pool to the spec so its device-plugin and mig-parted configs are rendered, "
        f"or point the pool's {DEVICE_PLUGIN_CONFIG_LABEL} label at an existing entry.",
    ),
    PolicyDef(
        "gpu-workload-classified",
        "GPU workloads carry a known tier label, request their tier's resource with requests equal to limits "
        "and name a priority class.",
        PolicyKind.RESOURCE,
        check_workload_classified,
        severity=PolicySeverity.MEDIUM,
        applies_to=is_workload_type,
        remediation_steps="Label the pod template <labelDomain>/gpu-tier=<tier>, request the tier's resource "
        "with requests equal to limits, and set priorityClassName gpu-<tier>; the platform's "
        "stack output `tiers` lists each tier's values.",
    ),
    PolicyDef(
        "gpu-budget",
        "The stack's GPU node pools at max size stay within budgetHourly (advisory until a budget is set).",
        PolicyKind.STACK,
        check_budget,
        severity=PolicySeverity.MEDIUM,
        remediation_steps="Lower maxSize, move tiers to shared pools (gpu-platform plan), or raise budgetHourly.",
    ),
    PolicyDef(
        "gpu-launch-template-imdsv2",
        "GPU launch templates require IMDSv2; at the `remediate` level the pack sets it (advisory by default).",
        PolicyKind.RESOURCE,
        check_imdsv2,
        enforcement=Enforcement.ADVISORY,
        severity=PolicySeverity.HIGH,
        remediation_steps="Set metadataOptions.httpTokens=required, or set this policy's enforcementLevel to "
        "remediate so `pulumi up` applies it.",
        remediate=remediate_imdsv2,
        applies_to=EKS_LAUNCH_TEMPLATE.__eq__,
    ),
]


def enforcement_of(policy: PolicyDef, cfg: PolicyConfig) -> Enforcement:
    """A policy's level: the config's choice, else its default; the budget is advisory until a budget is set."""
    if policy.name in cfg.enforcement:
        return Enforcement(cfg.enforcement[policy.name])
    if policy.name == "gpu-budget" and cfg.budget_hourly is None:
        return Enforcement.ADVISORY
    return policy.enforcement


def level_problem(name: str, level: Any) -> str | None:
    """Why `level` cannot be the enforcement level of the policy `name`, or None: the name is not one of the
    pack's, or the level is not one of the engine's (`remediate` only for a policy that remediates)."""
    policy = next((p for p in POLICIES if p.name == name), None)
    if policy is None:
        return f"{shortened(name)} is not a policy of the pack; allowed: {', '.join(sorted(p.name for p in POLICIES))}"
    levels = [e.value for e in Enforcement if e is not Enforcement.REMEDIATE or policy.remediate is not None]
    if level not in levels:
        return f"{shortened(level)} is not an enforcement level of {name}; allowed: {', '.join(levels)}"
    return None


def pack_config(cfg: PolicyConfig) -> dict[str, dict[str, Any]]:
    """The per-policy config document a Pulumi policy pack takes (`--policy-pack-config`, `initial_config`)."""
    props = cfg.model_dump(by_alias=True, exclude_none=True, mode="json")
    return {p.name: {"enforcementLevel": enforcement_of(p, cfg).value, **props} for p in POLICIES}
