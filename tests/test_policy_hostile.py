"""The policy pack against evasions: every case of tests/fixtures/hostile/policy.yaml, run as `audit` runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpu_platform.policy import PolicyConfig
from gpu_platform.policy.resources import StackResource
from gpu_platform.policy.runner import run_policies

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "hostile" / "policy.yaml").read_text())


def _config(case: dict) -> PolicyConfig:
    """The pack config of a case: its spec pools and tiers, when it gives them."""
    return PolicyConfig.model_validate({"pools": case.get("pools") or {}, "tiers": case.get("tiers") or {}})


def _resources(case: dict) -> list[StackResource]:
    out = []
    for r in case["resources"]:
        urn = f"urn:pulumi:dev::p::{r['type']}::{r['name']}"
        out.append(StackResource(r["type"], urn, r["name"], r["props"]))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_pack_catches_the_evasion(case):
    found = run_policies(_resources(case), _config(case))
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


@pytest.fixture(scope="module")
def pack():
    from gpu_platform.policy.analyzer import PackProcess

    with PackProcess(Path(__file__).resolve().parents[1] / "policies", timeout=60) as p:
        yield p


def test_the_real_pack_over_grpc_catches_every_evasion(pack):
    """The same corpus through `policies/` as the engine drives it (Analyze per resource, AnalyzeStack), where
    properties arrive as protobuf structs: numbers as floats, proxies for mappings."""
    from gpu_platform.policy import pack_config

    missed = []
    for case in CASES:
        pack.configure(pack_config(_config(case)))
        resources = _resources(case)
        diags = [d for r in resources for d in pack.analyze(r).diagnostics]
        diags += list(pack.analyze_stack(resources).diagnostics)
        by_policy: dict[str, list[str]] = {}
        for d in diags:
            by_policy.setdefault(d.policyName, []).append(d.message)
        for policy, fragment in (case.get("expect") or {}).items():
            if not any(fragment in m for m in by_policy.get(policy, [])):
                missed.append((case["name"], policy, by_policy.get(policy)))
        missed += [(case["name"], p, "reported") for p in case.get("passes") or [] if p in by_policy]
    assert not missed, missed
