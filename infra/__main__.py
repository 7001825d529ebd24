"""The stack program: stack config -> PlatformSpec -> GpuPlatform, nothing else."""

import pulumi

from gpu_platform import GpuPlatform, GpuPlatformArgs, SpecError, parse_spec

try:
    spec = parse_spec(
        pulumi.Config("gpu-platform").require_object("platform"), source=f"Pulumi.{pulumi.get_stack()}.yaml"
    )
except SpecError as e:
    raise pulumi.RunError(str(e)) from None

GpuPlatform("gpu-platform", GpuPlatformArgs(spec=spec))
