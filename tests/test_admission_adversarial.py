"""Admission under attack: every evasion of the deny, evaluated with celpy against the rendered policy.

Each case is a fixture in tests/fixtures/hostile/admission.yaml: a pod, the namespace it is created in, whether
the routing mutation ran (it fails open, so the deny must hold without it) and the expected verdict.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from gpu_platform.admission.render import exempt_namespaces, render_admission
from gpu_platform.load import parse_spec
from test_admission import mutate, validate

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "hostile" / "admission.yaml").read_text())


def _pod(case: dict) -> dict:
    spec = copy.deepcopy(case.get("spec") or {})
    spec.setdefault("containers", [{"name": "main", "image": "python:3.11",
                                    **({"resources": case["resources"]} if "resources" in case else {})}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": case.get("labels") or {}},
            "spec": spec}


@pytest.fixture(scope="module")
def docs(request):
    from conftest import ROOT
    from gpu_platform.load import read_spec_data

    return render_admission(parse_spec(read_spec_data(ROOT / "Pulumi.dev.yaml")))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hostile_pod(docs, case):
    pod = _pod(case)
    if case.get("mutation", True):
        pod = mutate(docs, pod, case["namespace"])
    verdict = validate(docs, pod, case["namespace"])
    if case["expect"] == "admitted":
        assert verdict is None, verdict
    else:
        assert verdict is not None, "admitted"
        assert case["expect"] in verdict, verdict


def test_exempt_namespaces_follow_what_is_installed(dev_data):
    dev_data["scheduling"] = {"kueue": {"enabled": True}, "volcano": {"enabled": False}}
    names = exempt_namespaces(parse_spec(dev_data))
    assert "volcano-system" not in names and {"kube-system", "gpu-operator", "kueue-system", "monitoring"} <= set(names)
    dev_data["scheduling"]["volcano"]["enabled"] = True
    dev_data["monitoring"] = {"prometheus": {"install": False}}
    names = exempt_namespaces(parse_spec(dev_data))
    assert "volcano-system" in names and "monitoring" not in names


def test_exempt_namespaces_are_configurable(dev_data):
    dev_data["admission"] = {"exemptNamespaces": ["kube-system"], "additionalExemptNamespaces": ["falco"],
                             "mutation": "mutating-admission-policy"}
    dev_data["kubernetesVersion"] = "1.36"
    assert exempt_namespaces(parse_spec(dev_data)) == ["kube-system", "falco"]
