"""Spec variants shared by the GPU Operator tests (built from the dev stack's raw data)."""

from __future__ import annotations

import copy
from typing import Any


def gke_data(dev_data: dict[str, Any], stack: str = "gpu-operator") -> dict[str, Any]:
    """The dev fleet on GKE (A100 80GB for the 80GB pools, A100 40GB otherwise)."""
    data = copy.deepcopy(dev_data)
    data["cloud"] = "gcp"
    data.pop("aws")
    data["gcp"] = {"project": "p", "location": "us-central1", "zones": ["us-central1-a"], "gpuStack": stack}
    for pool in data["nodePools"]:
        pool["instanceType"] = {"p4de.24xlarge": "a2-ultragpu-8g", "p4d.24xlarge": "a2-highgpu-8g"}[
            pool["instanceType"]
        ]
    return data


def without_mps(dev_data: dict[str, Any]) -> dict[str, Any]:
    """The dev fleet with its MPS pool time-sliced instead (MIG without MPS)."""
    data = copy.deepcopy(dev_data)
    data["nodePools"][3]["sharing"] = {"mode": "time-slicing", "replicas": 2}
    return data


def without_mig(dev_data: dict[str, Any]) -> dict[str, Any]:
    """The dev fleet with its MIG pool exclusive (and the MIG tiers on whole GPUs)."""
    data = copy.deepcopy(dev_data)
    data["nodePools"][1]["sharing"] = {"mode": "exclusive"}
    for tier in data["tiers"]:
        tier.pop("resource", None)
    return data
