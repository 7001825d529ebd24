"""The policy pack against evasions: every case of tests/fixtures/hostile/policy.yaml, run as `audit` runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from gpu_platform.policy import PolicyConfig
from gpu_platform.policy.resources import StackResource
from gpu_platform.policy.runner import run_policies

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "hostile" / "policy.yaml").read_text())


def _resources(case: dict) -> list[StackResource]:
    out = []
    for r in case["resources"]:
        urn = f"urn:pulumi:dev::p::{r['type']}::{r['name']}"
        out.append(StackResource(r["type"], urn, r["name"], r["props"]))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_pack_catches_the_evasion(case):
    cfg = PolicyConfig(pools=case.get("pools") or {})
    found = run_policies(_resources(case), cfg)
    by_policy: dict[str, list[str]] = {}
    for v in found:
        by_policy.setdefault(v.policy, []).append(v.message)
    for policy, fragment in (case.get("expect") or {}).items():
        assert any(fragment in m for m in by_policy.get(policy, [])), (policy, by_policy)
    for policy in case.get("passes") or []:
        assert policy not in by_policy, by_policy[policy]


def test_cannot_tell_is_advisory_not_a_pass():
    [case] = [c for c in CASES if c["name"] == "eks-node-group-launch-template-outside-the-stack"]
    [v] = [v for v in run_policies(_resources(case), PolicyConfig()) if v.policy == "gpu-node-pool-detectable"]
    assert v.enforcement == "advisory"
