"""Hostile inputs: every case of tests/fixtures/hostile/{spec,demand,audit} fails cleanly (exit 1, the reason on
stderr, no traceback), quickly and within memory, through every command that reads it."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import DEV_STACK, ROOT
from gpu_platform.cli import main
from helpers.specs import pool

HOSTILE = Path(__file__).parent / "fixtures" / "hostile"
SPEC_CASES = yaml.safe_load((HOSTILE / "spec" / "expected.yaml").read_text())
DEMAND_CASES = yaml.safe_load((HOSTILE / "demand" / "expected.yaml").read_text())["cases"]
AUDIT_CASES = yaml.safe_load((HOSTILE / "audit" / "expected.yaml").read_text())
SPEC_COMMANDS = {
    "validate": lambda f, tmp: ["validate", f],
    "synth": lambda f, tmp: ["synth", f, "--out", str(tmp / "out")],
    "cost": lambda f, tmp: ["cost", f],
    "preflight": lambda f, tmp: ["preflight", f],
    "audit --spec": lambda f, tmp: ["audit", str(HOSTILE / "audit" / "valid-empty-export.json"), "--spec", f],
}


@pytest.fixture
def runner():
    return CliRunner()


def _clean_failure(result, fragment: str) -> None:
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert fragment in " ".join(result.stderr.split()), result.stderr


def _generated(name: str, tmp: Path) -> Path:
    path = tmp / name
    if name == "deep-flow.yaml":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif name == "huge-17mb.yaml":
        path.write_text('x: "' + "a" * (17 * 1024 * 1024) + '"\n')
    elif name == "huge-int.yaml":
        path.write_text(DEV_STACK.read_text().replace("maxSize: 16", "maxSize: " + "9" * 5000, 1))
    elif name.startswith("cluster-name-"):
        size = {"cluster-name-3mb.yaml": 3, "cluster-name-50mb.yaml": 50}[name] * 1024 * 1024
        dev = (HOSTILE / "spec" / "cluster-name-traversal.yaml").read_text()
        path.write_text(dev.replace("clusterName: ../../../etc", "clusterName: " + "a" * size))
    return path


SPEC_FILES = [(n, e) for n, e in sorted(SPEC_CASES["cases"].items())] + [
    (n, g["expect"]) for n, g in sorted(SPEC_CASES["generated"].items())
]

# A hang guard, not a speed test: the time each command takes is measured in benchmarks/bench_hostile.py
# (goal: under 10 s). A hang (the alias bomb before the limits) ran for minutes.
HANG_S = 60


@pytest.mark.parametrize("command", sorted(SPEC_COMMANDS))
@pytest.mark.parametrize(("name", "fragment"), SPEC_FILES, ids=[n for n, _ in SPEC_FILES])
def test_hostile_spec_fails_cleanly_in_every_command(runner, tmp_path, command, name, fragment):
    path = HOSTILE / "spec" / name if name in SPEC_CASES["cases"] else _generated(name, tmp_path)
    start = time.perf_counter()
    result = runner.invoke(main, SPEC_COMMANDS[command](str(path), tmp_path))
    assert time.perf_counter() - start < HANG_S
    _clean_failure(result, fragment)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("name", "fragment"), sorted(DEMAND_CASES.items()))
def test_hostile_demand_fails_cleanly(runner, name, fragment):
    start = time.perf_counter()
    result = runner.invoke(main, ["plan", str(HOSTILE / "demand" / name)])
    assert time.perf_counter() - start < HANG_S
    _clean_failure(result, fragment)


@pytest.mark.parametrize(("name", "fragment"), sorted(AUDIT_CASES["documents"].items()))
def test_audit_rejects_what_it_cannot_parse(runner, name, fragment):
    _clean_failure(runner.invoke(main, ["audit", str(HOSTILE / "audit" / name)]), fragment)


@pytest.mark.parametrize(("name", "fragment"), sorted(AUDIT_CASES["configs"].items()))
def test_audit_rejects_a_bad_pack_config(runner, name, fragment):
    args = ["audit", str(HOSTILE / "audit" / "valid-empty-export.json"), "--config", str(HOSTILE / "audit" / name)]
    _clean_failure(runner.invoke(main, args), fragment)


def test_an_empty_export_with_a_manifest_still_passes(runner):
    result = runner.invoke(main, ["audit", str(HOSTILE / "audit" / "valid-empty-export.json")])
    assert result.exit_code == 0 and "0 resources" in result.output


def _limited(max_bytes: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))

    return apply


@pytest.mark.parametrize("name", ["alias-bomb.yaml", "alias-bomb-in-spec.yaml", "deep-flow.yaml"])
@pytest.mark.parametrize("command", ["validate", "synth"])
def test_hostile_spec_in_a_real_process_stays_within_1_gb_and_does_not_hang(tmp_path, name, command):
    path = HOSTILE / "spec" / name if name in SPEC_CASES["cases"] else _generated(name, tmp_path)
    args = SPEC_COMMANDS[command](str(path), tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", *args],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        preexec_fn=_limited(1 << 30),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "components")},
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "error" in proc.stderr


def test_library_models_reject_a_path_traversing_pool_name(dev_data):
    from pydantic import ValidationError

    from gpu_platform.spec import NodePool, PlatformSpec

    with pytest.raises(ValidationError, match="is not a valid name"):
        NodePool.model_validate(
            {"name": "../../x", "instanceType": "p4d.24xlarge", "sharing": {"mode": "exclusive"}, "maxSize": 1}
        )
    pool(dev_data, "gpu-train")["name"] = "../../x"
    with pytest.raises(ValidationError):
        PlatformSpec.model_validate(dev_data)


def test_an_artifact_named_outside_the_output_directory_is_never_written(tmp_path):
    from gpu_platform.artifacts import Artifact
    from gpu_platform.errors import RenderError
    from gpu_platform.synth import write_artifacts

    out = tmp_path / "out"
    for name in ("../../x", "/etc/passwd", "..", ".hidden", "a/b/c", "a/../b", "x\x00y", "a//b"):
        with pytest.raises(RenderError, match="not a safe file name"):
            write_artifacts([Artifact("nodepools", name, ({"a": 1},))], out)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    write_artifacts([Artifact("nodepools", "addons/driver", ({"a": 1},))], out)  # one subdirectory is allowed
    assert (out / "nodepools" / "addons" / "driver.yaml").exists()
    write_artifacts([Artifact("nodepools", "addons/driver", ({"a": 2},))], out)  # and is ours on the next run


def test_a_crafted_earlier_render_does_not_hang_synth(runner, tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)]).exit_code == 0
    bomb = (HOSTILE / "spec" / "alias-bomb.yaml").read_text()
    (out / "nodepools" / "gpu-train.yaml").write_text(bomb)  # the name synth wrote, hand-edited
    start = time.perf_counter()
    result = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)])
    assert result.exit_code == 0 and time.perf_counter() - start < HANG_S
    assert "name: gpu-train" in (out / "nodepools" / "gpu-train.yaml").read_text()


def _export_of(states: list) -> str:
    import json

    return json.dumps({"version": 3, "deployment": {"manifest": {}, "resources": states}})


def test_audit_refuses_more_resources_than_it_checks_in_time(runner, tmp_path):
    from gpu_platform.audit import MAX_AUDIT_RESOURCES

    doc = tmp_path / "many.json"
    doc.write_text(_export_of([{"type": "a:b:C", "urn": f"u{i}"} for i in range(MAX_AUDIT_RESOURCES + 1)]))
    _clean_failure(
        runner.invoke(main, ["audit", str(doc)]),
        f"deployment.resources holds {MAX_AUDIT_RESOURCES + 1:,} entries, more than the {MAX_AUDIT_RESOURCES:,}",
    )
    doc.write_text(_export_of([{"type": "a:b:C", "urn": f"u{i}"} for i in range(MAX_AUDIT_RESOURCES)]))
    assert runner.invoke(main, ["audit", str(doc)]).exit_code == 0


def test_audit_refuses_a_document_of_millions_of_empty_objects_before_parsing(runner, tmp_path):
    from gpu_platform.inputs import MAX_DOCUMENT_CONTAINERS

    doc = tmp_path / "objects.json"
    doc.write_text('{"deployment": {"manifest": {}, "x": [' + ",".join(["{}"] * (MAX_DOCUMENT_CONTAINERS + 1)) + "]}}")
    _clean_failure(
        runner.invoke(main, ["audit", str(doc)]),
        f"JSON objects and arrays; allowed: at most {MAX_DOCUMENT_CONTAINERS:,}",
    )


def test_the_platform_component_revalidates_models_built_around_the_validators(dev_spec):
    """`model_copy(update=...)` and `model_construct` skip pydantic's validators; the component checks again."""
    from gpu_platform.errors import SpecError
    from gpu_platform.load import revalidate
    from gpu_platform.spec import PlatformSpec

    pool = dev_spec.node_pools[0].model_copy(update={"name": "../../x"})
    copied = dev_spec.model_copy(update={"node_pools": [pool, *dev_spec.node_pools[1:]]})
    with pytest.raises(SpecError, match="is not a valid name"):
        revalidate(copied)
    built = PlatformSpec.model_construct(**{**dict(dev_spec), "cluster_name": "../../etc"})
    with pytest.raises(SpecError, match="is not a cluster name"):
        revalidate(built)
    assert revalidate(dev_spec) == dev_spec


