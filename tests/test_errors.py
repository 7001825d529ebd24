"""Errors and findings carry their parts as fields: a path, a message, a severity from a closed set."""

from __future__ import annotations

import json
import pickle

import pytest

from gpu_platform.admission.checks import check_admission
from gpu_platform.admission.render import engine_notes
from gpu_platform.artifacts import Artifact, ArtifactKind
from gpu_platform.errors import Finding, RenderError, Severity
from gpu_platform.gpu_operator import render_gpu_operator
from gpu_platform.gpu_operator.checks import check_gpu_operator
from gpu_platform.gpu_operator.mig import render_mig_parted_config
from gpu_platform.nodepools.checks import check_node_pools
from gpu_platform.observability.rules import rule_groups
from gpu_platform.policy import POLICIES, PolicyKind, PolicySeverity
from gpu_platform.policy.props import PoolKind, gpu_pool
from gpu_platform.spec import PlatformSpec
from gpu_platform.synth import render_all
from helpers.specs import pool, pool_path


def test_severity_is_a_closed_set_that_reads_as_its_value():
    f = Finding("nodePools[0].name", "bad", "warning")
    assert f.severity is Severity.WARNING and f.severity == "warning"
    assert json.dumps({"severity": f.severity}) == '{"severity": "warning"}'
    assert Finding("p", "m").severity is Severity.ERROR
    with pytest.raises(ValueError, match=r"Finding.severity: 'fatal'; allowed: error, warning, info"):
        Finding("p", "m", "fatal")  # type: ignore[arg-type]


def test_render_error_text_is_path_and_message():
    e = RenderError("clusterAutoscaler.imageTag", "no default image")
    assert (e.path, e.message, str(e)) == ("clusterAutoscaler.imageTag", "no default image", f"{e.path}: {e.message}")
    assert e.findings == (Finding("clusterAutoscaler.imageTag", "no default image"),)
    assert str(RenderError("", "two artifacts would both be written to helm/a.yaml")).startswith("two artifacts")
    copy = pickle.loads(pickle.dumps(e))
    assert (copy.path, copy.message, str(copy)) == (e.path, e.message, str(e))


def test_render_error_of_several_findings_keeps_each(dev_data):
    dev_data["monitoring"]["thresholds"] = {"strandedFor": "2 hours", "pendingFor": "soon"}
    with pytest.raises(RenderError) as exc:
        rule_groups(PlatformSpec.model_validate(dev_data))  # a spec that skipped validation
    paths = [f.path for f in exc.value.findings]
    assert sorted(paths) == ["monitoring.thresholds.pendingFor", "monitoring.thresholds.strandedFor"]
    assert exc.value.path == paths[0] and exc.value.message == exc.value.findings[0].message
    assert str(exc.value) == "; ".join(str(f) for f in exc.value.findings)


@pytest.mark.parametrize(
    ("index", "sharing", "path"),
    [
        (2, {"mode": "time-slicing", "replicas": 1}, "nodePools[2]"),
        (3, {"mode": "mps", "replicas": 60}, "nodePools[3]"),
        (1, {"mode": "mig", "migLayout": {"3g.40gb": 1}, "replicas": 1}, "nodePools[1]"),
    ],
)
def test_device_plugin_render_error_names_the_pool_by_index(dev_data, index, sharing, path):
    dev_data["nodePools"][index]["sharing"] = sharing
    with pytest.raises(RenderError) as exc:
        render_gpu_operator(PlatformSpec.model_validate(dev_data))
    assert exc.value.path == path
    assert dev_data["nodePools"][index]["name"] not in exc.value.path
    assert str(exc.value) == f"{path}: {exc.value.message}"


def test_mig_render_errors_name_the_field_like_validation(dev_data):
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 2, "1g.10gb": 1}
    with pytest.raises(RenderError) as exc:
        render_mig_parted_config(PlatformSpec.model_validate(dev_data))
    assert exc.value.path == f"{pool_path(dev_data, 'gpu-infer')}.sharing.migLayout"
    assert exc.value.message.startswith("{'1g.10gb': 1, '3g.40gb': 2} is not a valid placement")
    pool(dev_data, "gpu-infer")["instanceType"] = "p5.48xlarge"  # H100: MIG-capable, fits
    pool(dev_data, "gpu-infer")["sharing"] = {"mode": "mig", "migLayout": {"3g.40gb": 2}}
    pool(dev_data, "gpu-dev")["instanceType"] = "g5.xlarge"  # A10G: no MIG
    pool(dev_data, "gpu-dev")["sharing"] = {"mode": "mig", "migLayout": {"1g.10gb": 1}}
    with pytest.raises(RenderError) as exc:
        render_mig_parted_config(PlatformSpec.model_validate(dev_data))
    assert exc.value.path == f"{pool_path(dev_data, 'gpu-dev')}.sharing.mode"


