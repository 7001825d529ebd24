"""Type tokens follow the package convention (`gpu-platform:index:<Class>`); stacks made with the former
per-module tokens keep every URN through aliases."""

from __future__ import annotations

import os

import pytest
import yaml

from conftest import DEV_STACK, GOLDEN
from helpers.stack_urns import match_old_urns, registrations

DEV_URNS = GOLDEN / "dev-stack-urns.txt"


def _dev_stack():
    from gpu_platform import GpuPlatform, GpuPlatformArgs, parse_spec

    spec = parse_spec(yaml.safe_load(DEV_STACK.read_text())["config"]["gpu-platform:platform"])
    # infra/__main__.py: the platform is the stack's one resource, named gpu-platform
    return registrations(lambda: GpuPlatform("gpu-platform", GpuPlatformArgs(spec=spec)), "gpu-platform", "dev")


@pytest.fixture(scope="module")
def dev_registrations():
    return _dev_stack()


def test_every_component_token_is_in_the_index_module(dev_registrations):
    ours = {r.type for r in dev_registrations if r.type.startswith("gpu-platform:")}
    assert ours and all(t.startswith("gpu-platform:index:") for t in ours), sorted(ours)


def test_each_moved_component_aliases_its_former_token(dev_registrations):
    from gpu_platform.options import FORMER_TOKENS

    components = [r for r in dev_registrations if r.type.startswith("gpu-platform:index:")]
    for reg in components:
        cls = reg.type.rsplit(":", 1)[-1]
        alias_types = [a.spec.type for a in reg.aliases if not a.urn]
        if cls == "GpuPlatform":
            assert alias_types == [], "the platform's token did not change"
        else:
            assert alias_types == [FORMER_TOKENS[cls]], (reg.name, alias_types)
            assert all(not a.spec.name and not a.spec.parentUrn and not a.spec.noParent for a in reg.aliases), (
                "only the type changed: same name, same parent"
            )
    assert {r.type.rsplit(":", 1)[-1] for r in components} - {"GpuPlatform"} <= set(FORMER_TOKENS)


def test_dev_stack_keeps_every_urn(dev_registrations):
    committed = DEV_URNS.read_text().split()
    matched = match_old_urns(dev_registrations, set(committed), "dev", "gpu-platform")
    if os.environ.get("GPU_PLATFORM_UPDATE_GOLDEN") == "1":  # a new resource joins the list under its own URN
        DEV_URNS.write_text("".join(f"{u}\n" for u in sorted(v or k for k, v in matched.items())))
        return
    new = sorted(urn for urn, old in matched.items() if old is None)
    assert not new, f"resources the dev stack does not have yet (review, then `make golden`): {new}"
    assert sorted(matched.values()) == sorted(committed), "every resource of the dev stack is matched exactly once"


def test_without_the_aliases_the_moved_components_would_be_replaced(dev_registrations):
    from dataclasses import replace

    from gpu_platform.options import FORMER_TOKENS

    committed = set(DEV_URNS.read_text().split())
    bare = [replace(r, aliases=()) for r in dev_registrations]
    kept = {old for old in match_old_urns(bare, committed, "dev", "gpu-platform").values() if old is not None}
    # every resource whose URN holds a former token (a moved component and all its children) would be replaced
    with_former = {u for u in committed if any(f"{t}$" in u or f"{t}::" in u for t in FORMER_TOKENS.values())}
    assert len(with_former) > 90
    assert kept == committed - with_former
