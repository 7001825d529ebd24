"""The README and the docs site: the two commands on top, a short README whose links resolve, generated reference
pages that are current, every page in the navigation, and the documented commands, components and imports real."""

from __future__ import annotations

import importlib
import re
import runpy

import yaml

from conftest import ROOT
from helpers.docs import DOCS, README, all_text, page, pages

README_TEXT = README.read_text()


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def test_readme_starts_with_the_two_commands():
    first = _blocks(README_TEXT, "sh")[0].strip().splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make synth", "make test"]
    assert README_TEXT.index("make synth") < README_TEXT.index("\n## ")


def test_readme_is_short_and_its_links_resolve():
    assert len(README_TEXT.splitlines()) < 250
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README_TEXT)
    assert links
    for link in links:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_spec_reference_page_is_generated_from_the_models():
    from gpu_platform.spec_reference import render_spec_reference_page

    assert page("reference/spec.md") == render_spec_reference_page(), "docs/reference/spec.md is stale: run `make docs`"


def test_cli_reference_page_is_generated_from_the_commands():
    from gpu_platform.cli_reference import render_cli_reference

    assert page("reference/cli.md") == render_cli_reference(), "docs/reference/cli.md is stale: run `make docs`"


def test_cli_reference_has_every_command_and_option():
    from click.testing import CliRunner

    from gpu_platform.cli import main

    text = page("reference/cli.md")
    for name in ("audit", "cost", "explain", "plan", "preflight", "synth", "validate"):
        assert f"\n## {name}\n" in text
        help_text = CliRunner().invoke(main, [name, "--help"]).output
        options = help_text.split("Options:")[-1]
        for option, shown in re.findall(r"^  (--[a-z-]+)(?: ([A-Z|-]+)(?= ))?", options, flags=re.M):
            if option != "--help":
                assert f"`{option}`" in text, f"{name} {option} is not in the CLI reference"
            if shown and "|" in shown:  # a metavar such as PATH|-: the page shows what --help shows
                row = next(line for line in text.split(f"\n## {name}\n")[1].splitlines() if f"`{option}`" in line)
                assert shown.replace("|", "\\|") in row, f"{name} {option}: the page does not show {shown}"


def test_fields_required_by_validation_are_marked_so():
    """The reference marks the fields the model leaves optional but validation requires, and validation does."""
    import pytest

    from gpu_platform.errors import SpecError
    from gpu_platform.load import parse_spec
    from gpu_platform.spec_reference import VALIDATION_REQUIRED

    data = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["gpu-platform:platform"]
    reference = page("reference/spec.md")
    for key in VALIDATION_REQUIRED:
        model, field = key.split(".")
        assert model == "AwsSpec"
        with pytest.raises(SpecError) as e:
            parse_spec({**data, "aws": {k: v for k, v in data["aws"].items() if k != field}})
        assert any(f.path.endswith(f"aws.{field}") for f in e.value.findings), e.value.findings
        row = next(line for line in reference.splitlines() if line.startswith(f"| `{field}` |"))
        assert "required by validation" in row


def test_every_page_is_in_the_navigation():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    listed = set()

    def walk(node):
        if isinstance(node, str):
            listed.add(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(nav)
    on_disk = {str(p.relative_to(DOCS)) for p in pages()}
    assert on_disk == listed, (
        f"pages not in the nav: {on_disk - listed}; nav entries without a page: {listed - on_disk}"
    )


def test_every_documented_command_exists():
    from click.testing import CliRunner

    from gpu_platform.cli import main

    documented = set(re.findall(r"^\| `gpu-platform (\w+)", all_text(), flags=re.M))
    assert documented >= {"validate", "synth", "cost", "preflight", "audit", "plan", "explain"}
    for name in documented:
        res = CliRunner().invoke(main, [name, "--help"])
        assert res.exit_code == 0, f"`gpu-platform {name}` is documented but fails: {res.output}"


def test_every_documented_import_works():
    """`from gpu_platform.x import A, B` anywhere in the docs (code or text) imports."""
    statements = set(re.findall(r"from (gpu_platform[\w.]*) import ([\w, ]+)", all_text()))
    assert len(statements) >= 5
    for module, names in statements:
        mod = importlib.import_module(module)
        for name in (n.strip() for n in names.split(",") if n.strip()):
            assert hasattr(mod, name), f"`from {module} import {name}` is documented but fails"


def test_domain_packages_export_their_components():
    expected = {
        "gpu_platform.nodepools": [
            "EksGpuNodePool",
            "EksGpuNodePoolArgs",
            "KarpenterGpuNodePool",
            "GkeGpuNodePool",
            "GpuNodeAddons",
            "EksNodeHealth",
        ],
        "gpu_platform.observability": ["GpuObservability", "GpuObservabilityArgs"],
        "gpu_platform.autoscaling": ["GpuAutoscaling", "GpuAutoscalingArgs"],
        "gpu_platform.queues": ["GpuQueues", "GpuQueuesArgs"],
        "gpu_platform.gpu_operator": ["GpuOperator", "GpuOperatorArgs"],
        "gpu_platform.admission": ["GpuAdmission", "GpuAdmissionArgs"],
    }
    for module, names in expected.items():
        mod = importlib.import_module(module)
        for name in names:
            assert name in mod.__all__ and getattr(mod, name).__name__ == name, f"{module}.{name}"


def test_component_table_matches_registrations(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    documented = set(re.findall(r"^\| `\w+` \| `(gpu-platform:[\w:]+)` \|", page("components.md"), flags=re.M))
    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    registered = {r.type for r in rec.resources if r.type.startswith("gpu-platform:")}
    assert registered <= documented
    # the dev stack is on AWS, with managed node groups
    assert documented - registered == {"gpu-platform:index:GkeGpuNodePool", "gpu-platform:index:KarpenterGpuNodePool"}
    assert rec.named("plat-gpu-operator-release").type == "kubernetes:helm.sh/v3:Release"


def test_readme_eks_program_is_the_example_and_builds_cluster_and_platform(pulumi_mocks):
    """The README's EKS program is examples/eks-and-platform/__main__.py, and it runs: the platform takes the
    cluster's name and the node role as Outputs, waits for the cluster and installs through its provider."""
    import pulumi

    path = ROOT / "examples" / "eks-and-platform" / "__main__.py"
    block = next(b for b in _blocks(README_TEXT, "python") if "aws.eks.Cluster(" in b)
    assert block == path.read_text(), "README block differs from examples/eks-and-platform/__main__.py"
    # the mocks run every program as project gpu-platform
    pulumi.runtime.set_all_config({"gpu-platform:subnetIds": '["subnet-a", "subnet-b"]'})
    rec = pulumi_mocks.run(lambda: runpy.run_path(str(path), run_name="__main__") and None)
    cluster, ng = rec.named("ml"), rec.named("gpu-h100-ng")
    assert ng.inputs["clusterName"] == "ml-0a1b2c3" and ng.inputs["nodeRoleArn"].endswith(":role/gpu-nodes")
    assert cluster.urn in ng.dependencies and rec.depends_on("gpu-h100-ng", "gpu-nodes-AmazonEKSWorkerNodePolicy")
    provider = f"{rec.named('ml').urn.replace('aws:eks/cluster:Cluster::ml', 'pulumi:providers:kubernetes::ml')}::ml-id"
    assert rec.named("gpu-queues-kueue").provider == provider
    assert (
        rec.named("gpu-observability-opencost").inputs["values"]["opencost"]["exporter"]["defaultClusterId"]
        == "ml-0a1b2c3"
    )
