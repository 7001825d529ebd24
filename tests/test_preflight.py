"""`gpu-platform preflight` against moto: a good account, and each failure (cluster, version, role, subnet, zone)."""

from __future__ import annotations

import boto3
import pytest
import yaml
from click.testing import CliRunner
from moto import mock_aws

from gpu_platform.cli import main
from gpu_platform.load import parse_spec
from gpu_platform.preflight import FAIL, OK, WARN, run_preflight
from helpers.specs import pool

REGION = "us-east-1"


@pytest.fixture
def aws_account(monkeypatch):
    """A moto account with the dev cluster, its node role and subnets in zones that offer p4d and p4de."""
    for k, v in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        ec2 = boto3.client("ec2", region_name=REGION)
        vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        # moto offers p4de.24xlarge in us-east-1b/c only, p4d.24xlarge in a-d.
        subnets = {
            z: ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=f"{REGION}{z}")["Subnet"][
                "SubnetId"
            ]
            for i, z in enumerate("abc")
        }
        role = boto3.client("iam").create_role(RoleName="gpu-nodes", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        boto3.client("eks", region_name=REGION).create_cluster(
            name="ml-dev", version="1.33", roleArn=role, resourcesVpcConfig={"subnetIds": [subnets["b"]]}
        )
        yield {"subnets": subnets, "role": role}


def _spec(dev_data, account, zones="bc", **changes):
    dev_data["aws"] = {
        "region": REGION,
        "nodeRoleArn": account["role"],
        "subnetIds": [account["subnets"][z] for z in zones],
    }
    # gpu-train has EFA and a cluster placement group, which live in one zone: its own subnet there.
    pool(dev_data, "gpu-train")["aws"] = {"subnetIds": [account["subnets"][zones[0]]]}
    dev_data.update(changes)
    return dev_data


def _by(checks, name):
    return [c for c in checks if c.check == name]


def test_good_account_passes(aws_account, dev_data):
    checks = run_preflight(parse_spec(_spec(dev_data, aws_account)))
    assert [c.status for c in checks] == [OK] * len(checks)
    assert [c.check for c in checks[:3]] == ["cluster", "kubernetes version", "node role"]
    assert len(_by(checks, "subnet")) == 2
    assert {c.target for c in _by(checks, "instance offering")} == {
        "gpu-train (p4de.24xlarge)",
        "gpu-infer (p4de.24xlarge)",
        "gpu-dev (p4d.24xlarge)",
        "gpu-ci (p4d.24xlarge)",
    }


def test_efa_counts_match_ec2_efa_info(aws_account, dev_data):
    checks = run_preflight(parse_spec(_spec(dev_data, aws_account)))
    (efa,) = _by(checks, "efa interfaces")  # only the exclusive p4de pool gets EFA by default
    assert efa.target == "gpu-train (p4de.24xlarge)" and efa.status == OK and "4 (EC2 EfaInfo agrees)" in efa.detail


def test_efa_count_disagreeing_with_ec2_fails(aws_account, dev_data, monkeypatch):
    import gpu_platform.nodepools.efa as efa

    monkeypatch.setitem(efa.EFA_INTERFACES, "p4de.24xlarge", 8)
    (check,) = _by(run_preflight(parse_spec(_spec(dev_data, aws_account))), "efa interfaces")
    assert check.status == FAIL and "renders 8 EFA interfaces" in check.detail
    assert "MaximumEfaInterfaces 4" in check.detail


def test_placement_group_pool_across_zones_warns(aws_account, dev_data):
    data = _spec(dev_data, aws_account)
    pool(data, "gpu-train")["aws"] = {"placementGroup": True}  # back to aws.subnetIds: zones b and c
    (check,) = _by(run_preflight(parse_spec(data)), "placement zone")
    assert check.status == WARN and "span us-east-1b, us-east-1c" in check.detail
    pool(data, "gpu-train")["aws"] = {}  # default: no placement group over several subnets
    assert not _by(run_preflight(parse_spec(data)), "placement zone")


def test_missing_cluster_fails(aws_account, dev_data):
    checks = run_preflight(parse_spec(_spec(dev_data, aws_account, clusterName="ml-missing")))
    (cluster,) = _by(checks, "cluster")
    assert cluster.status == FAIL and "'ml-missing' not found" in cluster.detail
    assert not _by(checks, "kubernetes version")


def test_version_mismatch_fails(aws_account, dev_data):
    checks = run_preflight(parse_spec(_spec(dev_data, aws_account, kubernetesVersion="1.34")))
    (version,) = _by(checks, "kubernetes version")
    assert version.status == FAIL and "cluster runs 1.33" in version.detail and "'1.34'" in version.detail


def test_missing_node_role_fails(aws_account, dev_data):
    data = _spec(dev_data, aws_account)
    data["aws"]["nodeRoleArn"] = "arn:aws:iam::123456789012:role/nope"
    (role,) = _by(run_preflight(parse_spec(data)), "node role")
    assert role.status == FAIL and "'nope' not found" in role.detail


def test_instance_type_not_offered_in_a_subnet_zone_fails(aws_account, dev_data):
    # p4de.24xlarge is not offered in us-east-1a; p4d.24xlarge is.
    checks = run_preflight(parse_spec(_spec(dev_data, aws_account, zones="ab")))
    offer = {c.target: c for c in _by(checks, "instance offering")}
    assert offer["gpu-train (p4de.24xlarge)"].status == FAIL
    assert "not offered in us-east-1a" in offer["gpu-train (p4de.24xlarge)"].detail
    assert offer["gpu-dev (p4d.24xlarge)"].status == OK


def test_missing_subnet_fails_and_names_it(aws_account, dev_data):
    data = _spec(dev_data, aws_account)
    pool(data, "gpu-train")["aws"] = {"subnetIds": ["subnet-0123456789abcdef0"], "placementGroup": False}
    checks = run_preflight(parse_spec(data))
    missing = [c for c in _by(checks, "subnet") if c.status == FAIL]
    assert [c.target for c in missing] == ["subnet-0123456789abcdef0"]
    offer = {c.target: c for c in _by(checks, "instance offering")}
    assert offer["gpu-train (p4de.24xlarge)"].status == FAIL
    assert offer["gpu-infer (p4de.24xlarge)"].status == OK


def test_cli_table_and_exit_codes(aws_account, dev_data, tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(_spec(dev_data, aws_account)))
    result = CliRunner().invoke(main, ["preflight", str(good)])
    assert result.exit_code == 0, result.output
    assert "preflight passed" in result.output and "instance offering" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**_spec(dev_data, aws_account, zones="a")}))
    result = CliRunner().invoke(main, ["preflight", str(bad)])
    assert result.exit_code == 1
    assert "FAIL" in result.output and "not offered in us-east-1a" in result.output


def test_cli_rejects_gcp_spec(tmp_path):
    from helpers.specs import gke_data

    f = tmp_path / "gke.yaml"
    f.write_text(yaml.safe_dump(gke_data("gpu-operator")))
    result = CliRunner().invoke(main, ["preflight", str(f)])
    assert result.exit_code == 1 and "checks AWS accounts" in result.output
