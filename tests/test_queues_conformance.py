"""Queues conformance: custom resources against upstream CRDs (schema, unknown fields, CEL rules), PriorityClasses
and the README's Job against the Kubernetes schema, Helm values keys against the upstream values files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import ROOT
from gpu_platform.load import load_spec, parse_spec
from gpu_platform.queues.render import render_queues
from helpers.specs import team

EXAMPLE = ROOT / "examples" / "aws-1000-a100.yaml"

# (group, kind) -> CRD file under ../shared/reference/crds
CRD_FILES = {
    ("kueue.x-k8s.io", "ResourceFlavor"): "kueue/kueue.x-k8s.io_resourceflavors.yaml",
    ("kueue.x-k8s.io", "ClusterQueue"): "kueue/kueue.x-k8s.io_clusterqueues.yaml",
    ("kueue.x-k8s.io", "LocalQueue"): "kueue/kueue.x-k8s.io_localqueues.yaml",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "kueue/kueue.x-k8s.io_workloadpriorityclasses.yaml",
    ("kueue.x-k8s.io", "Cohort"): "kueue/kueue.x-k8s.io_cohorts.yaml",
    ("scheduling.volcano.sh", "Queue"): "volcano/scheduling.volcano.sh_queues.yaml",
    ("scheduling.volcano.sh", "PodGroup"): "volcano/scheduling.volcano.sh_podgroups.yaml",
}

# Helm values keys we set whose parent is a free-form map upstream (none today; add with a reason).
VALUES_ALLOW_LIST: dict[str, set[str]] = {"kueue": set(), "volcano": set()}


def _crd_schema(reference, doc: dict[str, Any]) -> dict[str, Any]:
    group, version = doc["apiVersion"].split("/")
    rel = CRD_FILES.get((group, doc["kind"]))
    assert rel, f"no CRD known for {doc['apiVersion']} {doc['kind']}"
    crd = yaml.safe_load(reference("crds", *rel.split("/")).read_text())
    assert crd["spec"]["names"]["kind"] == doc["kind"]
    served = {v["name"]: v for v in crd["spec"]["versions"] if v.get("served")}
    assert version in served, f"{doc['kind']} {version} is not served; served: {sorted(served)}"
    return served[version]["schema"]["openAPIV3Schema"]


def _unknown_fields(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    """Fields the API server would silently prune (structural schemas drop undeclared keys)."""
    out: list[str] = []
    if isinstance(value, dict) and schema.get("type") == "object" and path != ".metadata":
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if props is not None and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out += [f"{path}.{k}" for k in value if k not in props]
        for k, v in value.items():
            sub = (props or {}).get(k) or (extra if isinstance(extra, dict) else None)
            if sub:
                out += _unknown_fields(v, sub, f"{path}.{k}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            out += _unknown_fields(v, schema["items"], f"{path}[{i}]")
    return out


def _cel_rules(value: Any, schema: dict[str, Any], path: str, results: dict[str, list]) -> None:
    """Evaluate each x-kubernetes-validations rule without oldSelf (cel-python); collect failures and skips."""
    import celpy

    for rule in schema.get("x-kubernetes-validations", []):
        if "oldSelf" in rule["rule"]:
            continue
        env = celpy.Environment()
        try:
            ok = env.program(env.compile(rule["rule"])).evaluate({"self": celpy.json_to_cel(value)})
        except Exception as e:  # noqa: BLE001 - k8s CEL extensions cel-python lacks
            results["skipped"].append((path, rule["rule"], type(e).__name__))
            continue
        results["ran"].append(path)
        if not bool(ok):
            results["failed"].append(f"{path}: {rule.get('message', rule['rule'])}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k) or (extra if isinstance(extra, dict) else None)
            if sub:
                _cel_rules(v, sub, f"{path}.{k}", results)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            _cel_rules(v, schema["items"], f"{path}[{i}]", results)


def validate_custom_resource(reference, doc: dict[str, Any]) -> dict[str, list]:
    """Validate `doc` against its CRD's served version: JSON schema, no pruned fields, CEL rules."""
    schema = _crd_schema(reference, doc)
    jsonschema.validate(doc, schema)
    assert _unknown_fields(doc, schema, "") == [], f"{doc['kind']} {doc['metadata']['name']} has pruned fields"
    results: dict[str, list] = {"ran": [], "failed": [], "skipped": []}
    _cel_rules(doc, schema, "", results)
    assert results["failed"] == [], f"{doc['kind']} {doc['metadata']['name']}: {results['failed']}"
    return results


