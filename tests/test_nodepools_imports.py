"""Cloud SDKs load only for their cloud: an AWS spec never imports pulumi_gcp, a GKE spec never pulumi_aws/boto3."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conftest import ROOT
from helpers.specs import gke_data

_PROGRAM = textwrap.dedent("""
    import json, sys
    import pulumi
    from gpu_platform.load import parse_spec
    from gpu_platform.synth import render_all
    from gpu_platform.platform import GpuPlatform, GpuPlatformArgs

    spec = parse_spec(json.loads(sys.argv[1]))
    render_all(spec)

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args):
            return f"{args.name}-id", dict(args.inputs)
        def call(self, args):
            return {}

    pulumi.runtime.set_mocks(Mocks(), preview=False)

    @pulumi.runtime.test
    def build():
        platform = GpuPlatform("plat", GpuPlatformArgs(spec=spec))
        return pulumi.Output.all(*[p.urn for p in platform.node_pools])

    build()
    print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in
                            ("pulumi_aws", "pulumi_gcp", "boto3"))))
""")


def _loaded(data: dict) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROGRAM, json.dumps(data)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {m.split(".")[0] for m in json.loads(proc.stdout.strip().splitlines()[-1])}


def test_aws_spec_never_imports_gcp(dev_data):
    assert _loaded(dev_data) == {"pulumi_aws"}


def test_gcp_spec_never_imports_aws_or_boto3():
    assert _loaded(gke_data()) == {"pulumi_gcp"}