def test_the_platform_component_refuses_a_copied_model_with_a_bad_name(pulumi_mocks, dev_spec):
    from gpu_platform.errors import SpecError
    from gpu_platform.platform import GpuPlatform, GpuPlatformArgs

    pool = dev_spec.node_pools[0].model_copy(update={"name": "../../x"})
    copied = dev_spec.model_copy(update={"node_pools": [pool, *dev_spec.node_pools[1:]]})
    with pytest.raises(SpecError, match="is not a valid name"):
        pulumi_mocks.run(lambda: GpuPlatform("p", GpuPlatformArgs(spec=copied)))


@pytest.mark.parametrize(
    ("pods", "containers", "fragment"),
    [
        (1, 3_000, "3,000 containers in its pod specs; allowed: at most 100"),  # 18,000 values: under the cap
        (26, 1, "26 pod specs; allowed: at most 25"),
    ],
)
def test_explain_refuses_more_pods_and_containers_than_it_evaluates_in_time(
    runner, tmp_path, pods, containers, fragment
):
    """Celpy evaluates the admission CEL per pod spec and container: 14,000 containers (1.7 MB) took 58 s."""
    import json

    docs = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}"},
            "spec": {
                "containers": [
                    {"name": f"c{j}", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}
                    for j in range(containers)
                ]
            },
        }
        for i in range(pods)
    ]
    manifest = tmp_path / "pods.yaml"
    manifest.write_text("\n---\n".join(json.dumps(d) for d in docs))
    result = runner.invoke(main, ["explain", str(manifest), "--spec", str(DEV_STACK)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert fragment in result.stderr, result.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_explain_reads_a_workload_of_unknown_size_only_up_to_its_limit(tmp_path):
    """A device or pipe reports size 0: explain read /dev/zero until the kernel killed it."""
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", "explain", "/dev/zero", "--spec", str(DEV_STACK)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        preexec_fn=_limited(1 << 30),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "components")},
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "/dev/zero is larger than 2 MiB; allowed: at most 2,097,152 bytes" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        (
            {"volumes": [{"name": f"v{i}", "hostPath": {"path": f"/data/{i}"}} for i in range(1_001)]},
            "1,001 volumes, tolerations, resource claims and container env, envFrom and volumeMounts entries",
        ),
        (
            {
                "tolerations": [{"key": f"k{i}", "operator": "Exists"} for i in range(600)],
                "containers": [
                    {"name": "m", "image": "x", "env": [{"name": f"E{i}", "value": "x"} for i in range(600)]}
                ],
            },
            "1,200 volumes, tolerations",
        ),
        (
            {"volumes": [{"name": "deep", "hostPath": {"path": "/a" * 2_049}}]},
            "volume 'deep' has a hostPath of 4,098 characters; allowed: at most 4,096 (PATH_MAX)",
        ),
    ],
)
def test_explain_refuses_more_pod_entries_than_its_cel_walks_in_time(runner, tmp_path, spec, fragment):
    """The deny walks every volume, toleration and env entry, and splits each hostPath: 30,000 volumes in a
    1.6 MB pod, or one path of 900,000 segments, ran for minutes."""
    import json

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "m", "image": "x"}], **spec},
    }
    manifest = tmp_path / "pod.json"
    manifest.write_text(json.dumps(pod))
    result = runner.invoke(main, ["explain", str(manifest), "--spec", str(DEV_STACK)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert fragment in result.stderr, result.stderr
