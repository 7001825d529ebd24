"""The policy pack's configuration: one pydantic model, the pack's config schema derived from it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from ..contract import SYSTEM_NAMESPACE
from ..errors import GpuPlatformError
from ..names import DnsLabel, DnsSubdomain, LabelKey, shortened
from ..spec import (
    MAX_COUNT,
    GpuOperatorSpec,
    KueueSpec,
    Number,
    PlatformSpec,
    PositiveFloat,
    PrometheusSpec,
    VolcanoSpec,
)

if TYPE_CHECKING:  # the engine's argument types, for annotations only: parsing imports no policy SDK
    from pulumi_policy import ResourceValidationArgs, StackValidationArgs

__all__ = [
    "Enforcement",
    "PolicyConfig",
    "PolicyConfigError",
    "TierRule",
    "config_from_spec",
    "config_of",
    "config_schema",
    "bounded",
    "error_lines",
    "parse_config",
]

# Without a spec: kube-system and the default namespaces of what the platform installs (the spec's defaults).
DEFAULT_EXEMPT_NAMESPACES = [
    SYSTEM_NAMESPACE,
    *(str(m.model_fields["namespace"].default) for m in (GpuOperatorSpec, KueueSpec, VolcanoSpec, PrometheusSpec)),
]


class PolicyConfigError(GpuPlatformError):
    """The pack's configuration does not parse: one line per problem (`lines`, every one), shown as the first
    `_SHOWN` and a count of the rest."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        super().__init__(bounded(self.lines))


def bounded(lines: list[str], prefix: str = "") -> str:
    """`lines`, each after `prefix`: the first `_SHOWN`, then a count of the rest."""
    shown = [f"{prefix}{line}" for line in lines[:_SHOWN]]
    if len(lines) > _SHOWN:
        shown.append(f"{prefix}... and {len(lines) - _SHOWN} more errors in the policy config")
    return "\n".join(shown)


class Enforcement(StrEnum):
    """Pulumi enforcement levels a policy can be set to."""

    ADVISORY = "advisory"
    MANDATORY = "mandatory"
    DISABLED = "disabled"
    REMEDIATE = "remediate"


# A ConfigMap key (a device-plugin config's name) or an instance / machine type: what Kubernetes allows in a
# ConfigMap key, which every AWS instance type and GCP machine type fits.
_ConfigKey = Annotated[str, StringConstraints(min_length=1, max_length=253, pattern=r"^[-._a-zA-Z0-9]+$")]


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class TierRule(_Model):
    """What pods of one tier may request."""

    resources: list[LabelKey] = Field(min_length=1, description="Extended resources the tier's pods may request.")
    pool: DnsLabel | None = Field(default=None, description="The pool the tier routes to (for messages).")
    priority_class: DnsSubdomain | None = Field(
        default=None, description="PriorityClass the tier's pods must name (unset: any non-empty name)."
    )


