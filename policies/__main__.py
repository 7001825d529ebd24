"""The gpu-platform CrossGuard policy pack: `pulumi preview --policy-pack policies`.

The policies live in `gpu_platform.policy`; this file only assembles them. Set GPU_PLATFORM_SPEC to a
`Pulumi.<stack>.yaml` or spec file to take the label domain, tiers, prices and budget from it (the pack's
initial config); `--policy-pack-config` overrides any of it.
"""

import os

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    ResourceValidationPolicy,
    Severity,
    StackValidationPolicy,
)

from gpu_platform.policy import (
    POLICIES,
    PolicyConfig,
    PolicyKind,
    config_from_spec,
    config_schema,
    enforcement_of,
    pack_config,
)


def _config() -> PolicyConfig:
    spec_path = os.environ.get("GPU_PLATFORM_SPEC")
    if not spec_path:
        return PolicyConfig()
    from gpu_platform.load import load_spec

    return config_from_spec(load_spec(spec_path))


def _policies(cfg: PolicyConfig) -> list:
    schema = config_schema()
    out = []
    for p in POLICIES:
        common = dict(
            name=p.name,
            description=p.description,
            enforcement_level=EnforcementLevel(enforcement_of(p, cfg).value),
            config_schema=PolicyConfigSchema(properties=schema["properties"], required=schema["required"]),
            severity=Severity(p.severity),
            remediation_steps=p.remediation_steps,
            url=p.url,
        )
        if p.kind == PolicyKind.STACK:
            out.append(StackValidationPolicy(validate=p.validate, **common))
        else:
            out.append(ResourceValidationPolicy(validate=p.validate, remediate=p.remediate, **common))
    return out


def _initial_config(cfg: PolicyConfig) -> dict:
    return {
        name: {**props, "enforcementLevel": EnforcementLevel(props["enforcementLevel"])}
        for name, props in pack_config(cfg).items()
    }


_CFG = _config()
PolicyPack(
    name="gpu-platform",
    policies=_policies(_CFG),
    enforcement_level=EnforcementLevel.MANDATORY,
    initial_config=_initial_config(_CFG),
)
