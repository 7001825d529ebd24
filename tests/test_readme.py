"""The README's examples run: spec blocks validate, the library snippet builds under mocks, the reference is current."""

from __future__ import annotations

import re
import runpy

import yaml
from conftest import ROOT

README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_starts_with_the_two_commands():
    first = _blocks("sh")[0].strip().splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make synth", "make test"]


def test_spec_reference_is_generated_from_the_models():
    from gpu_platform.spec_reference import BEGIN, END, render_spec_reference

    block = README.split(BEGIN, 1)[1].split(END, 1)[0]
    assert block == "\n" + render_spec_reference(), "README spec reference is stale: run `make docs`"


def test_readme_stack_config_example_validates():
    from gpu_platform.load import parse_spec

    configs = [yaml.safe_load(b) for b in _blocks("yaml") if b.startswith("config:")]
    assert configs
    for c in configs:
        parse_spec(c["config"]["gpu-platform:platform"])


def test_readme_catalog_snippet_validates(dev_data):
    from gpu_platform.load import parse_spec

    snippet = next(yaml.safe_load(b) for b in _blocks("yaml") if b.startswith("catalog:"))
    dev_data.update(snippet)
    spec = parse_spec(dev_data)
    assert spec.hardware.instance("p4de.24xlarge").hourly_usd == 19.21


def test_readme_library_snippet_runs_under_mocks(pulumi_mocks):
    code = next(b for b in _blocks("python") if "GpuPlatformArgs(spec=spec)" in b)
    rec = pulumi_mocks.run(lambda: exec(compile(code, "README.md", "exec"), {}))
    assert rec.named("ml").type == "gpu-platform:index:GpuPlatform"


def test_every_documented_command_exists():
    from click.testing import CliRunner
    from gpu_platform.cli import main

    documented = set(re.findall(r"^\| `gpu-platform (\w+)", README, flags=re.M))
    assert documented >= {"validate", "synth", "cost", "preflight", "audit", "plan"}
    for name in documented:
        res = CliRunner().invoke(main, [name, "--help"])
        assert res.exit_code == 0, f"`gpu-platform {name}` is documented but fails: {res.output}"


def test_quick_start_capacity_table_is_what_synth_prints(tmp_path):
    from click.testing import CliRunner
    from gpu_platform.cli import main

    marker = "`make synth` on the dev stack prints the pools' capacity"
    block = README.split(marker, 1)[1].split("```", 2)[1].strip("\n")
    res = CliRunner().invoke(main, ["synth", str(ROOT / "Pulumi.dev.yaml"), "--out", str(tmp_path)])
    assert res.exit_code == 0
    assert res.stdout.startswith(block + "\n"), "README capacity table differs from what synth prints"


def test_component_table_matches_registrations(pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    documented = set(re.findall(r"^\| `\w+` \| `(gpu-platform:[\w:]+)` \|", README, flags=re.M))
    rec = pulumi_mocks.run(lambda: GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec)))
    registered = {r.type for r in rec.resources if r.type.startswith("gpu-platform:")}
    assert registered <= documented
    # the dev stack is on AWS, with managed node groups
    assert documented - registered == {"gpu-platform:index:GkeGpuNodePool",
                                       "gpu-platform:index:KarpenterGpuNodePool"}
    assert rec.named("plat-gpu-operator-release").type == "kubernetes:helm.sh/v3:Release"


def test_readme_eks_program_is_the_example_and_builds_cluster_and_platform(pulumi_mocks):
    """The README's EKS program is examples/eks-and-platform/__main__.py, and it runs: the platform takes the
    cluster's name and the node role as Outputs, waits for the cluster and installs through its provider."""
    import pulumi

    path = ROOT / "examples" / "eks-and-platform" / "__main__.py"
    block = next(b for b in _blocks("python") if "aws.eks.Cluster(" in b)
    assert block == path.read_text(), "README block differs from examples/eks-and-platform/__main__.py"
    # the mocks run every program as project gpu-platform
    pulumi.runtime.set_all_config({"gpu-platform:subnetIds": '["subnet-a", "subnet-b"]'})
    rec = pulumi_mocks.run(lambda: runpy.run_path(str(path), run_name="__main__") and None)
    cluster, ng = rec.named("ml"), rec.named("gpu-h100-ng")
    assert ng.inputs["clusterName"] == "ml-0a1b2c3" and ng.inputs["nodeRoleArn"].endswith(":role/gpu-nodes")
    assert cluster.urn in ng.dependencies and rec.depends_on("gpu-h100-ng", "gpu-nodes-AmazonEKSWorkerNodePolicy")
    provider = f"{rec.named('ml').urn.replace('aws:eks/cluster:Cluster::ml', 'pulumi:providers:kubernetes::ml')}::ml-id"
    assert rec.named("gpu-queues-kueue").provider == provider
    assert rec.named("gpu-observability-opencost").inputs["values"]["opencost"]["exporter"][
        "defaultClusterId"] == "ml-0a1b2c3"