def test_checks_take_the_path_from_the_error_not_its_text(dev_data):
    data = {**dev_data, "kubernetesVersion": "1.31", "admission": {"mutation": "mutating-admission-policy"}}
    (finding,) = check_admission(PlatformSpec.model_validate(data))
    assert finding.path == "admission.mutation" and finding.severity is Severity.ERROR
    assert finding.message.startswith("mutating-admission-policy needs Kubernetes >= 1.32")
    data = {**dev_data, "kubernetesVersion": "1.29", "clusterAutoscaler": {"enabled": True}}
    (image,) = [f for f in check_node_pools(PlatformSpec.model_validate(data)) if "no default image" in f.message]
    assert image.path == "clusterAutoscaler.imageTag" and image.message.startswith("no default image for Kubernetes")


def test_engine_notes_are_findings_whose_warnings_validation_reports(dev_data):
    data = {**dev_data, "kubernetesVersion": "1.34", "admission": {"mutation": "mutating-admission-policy"}}
    spec = PlatformSpec.model_validate(data)
    routed, gate = engine_notes(spec)
    assert (routed.path, routed.severity) == ("admission", Severity.INFO)
    assert (
        str(routed)
        == "admission: tiered pods routed by mutating-admission-policy (admissionregistration.k8s.io/v1beta1)"
    )
    assert gate.severity is Severity.WARNING
    warned = [f for f in check_admission(spec) if f.path == "admission.mutation"]
    assert [(f.message, f.severity) for f in warned] == [(gate.message, Severity.WARNING)]


def test_mig_drain_notes_name_their_pool_by_index(dev_spec):
    drains = [f for f in check_gpu_operator(dev_spec) if "schedule it like a node drain" in f.message]
    assert [(f.path, f.severity) for f in drains] == [("nodePools[1].sharing.migLayout", Severity.INFO)]
    assert "'gpu-infer'" in drains[0].message


def test_artifact_notes_are_findings_and_kinds_are_an_enum(dev_spec):
    artifacts = render_all(dev_spec)
    assert {a.kind for a in artifacts} == set(ArtifactKind)
    notes = [n for a in artifacts for n in a.notes]
    assert notes and all(isinstance(n, Finding) and n.severity is Severity.INFO for n in notes)
    assert Artifact("helm", "x", ()).kind is ArtifactKind.HELM
    with pytest.raises(ValueError, match=r"artifact kind 'charts' not in \('kubernetes', 'helm', 'nodepools'\)"):
        Artifact("charts", "x", ())  # type: ignore[arg-type]


def test_policy_closed_sets_are_enums():
    assert {p.kind for p in POLICIES} == set(PolicyKind)
    assert all(isinstance(p.severity, PolicySeverity) for p in POLICIES)
    pulumi_policy = pytest.importorskip("pulumi_policy")
    assert [s.value for s in PolicySeverity] == [s.value for s in pulumi_policy.Severity]
    pool = gpu_pool("aws:eks/nodeGroup:NodeGroup", "g", {"instanceTypes": ["p4d.24xlarge"]})
    assert pool is not None and pool.kind is PoolKind.EKS


def test_printed_findings_are_bounded_however_many_and_long_they_are():
    # 90,000 unknown instance types once printed 35 MB of errors: the first 100 findings are printed, each cut
    # to 1,000 characters, then a count of the rest.
    import io

    from rich.console import Console

    from gpu_platform.console import print_findings

    buf = io.StringIO()
    findings = [Finding(f"instanceTypes[{i}]", f"'x{i}' is not an instance type") for i in range(250)]
    findings[3] = Finding("tiers[3].name", "a" * 5_000)
    print_findings(findings, Console(file=buf, width=100_000, soft_wrap=True))
    lines = buf.getvalue().splitlines()
    assert len(lines) == 101
    assert lines[0] == "error: instanceTypes[0]: 'x0' is not an instance type"
    assert lines[99].startswith("error: instanceTypes[99]:")
    assert lines[-1] == "... and 150 more"
    assert len(lines[3]) <= 1_000 + len("error: ") and lines[3].endswith("(5,015 characters in all)")