def _specs(dev_data) -> dict[str, Any]:
    both = {
        **dev_data,
        "scheduling": {
            "kueue": {"enabled": True, "fairSharing": True},
            "volcano": {"enabled": True},
            "cohorts": [{"name": "org"}, {"name": "ml", "parent": "org"}],
        },
    }
    volcano_only = {**dev_data, "scheduling": {"kueue": {"enabled": False}, "volcano": {"enabled": True}}}
    out = {"dev": parse_spec(dev_data), "dev-both": parse_spec(both), "dev-volcano": parse_spec(volcano_only)}
    if EXAMPLE.exists():
        out["example"] = load_spec(EXAMPLE)
    return out


def test_every_custom_resource_validates_against_its_crd(reference, dev_data):
    ran = 0
    kinds: set[str] = set()
    for spec in _specs(dev_data).values():
        q = render_queues(spec)
        for doc in q.kueue + q.volcano:
            ran += len(validate_custom_resource(reference, doc)["ran"])
            kinds.add(doc["kind"])
    assert kinds == {"ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Cohort", "Queue"}
    assert ran > 0, "no CEL rule was evaluated"


def test_crd_check_catches_v1beta1_field_names(reference, dev_spec):
    cq = next(d for d in render_queues(dev_spec).kueue if d["kind"] == "ClusterQueue" and "cohortName" in d["spec"])
    cq["spec"]["cohort"] = cq["spec"].pop("cohortName")  # the v1beta1 name
    with pytest.raises(AssertionError, match="pruned fields"):
        validate_custom_resource(reference, cq)


def test_crd_cel_rule_rejects_borrowing_without_cohort(reference, dev_spec):
    cq = next(d for d in render_queues(dev_spec).kueue if d["kind"] == "ClusterQueue" and "cohortName" in d["spec"])
    del cq["spec"]["cohortName"]
    with pytest.raises(AssertionError, match="borrowingLimit must be nil when cohort is empty"):
        validate_custom_resource(reference, cq)


def test_cluster_queue_webhook_rules_hold(dev_data):
    """Kueue's webhook: flavors list the covered resources in order; no resource or flavor in two groups."""
    for spec in _specs(dev_data).values():
        for cq in (d for d in render_queues(spec).kueue if d["kind"] == "ClusterQueue"):
            groups = cq["spec"].get("resourceGroups", [])
            resources = [r for g in groups for r in g["coveredResources"]]
            flavors = [f["name"] for g in groups for f in g["flavors"]]
            assert len(resources) == len(set(resources)), cq["metadata"]["name"]
            assert len(flavors) == len(set(flavors)), cq["metadata"]["name"]
            assert len(groups) <= 16 and len(flavors) <= 256
            for g in groups:
                for f in g["flavors"]:
                    assert [r["name"] for r in f["resources"]] == g["coveredResources"]
                    for r in f["resources"]:
                        assert r.get("lendingLimit", 0) <= r["nominalQuota"]


def test_podgroup_example_validates(reference, dev_data):
    from gpu_platform.queues.volcano import render_podgroup

    spec = _specs(dev_data)["dev-both"]
    pg = render_podgroup(team(spec, "research"), "research", "llama-ft", 4, "gpu-train")
    validate_custom_resource(reference, pg)
    assert pg["spec"]["queue"] in {d["metadata"]["name"] for d in render_queues(spec).volcano}


@pytest.mark.parametrize("which", ["dev", "example"])
def test_priority_classes_validate_against_kubernetes_schema(which, dev_data):
    import kubernetes_validate

    specs = _specs(dev_data)
    if which not in specs:
        pytest.skip(f"{EXAMPLE} not present")
    spec = specs[which]
    docs = render_queues(spec).priority_classes + render_queues(spec).namespaces
    for doc in docs:
        kubernetes_validate.validate(doc, spec.kubernetes_version, strict=True)
    bad = {**docs[0], "value": "high"}  # a string where the schema wants int32
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, spec.kubernetes_version, strict=True)


def _leaf_paths(values: Any, prefix: str = "") -> list[str]:
    if isinstance(values, dict) and values:
        return [p for k, v in values.items() for p in _leaf_paths(v, f"{prefix}.{k}" if prefix else k)]
    return [prefix]