class PolicyConfig(_Model):
    """Configuration shared by every policy of the pack (each policy receives the same properties)."""

    label_domain: DnsSubdomain = Field(
        default="gpu.example.com", description="Prefix of the platform's label and taint keys (set it to yours)."
    )
    tiers: dict[DnsLabel, TierRule] = Field(
        default_factory=dict, description="Tier name -> allowed resources. Empty: only the tier label is required."
    )
    pools: dict[DnsLabel, _ConfigKey] = Field(
        default_factory=dict,
        description="Pool name -> its device-plugin config key, from the spec. Empty: any "
        "pool name is accepted; set: a GPU pool's label must name one of these pools and its config.",
    )
    exempt_namespaces: list[DnsLabel] = Field(
        default_factory=lambda: list(DEFAULT_EXEMPT_NAMESPACES),
        description="Namespaces whose workloads the workload policy skips.",
    )
    budget_hourly: Number | None = Field(
        default=None,
        ge=0,
        le=MAX_COUNT,
        description="Max $/hour of the stack's GPU node pools at max size (unset: advisory).",
    )
    # 0 to 1,000,000 $/hour, as in the spec: a negative price would cancel other pools' cost in the budget's sum.
    prices: dict[_ConfigKey, PositiveFloat] = Field(
        default_factory=dict, description="Instance / machine type -> $/hour, over the built-in catalog prices."
    )
    enforcement: dict[str, Enforcement] = Field(
        default_factory=dict,
        description="Policy name -> advisory | mandatory | disabled, or remediate for a policy that remediates "
        "(audit and pack defaults).",
    )

    @field_validator("enforcement")
    @classmethod
    def _known_policies(cls, value: dict[str, Enforcement]) -> dict[str, Enforcement]:
        from . import level_problem  # the pack's policies import this module

        problems = [p for name, level in value.items() if (p := level_problem(name, level.value))]
        if problems:
            more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
            raise ValueError("; ".join(problems[:5]) + more)
        return value

    @property
    def pool_key(self) -> str:
        """Node label and taint key naming a node's pool."""
        return f"{self.label_domain}/gpu-pool"

    @property
    def tier_key(self) -> str:
        """Pod label key naming a pod's tier."""
        return f"{self.label_domain}/gpu-tier"


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline_refs(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


def config_schema() -> dict[str, Any]:
    """JSON schema of a policy's config (`properties`, `required`), with every `$ref` inlined."""
    schema = PolicyConfig.model_json_schema(by_alias=True)
    inlined = _inline_refs(schema, schema.get("$defs", {}))
    return {"properties": inlined["properties"], "required": inlined.get("required", [])}


_SHOWN = 20  # errors listed, at most; the rest are counted


def error_lines(error: ValidationError) -> list[str]:
    """Every error of a policy config, one line each: the field, what is allowed, and the value given
    (shortened)."""
    return [f"policy config {_line(err)}" for err in error.errors()]


def _line(err: Any) -> str:
    """One error: the field, pydantic's message on one line, and the value given (our own checks name it, and
    their message goes without pydantic's "Value error, " before it)."""
    where = ".".join(_key(p) for p in err["loc"]) or "(top level)"
    if err["type"] == "value_error":
        raised = (err.get("ctx") or {}).get("error")
        return f"{where}: {' '.join(str(raised if raised is not None else err['msg']).split())}"
    return f"{where}: {' '.join(err['msg'].split())} (got {shortened(err.get('input'))})"


def _key(part: str | int) -> str:
    """A step of an error's path: as given, or quoted (and shortened) when empty, long or not printable (a key
    of the user's config)."""
    text = str(part)
    return text if 0 < len(text) <= 60 and text.isprintable() else shortened(text)


@lru_cache(maxsize=64)
def _parse(text: str) -> PolicyConfig:
    try:
        return PolicyConfig.model_validate(json.loads(text))
    except ValidationError as e:
        raise PolicyConfigError(*error_lines(e)) from None


_DEPTH = 32  # levels of nesting a config may have (the deepest property, a tier's resources, is at 4)


def _plain(value: Any, depth: int = 0) -> Any:
    if depth > _DEPTH:
        raise PolicyConfigError(f"policy config is nested deeper than {_DEPTH} levels; allowed: the pack's properties")
    if hasattr(value, "items"):
        keys = [k for k in value if not isinstance(k, str)]
        if keys:  # JSON and the engine's config have text keys; str() would merge 1 with "1"
            raise PolicyConfigError(f"policy config key {shortened(keys[0])} is not a string; allowed: text keys")
        return {k: _plain(value[k], depth + 1) for k in value}
    if isinstance(value, list | tuple) or (
        hasattr(value, "__len__") and hasattr(value, "__getitem__") and not isinstance(value, str | bytes)
    ):
        return [_plain(v, depth + 1) for v in value]
    return value


def parse_config(mapping: Mapping[str, Any]) -> PolicyConfig:
    """The PolicyConfig of a plain mapping of the pack's config properties (`enforcementLevel`, the engine's, is
    checked and left out).

    Raises PolicyConfigError naming every property that does not parse, with its value and what is expected.
    """
    raw = _plain(mapping)
    if not isinstance(raw, dict):
        raise PolicyConfigError(
            f"policy config is {type(mapping).__name__}; allowed: a mapping of the pack's properties"
        )
    problems = []
    if "enforcementLevel" in raw and (level := raw.pop("enforcementLevel")) not in [e.value for e in Enforcement]:
        allowed = ", ".join(e.value for e in Enforcement)
        problems.append(f"policy config enforcementLevel: {shortened(level)} is not one of {allowed}")
    try:
        text = json.dumps(raw, allow_nan=True)
    except (TypeError, ValueError) as e:  # a set, bytes, a date, an integer of thousands of digits...
        raise PolicyConfigError(*problems, f"policy config holds a value JSON cannot carry: {e}") from None
    try:
        cfg = _parse(text)
    except PolicyConfigError as e:
        raise PolicyConfigError(*problems, *e.lines) from None
    if problems:
        raise PolicyConfigError(*problems)
    return cfg


_RECENT: dict[tuple[tuple[str, int], ...], tuple[list[Any], PolicyConfig]] = {}


def config_of(args: ResourceValidationArgs | StackValidationArgs) -> PolicyConfig:
    """The PolicyConfig of a policy call (`args.get_config()`; the engine strips `enforcementLevel`)."""
    given = args.get_config() or {}
    # The analyzer hands each call a shallow copy of the same config: its values are the same objects, so
    # their identities are a cheap cache key (the cache holds them, so an id cannot be reused meanwhile).
    key = tuple((k, id(v)) for k, v in given.items())
    hit = _RECENT.get(key)
    if hit is not None:
        return hit[1]
    cfg = parse_config(given)
    if len(_RECENT) >= 32:
        _RECENT.pop(next(iter(_RECENT)))
    _RECENT[key] = (list(given.values()), cfg)
    return cfg


def config_from_spec(spec: PlatformSpec) -> PolicyConfig:
    """The pack config a platform spec implies: label domain, tiers and their resources, budget, prices."""
    from ..admission.render import exempt_namespaces
    from ..contract import device_plugin_config_key
    from ..queues.priorities import priority_class_name

    tiers = {
        t.name: TierRule(resources=[spec.resource_of(t)], pool=t.pool, priority_class=priority_class_name(t))
        for t in spec.tiers
    }
    prices = {}
    for pool in spec.node_pools:
        it = spec.hardware.instance(pool.instance_type)
        if it is not None:
            prices[pool.instance_type] = round(it.hourly_usd, 6)
    enforcement = dict(getattr(spec.policy, "enforcement", {}) or {})
    return PolicyConfig(
        label_domain=spec.label_domain,
        tiers=tiers,
        pools={p.name: device_plugin_config_key(p) for p in spec.node_pools},
        exempt_namespaces=exempt_namespaces(spec),
        budget_hourly=spec.policy.budget_hourly,
        prices=prices,
        enforcement=enforcement,
    )
