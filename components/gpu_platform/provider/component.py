"""`GpuPlatform` as the component package serves it: the spec as typed inputs, then the Python component."""

import pulumi

from .. import platform
from ..errors import SpecError
from ..load import parse_spec
from .convert import to_spec_data
from .outputs import TeamOutput, TierOutput
from .types import GpuPlatformArgs

__all__ = ["GpuPlatform"]


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
        try:
            spec = parse_spec(to_spec_data(dict(args)))
        except SpecError as e:
            # The SDK appends the stack of what the component raised: keep it to this frame.
            raise SpecError(e.findings) from None
        super().__init__(name, platform.GpuPlatformArgs(spec=spec), opts)
