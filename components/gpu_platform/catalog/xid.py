"""NVIDIA XID codes the platform treats as hardware faults: the GPU (or its node) must leave service.

Source: NVIDIA "XID Errors" catalog (docs.nvidia.com/deploy/xid-errors), whose short names dcgm-exporter
copies into `err_msg` (NVIDIA/dcgm-exporter d5e5f51 `internal/pkg/collector/xid_errors.go`). These are the
codes whose documented cause is hardware, memory or the GPU's firmware and whose documented action is a GPU
reset, a node reboot or a field replacement, not a fix in the application. Every other XID (13 graphics
engine exception, 31 memory page fault, 43 GPU stopped processing, 45 preemptive cleanup ...) is treated as
an application fault: the owning team is told, the node stays in service.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HARDWARE_XIDS", "XidCode", "hardware_xid_regex"]


@dataclass(frozen=True)
class XidCode:
    """One XID code with its catalog name."""

    code: int
    name: str


HARDWARE_XIDS: tuple[XidCode, ...] = (
    XidCode(48, "Double Bit ECC Error"),
    XidCode(62, "Internal micro-controller halt"),
    XidCode(63, "ECC page retirement or row remapping recording event"),
    XidCode(64, "ECC page retirement or row remapper recording failure"),
    XidCode(74, "NVLINK Error"),
    XidCode(79, "GPU has fallen off the bus"),
    XidCode(92, "High single-bit ECC error rate"),
    XidCode(94, "Contained ECC error"),
    XidCode(95, "Uncontained ECC error"),
    XidCode(119, "GSP RPC Timeout"),
    XidCode(120, "GSP Error"),
    XidCode(140, "Unrecovered ECC Error"),
)


def hardware_xid_regex(codes: tuple[int, ...] | list[int]) -> str:
    """The `xid` label regex of the given codes, e.g. `48|79|95` (Prometheus anchors it)."""
    return "|".join(str(c) for c in sorted(set(codes)))
