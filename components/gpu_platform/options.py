"""Resource options every component gives its children (the only Pulumi helper shared by all domains)."""

from __future__ import annotations

from typing import Any

import pulumi

__all__ = ["child_options", "waits_for"]


def waits_for(opts: pulumi.ResourceOptions | None, *after: pulumi.Resource | None) -> Any:
    """What a component was told to wait for (`depends_on`) plus `after`, as a `depends_on` value.

    `depends_on` may be a resource, a list, or an Output of a list (`Input[Sequence[Input[Resource]]]`); Pulumi's
    own `ResourceOptions.merge` joins any of them with `after` (a list, or an Output of one when `depends_on` is).
    """
    extra = pulumi.ResourceOptions(depends_on=[a for a in after if a is not None])
    return pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=opts.depends_on if opts else None),
                                        extra).depends_on


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None, *after: pulumi.Resource | None,
                  **extra: Any) -> pulumi.ResourceOptions:
    """Options for a child of `parent`: parented (so providers and `protect` are inherited), and waiting for
    what the component waits for plus `after`. Pulumi does not pass a component's `depends_on` to its
    children, so without this a platform given `depends_on=[cluster]` would create node groups first."""
    return pulumi.ResourceOptions(parent=parent, depends_on=waits_for(opts, *after), **extra)
