"""The CrossGuard policies as plain functions `(args, report_violation)`; the pack is built in `policies/`.

`POLICIES` lists each policy with its name, description, kind (resource or stack) and default enforcement;
`policies/__main__.py` turns them into a `PolicyPack`, and `gpu-platform audit` runs them offline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .budget import check_budget
from .config import (
    Enforcement,
    PolicyConfig,
    PolicyConfigError,
    TierRule,
    config_from_spec,
    config_schema,
)
from .nodepools import check_pool_classified, check_pools_hardened
from .sharing import check_sharing_configs_exist
from .workloads import check_workload_classified

__all__ = [
    "POLICIES",
    "Enforcement",
    "PolicyConfig",
    "PolicyConfigError",
    "PolicyDef",
    "TierRule",
    "config_from_spec",
    "config_schema",
    "enforcement_of",
    "pack_config",
]


@dataclass(frozen=True)
class PolicyDef:
    """One policy: its public name, what it checks, whether it sees one resource or the whole stack."""

    name: str
    description: str
    kind: str  # "resource" | "stack"
    validate: Callable[[Any, Callable[..., None]], None]
    enforcement: Enforcement = Enforcement.MANDATORY


POLICIES: list[PolicyDef] = [
    PolicyDef("gpu-node-pool-classified",
              "GPU node pools carry the pool and device-plugin config labels and the GPU and pool NoSchedule taints.",
              "resource", check_pool_classified),
    PolicyDef("gpu-node-pool-hardened",
              "GPU node pools require IMDSv2, encrypt their root volume and allow no remote SSH.",
              "stack", check_pools_hardened),
    PolicyDef("gpu-sharing-config-exists",
              "The sharing labels of every GPU pool name configs of the stack's GPU Operator release.",
              "stack", check_sharing_configs_exist),
    PolicyDef("gpu-workload-classified",
              "GPU workloads carry a known tier label, request their tier's resource with requests equal to limits "
              "and name a priority class.",
              "resource", check_workload_classified),
    PolicyDef("gpu-budget",
              "The stack's GPU node pools at max size stay within budgetHourly (advisory until a budget is set).",
              "stack", check_budget),
]


def enforcement_of(policy: PolicyDef, cfg: PolicyConfig) -> Enforcement:
    """A policy's level: the config's choice, else its default; the budget is advisory until a budget is set."""
    if policy.name in cfg.enforcement:
        return Enforcement(cfg.enforcement[policy.name])
    if policy.name == "gpu-budget" and cfg.budget_hourly is None:
        return Enforcement.ADVISORY
    return policy.enforcement


def pack_config(cfg: PolicyConfig) -> dict[str, dict[str, Any]]:
    """The per-policy config document a Pulumi policy pack takes (`--policy-pack-config`, `initial_config`)."""
    props = cfg.model_dump(by_alias=True, exclude_none=True, mode="json")
    return {p.name: {"enforcementLevel": enforcement_of(p, cfg).value, **props} for p in POLICIES}
