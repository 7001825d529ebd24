"""Spec parts found by name, findings filtered by severity, and the spec variants several test modules build.

Tests look a pool, tier or team up by its name (`pool(data, "gpu-ci")`), never by its position in a YAML file, so a
test keeps its meaning when the dev stack's lists are reordered. Each lookup works on the raw spec mapping (what a
test mutates before validation) and on a parsed `PlatformSpec`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from gpu_platform.errors import Finding
from gpu_platform.spec import PlatformSpec
from gpu_platform.validation import check_spec

__all__ = [
    "dev_fleet_on_gke",
    "finding_lines",
    "findings",
    "gke_data",
    "pool",
    "pool_path",
    "team",
    "team_path",
    "tier",
    "tier_path",
    "without_mig",
    "without_mps",
]

# The key of each named list in the raw spec, and the attribute holding it on a PlatformSpec.
_LISTS = {"nodePools": "node_pools", "tiers": "tiers", "teams": "teams"}


def _items(data: Mapping[str, Any] | PlatformSpec, key: str) -> list[Any]:
    return list(data[key]) if isinstance(data, Mapping) else list(getattr(data, _LISTS[key]))


def _name(item: Any) -> str:
    return str(item["name"] if isinstance(item, Mapping) else item.name)


def _index(data: Mapping[str, Any] | PlatformSpec, key: str, name: str) -> int:
    items = _items(data, key)
    for i, item in enumerate(items):
        if _name(item) == name:
            return i
    known = ", ".join(_name(item) for item in items)
    raise KeyError(f"{key}: no entry named {name!r} (names: {known})")


def pool(data: Mapping[str, Any] | PlatformSpec, name: str) -> Any:
    """The node pool named `name` (the raw mapping, mutable in place, or the parsed pool)."""
    return _items(data, "nodePools")[_index(data, "nodePools", name)]


def tier(data: Mapping[str, Any] | PlatformSpec, name: str) -> Any:
    """The tier named `name`."""
    return _items(data, "tiers")[_index(data, "tiers", name)]


def team(data: Mapping[str, Any] | PlatformSpec, name: str) -> Any:
    """The team named `name`."""
    return _items(data, "teams")[_index(data, "teams", name)]


def pool_path(data: Mapping[str, Any] | PlatformSpec, name: str) -> str:
    """The field path a finding gives the pool named `name` (`nodePools[2]`), wherever it sits in `data`."""
    return f"nodePools[{_index(data, 'nodePools', name)}]"


def tier_path(data: Mapping[str, Any] | PlatformSpec, name: str) -> str:
    """The field path of the tier named `name` (`tiers[0]`)."""
    return f"tiers[{_index(data, 'tiers', name)}]"


def team_path(data: Mapping[str, Any] | PlatformSpec, name: str) -> str:
    """The field path of the team named `name` (`teams[1]`)."""
    return f"teams[{_index(data, 'teams', name)}]"


def findings(
    source: Mapping[str, Any] | PlatformSpec | Iterable[Finding], severity: str | None = None
) -> list[Finding]:
    """The findings of `source` (raw spec data, checked without the parse step's raise; a parsed spec; or findings
    already made), only those of `severity` when given. `severity` may be a plain string or a `Severity` member:
    a string enum compares equal to its value."""
    if isinstance(source, Mapping):
        found = check_spec(PlatformSpec.model_validate(source))
    elif isinstance(source, PlatformSpec):
        found = check_spec(source)
    else:
        found = list(source)
    return [f for f in found if severity is None or f.severity == severity]


def finding_lines(source: Mapping[str, Any] | PlatformSpec | Iterable[Finding], severity: str = "error") -> list[str]:
    """The findings of `severity` as the CLI prints them: `path: message`."""
    return [str(f) for f in findings(source, severity)]


# --- spec variants -------------------------------------------------------------------------------------------------


def gke_data(stack: str = "gke-native", **pool_overrides: dict[str, Any]) -> dict[str, Any]:
    """A small GKE spec: exclusive, time-sliced, MPS and one-profile MIG pools on a2 machines (`pool_overrides`
    maps a pool name to fields to set on it)."""
    pools: list[dict[str, Any]] = [
        {
            "name": "gpu-train",
            "instanceType": "a2-ultragpu-8g",
            "sharing": {"mode": "exclusive"},
            "maxSize": 4,
            "gcp": {"zones": ["us-central1-a"]},
        },
        {
            "name": "gpu-dev",
            "instanceType": "a2-highgpu-1g",
            "sharing": {"mode": "time-slicing", "replicas": 4},
            "maxSize": 2,
        },
        {"name": "gpu-ci", "instanceType": "a2-highgpu-1g", "sharing": {"mode": "mps", "replicas": 8}, "maxSize": 2},
        {
            "name": "gpu-infer",
            "instanceType": "a2-highgpu-8g",
            "sharing": {"mode": "mig", "migLayout": {"1g.5gb": 7}},
            "minSize": 1,
            "maxSize": 3,
        },
    ]
    for p in pools:
        p.update(pool_overrides.get(p["name"], {}))
    return {
        "cloud": "gcp",
        "clusterName": "ml-gke",
        "labelDomain": "gpu.example.com",
        "gcp": {
            "project": "ml-project",
            "location": "us-central1",
            "zones": ["us-central1-a", "us-central1-c"],
            "gpuStack": stack,
            "serviceAccount": "gpu-nodes@proj.iam.gserviceaccount.com",
        },
        "nodePools": pools,
        "tiers": [
            {"name": "train", "pool": "gpu-train", "priority": 100},
            {"name": "dev", "pool": "gpu-dev", "priority": 10},
            {"name": "ci", "pool": "gpu-ci", "priority": 1},
            {
                "name": "infer",
                "pool": "gpu-infer",
                "priority": 50,
                # GKE's own device plugin advertises MIG partitions as nvidia.com/gpu
                **({"resource": "nvidia.com/mig-1g.5gb"} if stack == "gpu-operator" else {}),
            },
        ],
    }


def dev_fleet_on_gke(dev_data: dict[str, Any], stack: str = "gpu-operator") -> dict[str, Any]:
    """The dev fleet on GKE (A100 80GB for the 80GB pools, A100 40GB otherwise)."""
    data = copy.deepcopy(dev_data)
    data["cloud"] = "gcp"
    data.pop("aws")
    data["gcp"] = {"project": "ml-project", "location": "us-central1", "zones": ["us-central1-a"], "gpuStack": stack}
    for p in data["nodePools"]:
        p["instanceType"] = {"p4de.24xlarge": "a2-ultragpu-8g", "p4d.24xlarge": "a2-highgpu-8g"}[p["instanceType"]]
    return data


def without_mps(dev_data: dict[str, Any]) -> dict[str, Any]:
    """The dev fleet with its MPS pool (gpu-ci) time-sliced instead (MIG without MPS)."""
    data = copy.deepcopy(dev_data)
    pool(data, "gpu-ci")["sharing"] = {"mode": "time-slicing", "replicas": 2}
    return data


def without_mig(dev_data: dict[str, Any]) -> dict[str, Any]:
    """The dev fleet with its MIG pool (gpu-infer) exclusive (and the MIG tiers on whole GPUs)."""
    data = copy.deepcopy(dev_data)
    pool(data, "gpu-infer")["sharing"] = {"mode": "exclusive"}
    for t in data["tiers"]:
        t.pop("resource", None)
    return data
