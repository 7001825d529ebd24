"""Resource options every component gives its children (the only Pulumi helper shared by all domains)."""

from __future__ import annotations

from typing import Any

import pulumi

__all__ = ["child_options", "waits_for"]


def waits_for(opts: pulumi.ResourceOptions | None) -> list[Any]:
    """What a component was told to wait for (`depends_on`), as a list."""
    deps = opts.depends_on if opts else None
    if deps is None:
        return []
    return [deps] if isinstance(deps, pulumi.Resource) else list(deps)


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None, *after: pulumi.Resource | None,
                  **extra: Any) -> pulumi.ResourceOptions:
    """Options for a child of `parent`: parented (so providers and `protect` are inherited), and waiting for
    what the component waits for plus `after`. Pulumi does not pass a component's `depends_on` to its
    children, so without this a platform given `depends_on=[cluster]` would create node groups first."""
    return pulumi.ResourceOptions(parent=parent, depends_on=[*waits_for(opts), *(a for a in after if a)], **extra)
