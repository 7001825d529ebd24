"""GPU models: memory, compute capability, MIG capability, PCI IDs, GKE accelerator names and training class.

Sources (read 2026-08): NVIDIA MIG User Guide v580 "Supported GPU Products" (Table 1) for MIG capability;
NVIDIA/mig-parted @ bd7160f4 `deployments/systemd/config-default.yaml` for the PCI device IDs;
GoogleCloudPlatform/container-engine-accelerators @ 992db812 and the Terraform google provider @ e03b7622
for GKE accelerator type names; NVIDIA CUDA GPUs page for compute capability. Training class: NVIDIA's HGX
(SXM, NVLink/NVSwitch) data-centre parts; A10G, L4, L40S and T4 are PCIe inference and graphics parts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["GpuModel", "GPU_MODELS", "MIG_CAPABLE_GPUS", "gpu_families"]


@dataclass(frozen=True)
class GpuModel:
    """One GPU model as the platform needs to know it."""

    name: str
    memory_gb: int
    compute_capability: float
    mig_capable: bool
    pci_device_ids: tuple[str, ...] = ()
    gke_accelerator: str | None = None
    training_class: bool = False  # HGX/SXM data-centre GPU (NVLink, 40 GB or more): where pre-training runs

    @property
    def family(self) -> str:
        """The model's family, its name before the first '-': `A100` for `A100-SXM4-80GB`."""
        return self.name.split("-", 1)[0]

    @property
    def mps_max_clients(self) -> int:
        """MPS client limit per GPU (k8s-device-plugin mps/device.go: 48 from compute capability 7.5, else 16)."""
        return 48 if self.compute_capability >= 7.5 else 16


_ROWS: tuple[tuple[str, int, float, bool, tuple[str, ...], str | None], ...] = (
    # name,            GB,  cc,  MIG,   PCI device IDs (mig-parted),                                 GKE accelerator
    ("A100-SXM4-40GB", 40, 8.0, True, ("0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"), "nvidia-tesla-a100"),
    ("A100-SXM4-80GB", 80, 8.0, True, ("0x20B210DE", "0x20B510DE", "0x20F310DE", "0x20F510DE"), "nvidia-a100-80gb"),
    ("H100-80GB", 80, 9.0, True, ("0x233010DE", "0x233110DE", "0x232210DE", "0x232410DE"), "nvidia-h100-80gb"),
    ("H200-141GB", 141, 9.0, True, ("0x233510DE", "0x233B10DE"), "nvidia-h200-141gb"),
    ("A10G", 24, 8.6, False, (), None),
    ("L4", 24, 8.9, False, (), "nvidia-l4"),
    ("L40S", 48, 8.9, False, (), None),
    ("T4", 16, 7.5, False, (), "nvidia-tesla-t4"),
)

_TRAINING_CLASS = ("A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB", "H200-141GB")

GPU_MODELS: dict[str, GpuModel] = {row[0]: GpuModel(*row, training_class=row[0] in _TRAINING_CLASS) for row in _ROWS}
MIG_CAPABLE_GPUS: tuple[str, ...] = tuple(m.name for m in GPU_MODELS.values() if m.mig_capable)


def gpu_families(models: Iterable[GpuModel]) -> list[str]:
    """The families of `models`, each once, in catalog order: `["A100", "H100", "H200"]`."""
    return list(dict.fromkeys(m.family for m in models))
