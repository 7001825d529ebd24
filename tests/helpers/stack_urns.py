"""The resources a stack program registers under Pulumi mocks, with their URNs and aliases (for URN pinning)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from helpers.pulumi_mocks import mock_call


@dataclass(frozen=True)
class Registration:
    """One RegisterResource call: what the engine would key the resource by."""

    type: str
    name: str
    parent: str  # the parent's URN ('' for a resource of the stack)
    urn: str
    aliases: tuple[Any, ...]  # pulumirpc Alias messages (spec or urn)


def registrations(program: Callable[[], Any], project: str, stack: str) -> list[Registration]:
    """Run `program()` under mocks for `project`/`stack`; every registration but the stack's, in order."""
    import pulumi
    from pulumi.runtime import mocks as m

    found: list[Registration] = []

    class _Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs):
            return f"{args.name}-id", dict(args.inputs)

        def call(self, args: pulumi.runtime.MockCallArgs):
            return mock_call(args.token, args.args)

    class _Monitor(m.MockMonitor):
        def RegisterResource(self, request):
            resp = super().RegisterResource(request)
            if request.type != "pulumi:pulumi:Stack":
                found.append(Registration(request.type, request.name, request.parent, resp.urn, tuple(request.aliases)))
            return resp

    mocks = _Mocks()
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False, monitor=_Monitor(mocks))

    @pulumi.runtime.test
    def _run():
        return program()

    _run()
    return found


def make_urn(stack: str, project: str, parent: str, type_: str, name: str) -> str:
    # As pulumi.runtime.mocks.MockMonitor.make_urn builds it: the parent's own type before `$` (the engine's
    # resource.NewURN prefixes the parent's whole qualified type; the matching below is the same either way).
    if parent:
        type_ = parent.split("::")[2].split("$")[-1] + "$" + type_
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


def _collapse(reg: Registration, alias: Any, stack: str, project: str, parent: str) -> str:
    """An alias spec as a URN, relative to the resource's parent unless the alias names another (or none)."""
    if alias.urn:
        return alias.urn
    spec = alias.spec
    parent = "" if spec.noParent else (spec.parentUrn or parent)
    return make_urn(spec.stack or stack, spec.project or project, parent, spec.type or reg.type, spec.name or reg.name)


def match_old_urns(regs: list[Registration], olds: set[str], stack: str, project: str) -> dict[str, str | None]:
    """Per registration (by its URN), the URN in `olds` the engine would take it for, or None (a new resource).

    The engine's rule (pulumi/pulumi v3.259.0, pkg/resource/deploy/step_generator.go, generateAliases and
    getOldResource): the resource's own URN first, then its aliases collapsed against its parent, then each of those
    under the old URN its parent was matched through (inheritedChildAlias, which also swaps a name prefix taken from
    the parent's old name).
    """
    through: dict[str, str] = {}  # new URN -> the old URN it was matched through, when that was an alias
    found: dict[str, str | None] = {}
    for reg in regs:
        own = [_collapse(reg, a, stack, project, reg.parent) for a in reg.aliases]
        candidates = [reg.urn, *own]
        if reg.parent in through:
            old_parent = through[reg.parent]
            old_parent_name = reg.parent.rsplit("::", 1)[-1]
            for urn in [reg.urn, *own]:
                type_, name = urn.split("::")[2].split("$")[-1], urn.rsplit("::", 1)[-1]
                if name.startswith(old_parent_name):
                    name = old_parent.rsplit("::", 1)[-1] + name[len(old_parent_name) :]
                candidates.append(make_urn(stack, project, old_parent, type_, name))
        hit = next((c for c in candidates if c in olds), None)
        found[reg.urn] = hit
        if hit and hit != reg.urn:
            through[reg.urn] = hit
    return found
