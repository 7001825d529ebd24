"""The product as people get it: the wheel installed with each extra in a fresh venv, and the policy pack
installed and run from a copy of `policies/` alone (what `pulumi policy publish` uploads)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from gpu_platform.policy.analyzer import PackProcess
from gpu_platform.policy.resources import StackResource

pytestmark = pytest.mark.install


def _run(*cmd, cwd=None, timeout=900):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheels")
    built = _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, ROOT)
    assert built.returncode == 0, built.stderr
    [wheel] = out.glob("gpu_platform-*.whl")
    return wheel


def test_the_wheel_carries_the_license_it_declares(wheels):
    with zipfile.ZipFile(wheels) as whl:
        names = whl.namelist()
        [license_file] = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        meta = whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert "Apache License" in whl.read(license_file).decode()
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta


def _venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(path)
    return path / "bin"


@pytest.fixture(scope="module")
def pack(tmp_path_factory, wheels):
    """A copy of policies/ with the wheel in wheels/, installed into a fresh venv from its requirements alone."""
    pack = tmp_path_factory.mktemp("pack") / "policies"
    shutil.copytree(ROOT / "policies", pack, ignore=shutil.ignore_patterns("venv", "wheels", "__pycache__"))
    (pack / "wheels").mkdir()
    shutil.copy(wheels, pack / "wheels")
    bin_ = _venv(pack / "venv")
    done = _run(bin_ / "pip", "install", "--quiet", "-r", "requirements.txt", cwd=pack)
    assert done.returncode == 0, done.stderr[-3000:]
    return pack, bin_


def test_the_pack_installs_from_its_folder_and_runs_over_grpc(pack):
    folder, bin_ = pack
    pod = StackResource(
        "kubernetes:core/v1:Pod",
        "urn:pod:p",
        "p",
        {
            "metadata": {"name": "p", "labels": {}},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
        },
    )
    with PackProcess(folder, timeout=120, python=bin_ / "python") as p:
        assert {x.name for x in p.info().policies} >= {"gpu-node-pool-classified", "gpu-workload-classified"}
        [diag] = p.analyze(pod).diagnostics
        assert diag.policyName == "gpu-workload-classified"


def test_the_core_install_has_a_working_cli_without_cloud_sdks(pack):
    _, bin_ = pack  # the pack's venv holds gpu-platform without extras
    assert _run(bin_ / "python", "-c", "import boto3").returncode != 0, "boto3 must not come with the core install"
    helped = _run(bin_ / "gpu-platform", "--help")
    assert helped.returncode == 0 and "preflight" in helped.stdout, helped.stderr
    assert _run(bin_ / "gpu-platform", "validate", ROOT / "Pulumi.dev.yaml").returncode == 0
    explained = _run(
        bin_ / "gpu-platform",
        "explain",
        ROOT / "examples/workloads/inference-job.yaml",
        "--spec",
        ROOT / "Pulumi.dev.yaml",
        "--namespace",
        "prod-inference",
    )  # cel-python and jsonpatch come along
    assert explained.returncode == 0 and "runs on gpu-infer" in explained.stdout, explained.stderr
    missing = _run(bin_ / "gpu-platform", "preflight", ROOT / "Pulumi.dev.yaml")
    assert missing.returncode == 2 and "pip install 'gpu-platform[aws]'" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.parametrize(("extra", "example"), [("aws", "Pulumi.dev.yaml"), ("gcp", "examples/gke-a2.yaml")])
def test_each_cloud_extra_installs_and_runs(tmp_path, wheels, extra, example):
    bin_ = _venv(tmp_path / "venv")
    done = _run(bin_ / "pip", "install", "--quiet", "--find-links", wheels.parent, f"gpu-platform[{extra}]")
    assert done.returncode == 0, done.stderr[-3000:]
    helped = _run(bin_ / "gpu-platform", "--help")
    assert helped.returncode == 0 and "Traceback" not in helped.stderr, helped.stderr
    assert _run(bin_ / "gpu-platform", "validate", ROOT / example).returncode == 0
    sdk = {"aws": "pulumi_aws", "gcp": "pulumi_gcp"}[extra]
    assert _run(bin_ / "python", "-c", f"import {sdk}").returncode == 0
    served = _run(bin_ / "python", "-m", "gpu_platform.provider.schema")  # the component package, as installed
    assert served.returncode == 0 and served.stdout == (ROOT / "schema.json").read_text(), served.stderr[-3000:]
