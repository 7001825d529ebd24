"""NVIDIA XID codes the platform treats as hardware faults: the GPU (or its node) must leave service.

Sources: NVIDIA "XID Errors" catalog (docs.nvidia.com/deploy/xid-errors), whose short names dcgm-exporter
copies into `err_msg` (NVIDIA/dcgm-exporter d5e5f51 `internal/pkg/collector/xid_errors.go`), and the list the
EKS node monitoring agent turns into AcceleratedHardwareReady=False (aws/eks-node-monitoring-agent v1.7.0
`monitors/nvidia/dcgm/dcgm_policies.go` WellKnownXidCodes, each with NVIDIA's resolution bucket: RESET_GPU,
RESTART_BM, CONTACT_SUPPORT ...). The table is their union plus 92 (high single-bit ECC rate) and 94
(contained ECC error), which NVIDIA files under hardware but the agent does not act on: on EKS those two reach
a human through GpuXidHardwareNotRemediated. Every other XID (13 graphics engine exception, 31 memory page
fault, 43 GPU stopped processing, 45 preemptive cleanup ...) is an application fault: the owning team is
told, the node stays in service.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EKS_AGENT_XIDS", "HARDWARE_XIDS", "hardware_xid_regex"]

# aws/eks-node-monitoring-agent v1.7.0 monitors/nvidia/dcgm/dcgm_policies.go WellKnownXidCodes.
EKS_AGENT_XIDS = (46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156, 158)


@dataclass(frozen=True)
class XidCode:
    """One XID code with its catalog name."""

    code: int
    name: str


HARDWARE_XIDS: tuple[XidCode, ...] = (
    XidCode(46, "GPU stopped processing"),
    XidCode(48, "Double Bit ECC Error"),
    XidCode(54, "Auxiliary power is not connected to the GPU board"),
    XidCode(62, "Internal micro-controller halt"),
    XidCode(63, "ECC page retirement or row remapping recording event"),
    XidCode(64, "ECC page retirement or row remapper recording failure"),
    XidCode(74, "NVLINK Error"),
    XidCode(79, "GPU has fallen off the bus"),
    XidCode(92, "High single-bit ECC error rate"),
    XidCode(94, "Contained ECC error"),
    XidCode(95, "Uncontained ECC error"),
    XidCode(109, "Context Switch Timeout Error"),
    XidCode(110, "Security Fault Error"),
    XidCode(119, "GSP RPC Timeout"),
    XidCode(120, "GSP Error"),
    XidCode(136, "ALI Training Fail"),
    XidCode(140, "Unrecovered ECC Error"),
    XidCode(142, "Robust Channel NVENVC3 Error"),
    XidCode(143, "GPU Initialization Failure"),
    XidCode(151, "Robust Channel Key rotation Error"),
    XidCode(155, "NVLINK: SW Defined Error"),
    XidCode(156, "Resource Retirement Event"),
    XidCode(158, "GPU Fatal Timeout"),
)


def hardware_xid_regex(codes: tuple[int, ...] | list[int]) -> str:
    """The `xid` label regex of the given codes, e.g. `48|79|95` (Prometheus anchors it)."""
    return "|".join(str(c) for c in sorted(set(codes)))
