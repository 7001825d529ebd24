"""`validate`, `synth` and the package imports are offline and cheap: they import no Pulumi SDK, cloud SDK or solver
(scipy, highspy) at all."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

# Printed last by each program below: the heavy top-level packages it loaded.
_HEAVY_LOADED = """
heavy = ("pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_kubernetes", "pulumi_policy", "boto3", "scipy", "highspy",
         "grpc")
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
"""

_PROGRAM = (
    """
import json, sys
from gpu_platform.load import load_spec
from gpu_platform.synth import render_all
from gpu_platform.validation import check_spec
spec = load_spec(sys.argv[1]); check_spec(spec); render_all(spec)
"""
    + _HEAVY_LOADED
)


@pytest.mark.parametrize("spec", ["Pulumi.dev.yaml", "examples/aws-1000-a100.yaml", "examples/gke-a2.yaml"])
def test_validate_and_synth_import_no_sdk(spec):
    out = subprocess.run(
        [sys.executable, "-c", _PROGRAM, str(ROOT / spec)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    loaded = json.loads(out)
    assert loaded == [], f"validate and synth of {spec} load {', '.join(loaded)}: import it only where it is needed"


# The package root and every domain package: importing one loads no Pulumi SDK, cloud SDK or solver; components
# import their SDK when first used, the planner its solver when `plan` runs.
@pytest.mark.parametrize(
    "package",
    [
        "gpu_platform",
        "gpu_platform.nodepools",
        "gpu_platform.gpu_operator",
        "gpu_platform.queues",
        "gpu_platform.admission",
        "gpu_platform.observability",
        "gpu_platform.autoscaling",
        "gpu_platform.policy",
        "gpu_platform.explain",
        "gpu_platform.provider",
        "gpu_platform.planner",
        "gpu_platform.cli",
    ],
)
def test_package_import_loads_nothing_heavy(package):
    program = f"import json, sys\nimport {package}\n" + _HEAVY_LOADED
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60).stdout
    loaded = json.loads(out)
    assert loaded == [], (
        f"`import {package}` loads {', '.join(loaded)}: import it inside the function or component that needs it "
        "(or behind the package's lazy __getattr__), not at module level"
    )


def test_the_heavy_import_check_sees_an_sdk_when_one_is_loaded():
    """The same check on a module that does import the Pulumi SDK reports it (the check above can fail)."""
    program = "import json, sys\nimport gpu_platform.platform\n" + _HEAVY_LOADED
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60).stdout
    assert "pulumi" in json.loads(out)


# Import names of the packages only the dev extra brings (pyproject [project.optional-dependencies] dev).
_DEV_ONLY = (
    "pulumi_aws",
    "pulumi_gcp",
    "boto3",
    "botocore",
    "pytest",
    "hypothesis",
    "moto",
    "jsonschema",
    "kubernetes_validate",
    "mkdocs",
)

_BLOCKED_CLI = """
import sys
from importlib.abc import MetaPathFinder
blocked = set(sys.argv[1].split(","))
class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"{name} is not in the runtime install")
sys.meta_path.insert(0, Block())
from gpu_platform.cli import main
sys.argv = ["gpu-platform", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize(
    "command",
    [["synth", "Pulumi.dev.yaml", "--out", "OUT"], ["validate", "Pulumi.dev.yaml"], ["cost", "Pulumi.dev.yaml"]],
)
def test_make_synth_needs_only_the_runtime_install(command, tmp_path):
    """`make synth` installs the package without extras: synth, validate and cost run with no dev package at all."""
    args = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    res = subprocess.run(
        [sys.executable, "-c", _BLOCKED_CLI, ",".join(_DEV_ONLY), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-2000:]


def test_makefile_installs_runtime_for_synth_and_dev_for_test():
    import re

    make = (ROOT / "Makefile").read_text()
    deps = dict(re.findall(r"^([\w.$()/-]+):[ \t]*([^\n#]*)", make, flags=re.M))
    assert deps["synth"].split() == ["$(VENV)/.runtime"]
    assert deps["test"].split() == ["$(VENV)/.dev", "lint"]  # CI runs `make test`, so it lints first
    assert deps["lint"].split() == ["$(VENV)/.dev"]
    runtime = make.split("$(VENV)/.runtime: pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "pip install --quiet -e .\n" in runtime and "[" not in runtime  # no extras for rendering


@pytest.mark.parametrize(("module", "package", "extra"), [("aws", "pulumi_aws", "aws"), ("gcp", "pulumi_gcp", "gcp")])
def test_a_missing_cloud_extra_is_named_with_the_install_command(module, package, extra):
    # Without the extra, GpuPlatform on that cloud ended in a bare ModuleNotFoundError from deep in the package.
    code = (
        f"import sys; sys.modules[{package!r}] = None\n"
        "from gpu_platform.errors import MissingExtraError\n"
        f"try:\n    import gpu_platform.nodepools.{module}\n"
        "except MissingExtraError as e:\n    print(e)\n    assert isinstance(e, ImportError)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"need {package}" in proc.stdout and f"pip install 'gpu-platform[{extra}]'" in proc.stdout, proc.stdout
