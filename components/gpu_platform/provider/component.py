"""`GpuPlatform` as the component package serves it: the spec as typed inputs, then the Python component."""

from typing import Any

import pulumi
from pulumi.errors import InputPropertiesError, InputPropertyErrorDetails
from pulumi.provider.experimental.component import ComponentProvider

from .. import platform
from ..errors import Finding, SpecError
from ..inputs import MAX_DEPTH, MAX_VALUES, check_shape
from ..load import parse_spec
from .convert import to_spec_data
from .outputs import TeamOutput, TierOutput
from .types import GpuPlatformArgs

__all__ = ["GpuPlatform", "SpecComponentProvider"]


class GpuPlatform(platform.GpuPlatform):
    """The tiered GPU platform of one cluster, built from the platform spec (validated first, every error at once)."""

    # The Python component's outputs, the per-team and per-tier maps typed (the SDK passes maps through as
    # they are: their camelCase keys are the schema's); the string after each is its description in the schema.
    node_pool_names: pulumi.Output[list[str]]
    """The spec's pool names, in order."""
    tier_names: pulumi.Output[list[str]]
    """The spec's tier names, in order."""
    teams: pulumi.Output[dict[str, TeamOutput]]
    """Per team: namespaces, LocalQueue and ClusterQueue names, and the tiers it may use."""
    tiers: pulumi.Output[dict[str, TierOutput]]
    """Per tier: the pod label, resource, node selector, tolerations and priority classes a workload carries."""
    node_groups: pulumi.Output[dict[str, str]]
    """Per pool: the cloud node group (EKS) or node pool (GKE) name."""
    prometheus_url: pulumi.Output[str]
    """Query URL of the Prometheus the platform's rules and alerts run in."""
    opencost_url: pulumi.Output[str | None]
    """OpenCost's API URL (absent when OpenCost is off)."""

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # `args` is typed for the schema; `SpecComponentProvider.map_inputs` hands over the validated spec.
        super().__init__(name, args, opts)  # type: ignore[arg-type]


class SpecComponentProvider(ComponentProvider):
    """The SDK's component provider, with the Python API's validation in place of its input mapping.

    The SDK maps inputs along the schema (pulumi 3.272, pulumi/provider/experimental/component.py
    `map_input_properties`): it drops unknown keys, turns an object of the wrong type into `{}` (its defaults),
    reports a null or a wrong-typed object as a missing property, and fails with a traceback on `int()` of a list,
    an infinity or an Output. Here the request's camelCase inputs go to `parse_spec` as they came, and its findings
    go back as the engine's input property errors (`InputPropertiesError`: the CLI prints each property path and
    reason), before anything is registered.
    """

    def map_inputs(self, inputs: dict[str, Any], component_def: Any) -> Any:  # type: ignore[override]
        """The validated spec as the Python component's args; every error at once as `InputPropertiesError`."""
        try:
            try:  # bound the request before walking it (parse_spec checks the same limits again)
                check_shape(inputs, MAX_VALUES, MAX_DEPTH)
            except ValueError as e:
                raise SpecError([Finding("", f"spec too large: {e}")]) from None
            spec = parse_spec(to_spec_data(dict(inputs)))
        except SpecError as e:
            errors: list[InputPropertyErrorDetails] = [
                {"property_path": f.path, "reason": f.message} for f in e.findings
            ]
            raise InputPropertiesError(str(e), errors) from None
        return platform.GpuPlatformArgs(spec=spec)