def _exists(upstream: Any, path: str) -> bool:
    node = upstream
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


@pytest.mark.parametrize(
    "chart,file", [("kueue", "kueue-values-0.19.2.yaml"), ("volcano", "volcano-values-1.15.1.yaml")]
)
def test_helm_values_keys_exist_upstream(chart, file, reference, dev_data):
    upstream = yaml.safe_load(reference("upstream", file).read_text())
    release = getattr(render_queues(_specs(dev_data)["dev-both"]), f"{chart}_release")
    paths = _leaf_paths(release["values"])
    assert paths
    missing = [p for p in paths if not _exists(upstream, p) and p not in VALUES_ALLOW_LIST[chart]]
    assert missing == []


def test_kueue_manager_config_keys_are_upstream_config_keys(reference, dev_data):
    """Every top-level key of our Configuration appears (set or commented) in the chart's default config."""
    from gpu_platform.queues.releases import kueue_manager_config

    upstream = yaml.safe_load(reference("upstream", "kueue-values-0.19.2.yaml").read_text())
    text = upstream["managerConfig"]["controllerManagerConfigYaml"]
    config = kueue_manager_config(_specs(dev_data)["dev-both"])
    for key in config:
        assert re.search(rf"^#?{key}:", text, re.M), key
    assert yaml.safe_load(text)["apiVersion"] == config["apiVersion"]
    known = set(yaml.safe_load(text)["integrations"]["frameworks"]) | set(re.findall(r'#\s+- "([^"]+)"', text))
    assert set(config["integrations"]["frameworks"]) <= known
    for key in config["resources"]:  # nested keys are documented (commented) under `#resources:` upstream
        assert re.search(rf"^#\s+{key}:", text, re.M), key


def test_known_kueue_frameworks_are_the_charts(reference):
    """The integration names the validator accepts are exactly those the 0.19.2 chart lists (set or commented)."""
    from gpu_platform.queues.releases import KUEUE_FRAMEWORKS

    text = yaml.safe_load(reference("upstream", "kueue-values-0.19.2.yaml").read_text())["managerConfig"][
        "controllerManagerConfigYaml"
    ]
    frameworks = text.split("integrations:", 1)[1].split("externalFrameworks", 1)[0]  # not the example CRD name
    listed = set(yaml.safe_load(text)["integrations"]["frameworks"]) | set(re.findall(r'#\s+- "([^"]+)"', frameworks))
    assert set(KUEUE_FRAMEWORKS) == listed


def test_volcano_queues_pass_the_webhook_rules(dev_data):
    """Volcano's queue webhook: guarantee <= deserved (deserved present) and deserved <= capability."""
    checked = 0
    for spec in _specs(dev_data).values():
        for q in (d for d in render_queues(spec).volcano if d["kind"] == "Queue"):
            body = q["spec"]
            deserved, capability = body.get("deserved", {}), body.get("capability", {})
            for r, n in body.get("guarantee", {}).get("resource", {}).items():
                assert r in deserved and n <= deserved[r], (q["metadata"]["name"], r)
            for r, n in deserved.items():
                assert r in capability and n <= capability[r], (q["metadata"]["name"], r)
            assert 1 <= body["weight"] <= 65535
            checked += 1
    assert checked >= 4


def readme_queue_docs() -> list[dict[str, Any]]:
    """YAML documents on the queues page."""
    from helpers.docs import section

    blocks = re.findall(r"```yaml\n(.*?)```", section("queues"), re.S)
    return [d for b in blocks for d in yaml.safe_load_all(b) if isinstance(d, dict) and "kind" in d]


def test_readme_job_is_a_valid_kubernetes_object(dev_spec):
    import kubernetes_validate

    jobs = [d for d in readme_queue_docs() if d["kind"] == "Job"]
    assert jobs, "README queues section has no Job"
    for job in jobs:
        kubernetes_validate.validate(job, dev_spec.kubernetes_version, strict=True)


def test_readme_podgroup_validates(reference):
    pgs = [d for d in readme_queue_docs() if d["kind"] == "PodGroup"]
    assert pgs, "README queues section has no PodGroup"
    for pg in pgs:
        validate_custom_resource(reference, pg)


def test_reference_dir_is_the_shared_one(reference):
    assert Path(reference("crds", "kueue", "kueue.x-k8s.io_clusterqueues.yaml")).is_file()
