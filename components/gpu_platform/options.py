"""Resource options every component gives its children (the only Pulumi helper shared by all domains)."""

from __future__ import annotations

from typing import Any

import pulumi

from .errors import SpecError
from .spec import PlatformSpec
from .validation import ensure_component_args

__all__ = [
    "FORMER_TOKENS",
    "PACKAGE",
    "PlatformSpecError",
    "check_component_args",
    "child_options",
    "registration",
    "waits_for",
]

PACKAGE = "gpu-platform"

# Type tokens the components had before they moved to the package's one `index` module (what a component package
# publishes to other languages). Each stays an alias, so a stack created with it keeps its URNs.
FORMER_TOKENS = {
    "EksGpuNodePool": "gpu-platform:nodepools:EksGpuNodePool",
    "EksNodeHealth": "gpu-platform:nodepools:EksNodeHealth",
    "KarpenterGpuNodePool": "gpu-platform:nodepools:KarpenterGpuNodePool",
    "GkeGpuNodePool": "gpu-platform:nodepools:GkeGpuNodePool",
    "GpuNodeAddons": "gpu-platform:nodepools:GpuNodeAddons",
    "GpuOperator": "gpu-platform:gpu_operator:GpuOperator",
    "GpuQueues": "gpu-platform:queues:GpuQueues",
    "GpuObservability": "gpu-platform:observability:GpuObservability",
    "GpuAdmission": "gpu-platform:admission:GpuAdmission",
    "GpuAutoscaling": "gpu-platform:autoscaling:GpuAutoscaling",
}


class PlatformSpecError(SpecError, pulumi.RunError):
    """The spec given to GpuPlatform (or to one of its components) is invalid: every error, shown by
    `pulumi preview` / `up` without a traceback.

    A SpecError (catch it as one) that is also a `pulumi.RunError`, whose message Pulumi's Python host logs alone
    where any other exception is "Program failed with an unhandled exception" and a stack trace
    (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec, commit 061aba8).
    """


def check_component_args(spec: PlatformSpec, pool: str | None = None) -> None:
    """A component's args check (`validation.ensure_component_args`), raising PlatformSpecError as GpuPlatform does."""
    try:
        ensure_component_args(spec, pool)
    except SpecError as e:
        raise PlatformSpecError(e.findings, e.source) from None


def waits_for(opts: pulumi.ResourceOptions | None, *after: pulumi.Resource | None) -> Any:
    """What a component was told to wait for (`depends_on`) plus `after`, as a `depends_on` value.

    `depends_on` may be a resource, a list, or an Output of a list (`Input[Sequence[Input[Resource]]]`); Pulumi's
    own `ResourceOptions.merge` joins any of them with `after` (a list, or an Output of one when `depends_on` is).
    """
    extra = pulumi.ResourceOptions(depends_on=[a for a in after if a is not None])
    return pulumi.ResourceOptions.merge(
        pulumi.ResourceOptions(depends_on=opts.depends_on if opts else None), extra
    ).depends_on


def child_options(
    parent: pulumi.Resource, opts: pulumi.ResourceOptions | None, *after: pulumi.Resource | None, **extra: Any
) -> pulumi.ResourceOptions:
    """Options for a child of `parent`: parented (so providers and `protect` are inherited), and waiting for
    what the component waits for plus `after`. Pulumi does not pass a component's `depends_on` to its
    children, so without this a platform given `depends_on=[cluster]` would create node groups first."""
    return pulumi.ResourceOptions(parent=parent, depends_on=waits_for(opts, *after), **extra)


def type_token(component: str) -> str:
    """The type token of a component class: `gpu-platform:index:<Class>`."""
    return f"{PACKAGE}:index:{component}"


def registration(component: str, opts: pulumi.ResourceOptions | None) -> tuple[str, pulumi.ResourceOptions]:
    """The type token and options a component registers with: `opts` plus an alias to its former token, if any.

    The alias names only the type, so the engine matches the resource with the same name under the same parent
    (or under the parent's own aliases): a child of a renamed component keeps its URN too.
    """
    former = FORMER_TOKENS.get(component)
    aliases = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=former)]) if former else None
    return type_token(component), pulumi.ResourceOptions.merge(opts, aliases)
