"""The node pools page: the example is the real rendering, and every node pool option is documented."""

from __future__ import annotations

import re

import pytest
import yaml

from gpu_platform.nodepools.render import render_node_pool
from gpu_platform.spec import NodePool, NodePoolAws, NodePoolGcp
from helpers.docs import section as doc_section


@pytest.fixture(scope="module")
def section() -> str:
    return doc_section("nodepools")


def test_example_is_the_dev_stack_rendering(section, dev_spec):
    block = section.split("<!-- nodepools-example -->", 1)[1].split("<!-- /nodepools-example -->", 1)[0]
    shown = yaml.safe_load(re.search(r"```yaml\n(.*?)```", block, flags=re.S).group(1))
    doc = render_node_pool(dev_spec, dev_spec.pools_by_name["gpu-infer"])
    doc["resources"] = [r for r in doc["resources"] if r["role"] == "lt"]
    del doc["capacity"]["units"]
    assert shown == doc


@pytest.mark.parametrize(("model", "prefix"), [(NodePool, ""), (NodePoolAws, "aws."), (NodePoolGcp, "gcp.")])
def test_every_option_is_documented(section, model, prefix):
    rows = "\n".join(line for line in section.splitlines() if line.startswith("| `"))
    documented = set(re.findall(r"`([a-zA-Z.]+)`", rows))
    documented |= {f"{prefix}{name}" for name in re.findall(r", `([a-zA-Z]+)`", rows)}
    for name, field in model.model_fields.items():
        alias = prefix + (field.alias or name)
        if prefix == "" and alias in ("aws", "gcp"):
            continue
        assert alias in documented, f"{alias} is not in the node pools page options table"
