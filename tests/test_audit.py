"""`gpu-platform audit` over real `pulumi stack export` and `pulumi preview --json` documents."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpu_platform.cli import main
from gpu_platform.policy.resources import from_artifacts, from_document
from gpu_platform.synth import render_all

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "audit"
DEV = str(ROOT / "Pulumi.dev.yaml")


def run(*args):
    return CliRunner().invoke(main, ["audit", *args], catch_exceptions=False)


def test_stack_export_with_unclassified_gpu_node_group_fails_and_names_it():
    res = run(str(FIXTURES / "stack-export-unclassified.json"), "--spec", DEV)
    assert res.exit_code == 1
    assert "gpu-node-pool-classified" in res.output and "NodeGroup adhoc-gpu" in res.output
    assert "'adhoc-gpu' (instance type p5.48xlarge) is unclassified" in res.output
    assert "ml-prod-gpu-train" not in res.output  # the classified, hardened pool passes
    assert "audit failed: 6 resources, 1 mandatory and 0 advisory violation(s)" in res.output


def test_preview_json_reports_node_group_and_workload():
    res = run(str(FIXTURES / "preview-unclassified.json"), "--spec", DEV)
    assert res.exit_code == 1
    assert "NodeGroup burst" in res.output and "Deployment vllm" in res.output
    assert "NodeGroup old" not in res.output  # deleted resources are not audited


def test_preview_reads_new_state_and_skips_deletes():
    doc = json.loads((FIXTURES / "preview-unclassified.json").read_text())
    names = [r.name for r in from_document(doc)]
    assert names == ["burst-lt", "burst", "vllm"]


def _export(resources) -> dict:
    states = [
        {
            "urn": r.urn,
            "custom": True,
            "type": r.type,
            "inputs": r.props,
            "outputs": {},
            "dependencies": r.dependencies,
            "propertyDependencies": r.property_dependencies,
        }
        for r in resources
    ]
    return {"version": 3, "deployment": {"manifest": {"version": "v3.190.0"}, "resources": states}}


def test_dev_stack_resources_pass(dev_spec, tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(_export(from_artifacts(render_all(dev_spec)))))
    res = run(str(path), "--spec", DEV)
    assert res.exit_code == 0, res.output
    assert "audit passed" in res.output and "0 mandatory and 0 advisory" in res.output
    assert "note: no budgetHourly set; GPU node pools at max size cost $" in res.output


def test_pack_config_file_instead_of_spec(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps({"gpu-node-pool-classified": {"enforcementLevel": "advisory", "labelDomain": "gpu.example.com"}})
    )
    res = run(str(FIXTURES / "stack-export-unclassified.json"), "--config", str(cfg))
    assert res.exit_code == 0, res.output
    assert "advisory" in res.output and "0 mandatory and 1 advisory" in res.output


def test_a_per_policy_config_is_read_as_one_config(tmp_path):
    # Each property from whichever policy gives it: the budget under gpu-budget applies (the docs' example puts
    # it there), and the label domain under another policy is read too.
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps({"gpu-workload-classified": {"labelDomain": "gpu.example.com"}, "gpu-budget": {"budgetHourly": 1}})
    )
    res = run(str(FIXTURES / "stack-export-unclassified.json"), "--config", str(cfg))
    assert "gpu-budget" in res.output and "no budgetHourly set" not in res.output
    # The same value under two policies (500 is 500.0; a nested one too) is one value, not a conflict.
    tiers = {"train": {"resources": ["nvidia.com/gpu"], "pool": "train"}}
    same = {"gpu-budget": {"budgetHourly": 500, "tiers": tiers}, "gpu-node-pool-classified": {"budgetHourly": 500.0}}
    cfg.write_text(json.dumps({**same, "gpu-workload-classified": {"tiers": json.loads(json.dumps(tiers))}}))
    res = run(str(FIXTURES / "stack-export-unclassified.json"), "--config", str(cfg))
    assert "policy config" not in res.output and "audit failed" in res.output, res.output


def test_a_per_policy_config_refuses_unknown_policies_and_two_values_of_one_property(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "gpu-nonexistent": {"budgetHourly": 1},
                "gpu-workload-classified": {"labelDomain": "gpu.acme.io"},
                "gpu-budget": {"labelDomain": "gpu.example.com", "budgetHourly": 5},
            }
        )
    )
    res = CliRunner().invoke(main, ["audit", str(FIXTURES / "stack-export-unclassified.json"), "--config", str(cfg)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "policy config: 'gpu-nonexistent' is not a policy of the pack; allowed: gpu-budget" in res.output
    assert "'labelDomain' is 'gpu.acme.io' under gpu-workload-classified and 'gpu.example.com' under gpu-budget" in (
        " ".join(res.output.split())
    )


def test_a_policy_level_given_twice_must_agree(tmp_path):
    # `enforcementLevel` under a policy and its entry in `enforcement`: the same level is one level; two
    # different ones are an error (the entry was silently overridden before).
    cfg = tmp_path / "config.json"
    export = str(FIXTURES / "stack-export-unclassified.json")
    level = {"enforcementLevel": "advisory", "labelDomain": "gpu.example.com"}
    for named, fails in [("advisory", False), ("mandatory", True)]:
        cfg.write_text(
            json.dumps(
                {"gpu-node-pool-classified": level, "gpu-budget": {"enforcement": {"gpu-node-pool-classified": named}}}
            )
        )
        res = CliRunner().invoke(main, ["audit", export, "--config", str(cfg)])
        text = " ".join(res.output.split())
        assert "Traceback" not in res.output
        want = (
            "policy config gpu-node-pool-classified.enforcementLevel is 'advisory' and "
            "enforcement.gpu-node-pool-classified is 'mandatory'; give the level once"
        )
        assert (want in text) is fails, res.output
        if not fails:
            assert "0 mandatory and 1 advisory" in res.output, res.output


def test_a_per_policy_config_reports_every_problem_with_a_count_past_twenty(tmp_path):
    cases = {
        # 25 unknown policies: 20 lines and a count; 30 bad namespaces under a policy as well
        "unknown.json": ({f"gpu-x{i}": {} for i in range(25)}, ["... and 5 more errors"]),
        "namespaces.json": ({"gpu-budget": {"exemptNamespaces": [f"BAD{i}" for i in range(30)]}}, ["... and 10 more"]),
        # true is not 1, whichever policy comes first; a null policy and a flat property beside the policies
        "mixed.json": (
            {
                "gpu-budget": {"budgetHourly": 1, "enforcementLevel": "remediate"},
                "gpu-workload-classified": {"budgetHourly": True, "labelDomain": "BAD"},
                "gpu-node-pool-classified": None,
                "labelDomain": "gpu.example.com",
            },
            [
                "policy config 'labelDomain': a property beside per-policy objects",
                "policy config gpu-node-pool-classified: null; allowed: an object",
                "policy config gpu-budget.enforcementLevel: 'remediate' is not an enforcement level of gpu-budget",
                "policy config 'budgetHourly' is 1 under gpu-budget and true under gpu-workload-classified",
                "policy config labelDomain: 'BAD' is not a DNS subdomain",
            ],
        ),
    }
    for name, (config, wants) in cases.items():
        path = tmp_path / name
        path.write_text(json.dumps(config))
        res = CliRunner().invoke(
            main, ["audit", str(FIXTURES / "stack-export-unclassified.json"), "--config", str(path)]
        )
        text = " ".join(res.output.split())
        assert res.exit_code == 1 and "Traceback" not in res.output
        for want in wants:
            assert want in text, (want, res.output)
    assert len([line for line in res.output.splitlines() if "mixed.json: " in line]) == len(cases["mixed.json"][1])


def test_a_config_nested_too_deep_or_with_a_bad_level_is_one_clear_error(tmp_path):
    # 500 levels made the config's conversion recurse past Python's limit: a traceback of 3,000 lines.
    deep = tmp_path / "deep.json"
    deep.write_text('{"tiers":' + '{"a":' * 500 + "1" + "}" * 500 + "}")
    level = tmp_path / "level.json"
    level.write_text('{"enforcementLevel": "bogus"}')
    for cfg, want in [(deep, "nested deeper than 32 levels"), (level, "enforcementLevel: 'bogus' is not one of")]:
        res = CliRunner().invoke(
            main, ["audit", str(FIXTURES / "stack-export-unclassified.json"), "--config", str(cfg)]
        )
        assert res.exit_code == 1 and "Traceback" not in res.output and want in res.output, res.output


def test_bad_inputs_are_reported_without_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"resources": []}')
    res = CliRunner().invoke(main, ["audit", str(bad)])
    assert res.exit_code == 1 and "pulumi stack export" in res.output
    res = CliRunner().invoke(main, ["audit", str(tmp_path / "missing.json")])
    assert res.exit_code == 1 and "cannot read document" in res.output


def test_readme_guardrails_names_every_policy_and_config_field():
    from gpu_platform.policy import POLICIES, PolicyConfig
    from helpers.docs import section as doc_section

    section = doc_section("guardrails")
    for p in POLICIES:
        assert f"`{p.name}`" in section
    for f in PolicyConfig.model_fields.values():
        assert f"`{f.alias}`" in section
    example = json.loads(section.split("```json")[1].split("```")[0])
    from gpu_platform.policy.config import parse_config

    for props in example.values():
        parse_config(props)


def test_replacements_and_pending_deletes_are_audited_once():
    doc = json.loads((FIXTURES / "preview-unclassified.json").read_text())
    burst = next(s for s in doc["steps"] if s["urn"].endswith("::burst"))
    replaced = [
        {**burst, "op": "create-replacement"},
        {**burst, "op": "replace"},
        {"op": "delete-replaced", "urn": burst["urn"], "oldState": burst["newState"]},
    ]
    doc["steps"] = [s for s in doc["steps"] if s is not burst] + replaced
    assert [r.name for r in from_document(doc)].count("burst") == 1
    export = json.loads((FIXTURES / "stack-export-unclassified.json").read_text())
    states = export["deployment"]["resources"]
    adhoc = next(s for s in states if s["urn"].endswith("::adhoc-gpu"))
    states.append({**adhoc, "delete": True, "id": "old"})  # the old copy of a replaced node group
    names = [r.name for r in from_document(export)]
    assert names.count("adhoc-gpu") == 1
    assert next(r for r in from_document(export) if r.name == "adhoc-gpu").props["id"] != "old"


def _audit_with(tmp_path, text: str, *extra: str):
    cfg = tmp_path / "config.json"
    cfg.write_text(text)
    res = CliRunner().invoke(
        main, ["audit", str(FIXTURES / "stack-export-unclassified.json"), "--config", str(cfg), *extra]
    )
    assert "Traceback" not in res.output
    return res, " ".join(res.output.split())


def test_pulumis_short_forms_all_and_a_level_alone_set_levels(tmp_path):
    # As `pulumi preview --policy-pack-config` takes them: `all` for every policy given no level of its own, and a
    # policy given as its level alone. The fixture's one violation is gpu-node-pool-classified's (mandatory).
    for config, level in [
        ({"all": "advisory"}, "advisory"),
        ({"all": {"enforcementLevel": "advisory"}}, "advisory"),
        ({"gpu-node-pool-classified": "advisory"}, "advisory"),
        ({"all": "advisory", "gpu-node-pool-classified": "mandatory"}, "mandatory"),
        ({"all": "advisory", "gpu-budget": {"enforcement": {"gpu-node-pool-classified": "mandatory"}}}, "mandatory"),
    ]:
        res, text = _audit_with(tmp_path, json.dumps(config))
        summary = "0 mandatory and 1 advisory" if level == "advisory" else "1 mandatory and 0 advisory"
        assert summary in text and res.exit_code == (0 if level == "advisory" else 1), (config, res.output)
    res, text = _audit_with(tmp_path, json.dumps({"all": "remediate", "gpu-budget": 3}))
    assert res.exit_code == 1
    assert "policy config all: 'remediate'; allowed: a level every policy takes (advisory, mandatory, disabled)" in text
    assert "policy config gpu-budget: 3; allowed: an object of the pack's properties, or a level" in text


def test_enforcement_entries_merge_across_policies_and_every_conflict_is_named(tmp_path):
    merged = {
        "gpu-budget": {"enforcement": {"gpu-budget": "advisory"}},
        "gpu-workload-classified": {"enforcement": {"gpu-budget": "advisory", "gpu-node-pool-classified": "advisory"}},
    }
    res, text = _audit_with(tmp_path, json.dumps(merged))
    assert res.exit_code == 0 and "0 mandatory and 1 advisory" in text, res.output
    both = {
        "gpu-budget": {"enforcementLevel": "mandatory", "enforcement": {"gpu-budget": "advisory"}},
        "gpu-workload-classified": {
            "enforcementLevel": "advisory",
            "enforcement": {"gpu-workload-classified": "mandatory", "gpu-budget": "disabled"},
        },
    }
    res, text = _audit_with(tmp_path, json.dumps(both))
    assert res.exit_code == 1
    for want in [
        "enforcement.gpu-budget is 'advisory' under gpu-budget and 'disabled' under gpu-workload-classified",
        "gpu-budget.enforcementLevel is 'mandatory' and enforcement.gpu-budget is 'advisory'",
        "gpu-workload-classified.enforcementLevel is 'advisory' and enforcement.gpu-workload-classified is 'mandatory'",
    ]:
        assert want in text, (want, res.output)


def test_a_config_key_given_twice_a_flat_level_and_spec_beside_config_are_refused(tmp_path):
    # Python's JSON parser keeps the last of two equal keys: the level a reader sees first would not apply.
    res, text = _audit_with(
        tmp_path, '{"gpu-node-pool-classified": {"enforcementLevel": "mandatory", "enforcementLevel": "advisory"}}'
    )
    assert res.exit_code == 1
    assert "duplicate key 'enforcementLevel' in one object; a key may appear once per object" in text
    res, text = _audit_with(tmp_path, '{"enforcementLevel": "advisory", "labelDomain": "gpu.example.com"}')
    assert res.exit_code == 1 and "policy config enforcementLevel: 'advisory' sets no policy's level" in text
    res, text = _audit_with(tmp_path, "{}", "--spec", DEV)
    assert res.exit_code == 2 and "give --spec or --config, not both" in text
    unknown = {"enforcement": {f"gpu-x{i}": "advisory" for i in range(9)}}
    res, text = _audit_with(tmp_path, json.dumps(unknown))
    assert res.exit_code == 1 and "'gpu-x4' is not a policy of the pack" in text and "; and 4 more" in text


def test_the_budget_note_goes_to_stderr(tmp_path):
    res = CliRunner().invoke(main, ["audit", str(FIXTURES / "stack-export-unclassified.json"), "--spec", DEV])
    assert "note: no budgetHourly set" in res.stderr and "note:" not in res.stdout


def test_without_spec_or_config_a_note_says_the_defaults_apply_and_yaml_is_refused_with_what_is_taken():
    res = run(str(FIXTURES / "stack-export-unclassified.json"))
    assert "no --spec or --config: the pack's defaults apply (labelDomain gpu.example.com)" in " ".join(
        res.stderr.split()
    )
    res = run(str(FIXTURES / "stack-export-unclassified.json"), "--spec", DEV)
    assert "pack's defaults" not in res.stderr
    res = run(DEV)
    assert res.exit_code == 1 and "allowed: the JSON of `pulumi stack export` or `pulumi preview --json`" in " ".join(
        res.stderr.split()
    )


def test_a_spec_given_as_the_document_points_at_spec():
    res = run(DEV)
    assert res.exit_code == 1 and "(a spec or stack file goes in --spec)" in " ".join(res.stderr.split())
