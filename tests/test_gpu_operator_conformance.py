"""GPU Operator conformance: values keys against the v26.7.0 chart, configs against models of the upstream formats.

The pydantic models below are written from facts.md section 2 (k8s-device-plugin `api/config/v1`) and section 3
(mig-parted `api/spec/v1`); they live in the tests so the product never carries a hand-kept copy of upstream schemas.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpu_platform.catalog import layout_fits
from gpu_platform.contract import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    MIG_CONFIG_LABEL,
    pool_labels,
)
from gpu_platform.gpu_operator.mig import MIG_CONFIG_KEY
from gpu_platform.gpu_operator.render import operator_node_labels, render_gpu_operator
from gpu_platform.load import parse_spec
from helpers.specs import dev_fleet_on_gke, without_mig, without_mps

# Keys whose value is user data (a map of names, or a list), not more chart keys: the walk stops there.
MAP_VALUED_KEYS = {"additionalLabels", "data", "tolerations", "env", "labels", "annotations"}
# Keys the v26.7.0 values file documents only in a comment, each with the ClusterPolicy CRD path backing it
# (None: chart-only key read by the chart template, not copied into the ClusterPolicy).
COMMENTED_KEYS = {
    "dcgmExporter.config": "dcgmExporter.config",
    "dcgmExporter.config.name": "dcgmExporter.config.name",
    "dcgmExporter.config.create": None,
    "dcgmExporter.podLabelAllowlistRegex": "dcgmExporter.podLabelAllowlistRegex",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class DpResource(_Strict):
    name: str = Field(pattern=r"^nvidia\.com/(gpu|mig-\d+g\.\d+gb(\+me)?)$", max_length=63)
    replicas: int = Field(ge=2)


class DpShared(_Strict):
    renameByDefault: bool = False
    failRequestsGreaterThanOne: bool | None = None
    resources: list[DpResource] = Field(min_length=1)


class DpSharing(_Strict):
    timeSlicing: DpShared | None = None
    mps: DpShared | None = None

    @model_validator(mode="after")
    def _one(self):
        assert not (self.timeSlicing and self.mps), "time-slicing and MPS are mutually exclusive"
        return self


class DpFlags(_Strict):
    migStrategy: Literal["none", "single", "mixed"] = "none"
    failOnInitError: bool | None = None
    mpsRoot: str | None = None
    nvidiaDriverRoot: str | None = None
    plugin: dict[str, Any] | None = None


class DevicePluginConfig(_Strict):
    version: Literal["v1"]
    flags: DpFlags = DpFlags()
    sharing: DpSharing | None = None

    @model_validator(mode="after")
    def _rules(self):
        mps = self.sharing.mps if self.sharing else None
        ts = self.sharing.timeSlicing if self.sharing else None
        if mps:
            assert self.flags.migStrategy != "mixed", "MPS with migStrategy mixed is rejected"
            assert self.flags.mpsRoot, "MPS requires mpsRoot"
            assert all(r.name == "nvidia.com/gpu" and r.replicas <= 48 for r in mps.resources), "MPS: whole GPUs, <= 48"
        if ts and any(r.name.startswith("nvidia.com/mig-") for r in ts.resources):
            assert self.flags.migStrategy == "mixed", "mig-<profile> resources only exist with the mixed strategy"
        return self


class MigItem(_Strict):
    device_filter: str | list[str] | None = Field(default=None, alias="device-filter")
    devices: Literal["all"] | list[int]
    mig_enabled: bool = Field(alias="mig-enabled")
    mig_devices: dict[str, int] = Field(default_factory=dict, alias="mig-devices")

    @model_validator(mode="after")
    def _rules(self):
        if self.mig_enabled:
            assert all(n >= 0 for n in self.mig_devices.values()) and any(self.mig_devices.values())
        else:
            assert not self.mig_devices, "mig-devices must be empty when mig-enabled is false"
        return self


class MigPartedConfig(_Strict):
    version: Literal["v1"]
    mig_configs: dict[str, list[MigItem]] = Field(alias="mig-configs", min_length=1)

    @model_validator(mode="after")
    def _non_empty(self):
        assert all(self.mig_configs.values()), "every mig-config has at least one item"
        return self


SPECS = {
    "dev": lambda d: d,
    "mig-no-mps": without_mps,
    "no-mig": without_mig,
    "gke-operator": dev_fleet_on_gke,
}


@pytest.fixture(params=sorted(SPECS))
def any_spec(request, dev_data):
    return parse_spec(SPECS[request.param](dev_data))


def _paths(values: dict, prefix: str = ""):
    for key, value in values.items():
        path = f"{prefix}{key}"
        yield path, value
        if isinstance(value, dict) and key not in MAP_VALUED_KEYS:
            yield from _paths(value, f"{path}.")


def _lookup(tree: Any, path: str) -> tuple[bool, Any]:
    for part in path.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False, None
        tree = tree[part]
    return True, tree


@pytest.fixture(scope="module")
def upstream_values(reference):
    path = reference("upstream", "gpu-operator-values-v26.7.0.yaml")
    return yaml.safe_load(path.read_text()), path.read_text()


@pytest.fixture(scope="module")
def cluster_policy_spec(reference):
    crd = yaml.safe_load(reference("crds", "gpu-operator", "nvidia.com_clusterpolicies.yaml").read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


def test_every_values_key_exists_upstream(any_spec, upstream_values):
    values, _ = upstream_values
    rendered = render_gpu_operator(any_spec).release["values"]
    for path, value in _paths(rendered):
        found, upstream = _lookup(values, path)
        if not found:
            assert path in COMMENTED_KEYS, f"{path} is not a key of gpu-operator v26.7.0 values"
            continue
        if upstream is not None and not isinstance(upstream, dict):
            assert isinstance(value, type(upstream)), f"{path}: {type(value).__name__} vs upstream {upstream!r}"


def test_commented_keys_are_documented_upstream_and_in_the_crd(upstream_values, cluster_policy_spec):
    _, text = upstream_values
    for path, crd_path in COMMENTED_KEYS.items():
        leaf = path.rsplit(".", 1)[-1]
        assert re.search(rf"^\s*#\s*{re.escape(leaf)}:", text, re.M), f"{path} not in the values file's comments"
        if crd_path:
            node = cluster_policy_spec
            for part in crd_path.split("."):
                node = node["properties"][part]
            assert node


def test_mig_strategy_is_a_crd_value_or_unset(any_spec, cluster_policy_spec):
    strategy = render_gpu_operator(any_spec).release["values"]["mig"]["strategy"]
    assert strategy == "" or strategy in cluster_policy_spec["properties"]["mig"]["properties"]["strategy"]["enum"]


def test_mig_manager_default_is_in_the_crd_enum(dev_spec, cluster_policy_spec):
    enum = cluster_policy_spec["properties"]["migManager"]["properties"]["config"]["properties"]["default"]["enum"]
    assert render_gpu_operator(dev_spec).release["values"]["migManager"]["config"]["default"] in enum


def _configmap(render, prefix: str) -> dict:
    (cm,) = [d for d in render.documents if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith(prefix)]
    return cm


def test_device_plugin_configmap_entries_validate(any_spec):
    cm = _configmap(render_gpu_operator(any_spec), "device-plugin-config-")
    for key, text in cm["data"].items():
        assert DevicePluginConfig.model_validate(yaml.safe_load(text)).version == "v1", key


def test_mig_parted_configmap_validates_and_layouts_fit(any_spec, reference):
    r = render_gpu_operator(any_spec)
    if not any(p.sharing.mode.value == "mig" for p in any_spec.node_pools):
        assert r.mig_parted_config is None and not any("mig-parted" in d["metadata"]["name"] for d in r.documents)
        return
    cm = _configmap(r, "mig-parted-config-")
    assert list(cm["data"]) == [MIG_CONFIG_KEY]
    cfg = MigPartedConfig.model_validate(yaml.safe_load(cm["data"][MIG_CONFIG_KEY]))
    upstream_ids = reference("upstream", "mig-parted-config-default.yaml").read_text()
    for pool in any_spec.node_pools:
        if pool.sharing.mode.value != "mig":
            continue
        gpu = any_spec.hardware.gpu_of(pool.instance_type)
        for item in cfg.mig_configs[pool_labels(any_spec, pool)[MIG_CONFIG_LABEL]]:
            assert layout_fits(gpu.name, item.mig_devices)
            assert all(pid in upstream_ids for pid in item.device_filter), "PCI IDs known to mig-parted"


def test_every_pool_label_names_a_rendered_entry(any_spec):
    r = render_gpu_operator(any_spec)
    dp_keys = set(_configmap(r, "device-plugin-config-")["data"])
    assert r.release["values"]["devicePlugin"]["config"]["default"] in dp_keys
    mig_names = set((r.mig_parted_config or {}).get("mig-configs", {}))
    for pool in any_spec.node_pools:
        labels = pool_labels(any_spec, pool) | operator_node_labels(any_spec, pool)
        assert labels[DEVICE_PLUGIN_CONFIG_LABEL] in dp_keys
        if MIG_CONFIG_LABEL in labels:
            assert labels[MIG_CONFIG_LABEL] in mig_names


def test_configmaps_and_namespace_are_valid_kubernetes(any_spec):
    kv = pytest.importorskip("kubernetes_validate")
    for doc in render_gpu_operator(any_spec).documents:
        kv.validate(doc, "1.33", strict=True)
