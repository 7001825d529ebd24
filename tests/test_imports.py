"""`validate` and `synth` are offline and cheap: they import no Pulumi SDK, cloud SDK or solver (scipy, highspy) at all."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

_PROGRAM = """
import json, sys
from gpu_platform.load import load_spec
from gpu_platform.synth import render_all
from gpu_platform.validation import check_spec
spec = load_spec(sys.argv[1]); check_spec(spec); render_all(spec)
heavy = ("pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_kubernetes", "pulumi_policy", "boto3", "scipy", "highspy", "grpc")
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
"""


@pytest.mark.parametrize("spec", ["Pulumi.dev.yaml", "examples/aws-1000-a100.yaml", "examples/gke-a2.yaml"])
def test_validate_and_synth_import_no_sdk(spec):
    out = subprocess.run([sys.executable, "-c", _PROGRAM, str(ROOT / spec)], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert json.loads(out) == []
