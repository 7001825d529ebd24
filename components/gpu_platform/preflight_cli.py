"""The `gpu-platform preflight` command. boto3 comes with the `aws` extra: this module imports it only when the
command runs, so `gpu-platform --help` works in every install."""

from __future__ import annotations

import sys

import click
from rich.markup import escape

from .console import err, load_or_fail, out, print_findings, print_table
from .errors import Severity
from .spec import Cloud

__all__ = ["preflight"]


@click.command("preflight")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--profile", default=None, help="AWS profile (default: the standard credential chain).")
def preflight(file: str, profile: str | None) -> None:
    """Check the AWS account for FILE: cluster and version, node role, subnets, instance offerings per zone."""
    spec, findings = load_or_fail(file)
    if any(f.severity == Severity.ERROR for f in findings):
        print_findings(findings)
        sys.exit(1)
    if spec.cloud != Cloud.AWS:
        err.print(f"[red]error:[/] preflight checks AWS accounts; {escape(file)} has cloud {spec.cloud.value!r}")
        sys.exit(1)
    try:
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError

        from .preflight import FAIL, preflight_table, run_preflight
    except ImportError as e:
        err.print(
            f"[red]error:[/] preflight needs boto3 ({e.name} is not installed): "
            + escape("pip install 'gpu-platform[aws]'")
        )
        sys.exit(2)
    try:
        region = spec.aws.region if spec.aws else None  # validation requires aws on an AWS spec
        checks = run_preflight(spec, boto3.session.Session(profile_name=profile, region_name=region))
    except (ClientError, BotoCoreError) as e:
        err.print(f"[red]error:[/] AWS call failed: {escape(str(e))}")
        sys.exit(1)
    print_table(preflight_table(spec, checks))
    failed = [c for c in checks if c.status == FAIL]
    if failed:
        err.print(f"[red]preflight failed[/]: {len(failed)} of {len(checks)} checks")
        sys.exit(1)
    out.print(f"[green]preflight passed[/]: {len(checks)} checks")
