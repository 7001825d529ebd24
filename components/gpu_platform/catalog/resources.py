"""Extended resource names NVIDIA's device plugin advertises: the one home of `nvidia.com/gpu` and its MIG siblings.

Source: NVIDIA/k8s-device-plugin README ("Configuration Option Details", MIG strategies): whole GPUs (and their
time-sliced or MPS replicas) are `nvidia.com/gpu`; under the `mixed` MIG strategy each MIG profile is advertised as
`nvidia.com/mig-<profile>`. `contract.py` re-exports these names; the spec and the catalog import them from here.
"""

from __future__ import annotations

__all__ = ["GPU_RESOURCE", "MIG_RESOURCE_PREFIX", "NVIDIA_RESOURCE_PREFIX", "mig_resource"]

NVIDIA_RESOURCE_PREFIX = "nvidia.com/"
GPU_RESOURCE = NVIDIA_RESOURCE_PREFIX + "gpu"
MIG_RESOURCE_PREFIX = NVIDIA_RESOURCE_PREFIX + "mig-"


def mig_resource(profile: str) -> str:
    """The extended resource of a MIG profile under the `mixed` strategy, e.g. `nvidia.com/mig-3g.40gb`."""
    return MIG_RESOURCE_PREFIX + profile
