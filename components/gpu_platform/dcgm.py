"""The DCGM exporter metrics the platform scrapes: one table shared by the GPU Operator values and the rules.

Upstream (NVIDIA/dcgm-exporter etc/dcp-metrics-included.csv, tag 4.5.3-4.8.2) ships DCGM_FI_PROF_SM_ACTIVE and
DCGM_FI_PROF_SM_OCCUPANCY commented out; the platform's utilisation and stranded-capacity rules need them,
so the operator gets this CSV as a custom `dcgmExporter.config` ConfigMap.

`DCGM_EXP_XID_ERRORS_COUNT` is computed by the exporter itself (NVIDIA/dcgm-exporter d5e5f51, shipped in
4.6.0-4.8.3: `internal/pkg/collector/xid_collector.go`): one series per XID seen on a GPU within the last
`--xid-count-window-size` (default 5 min, `pkg/cmd/app.go`), labelled `xid` and `window_size_in_ms`, and a
zero series without `xid` once the window is empty. Unlike `DCGM_FI_DEV_XID_ERRORS`, which holds the last
XID until the exporter restarts (dcgm-exporter issue #500), it clears, and it counts repeats of one XID.
Upstream lists it commented out in `etc/default-counters.csv`.
"""

from __future__ import annotations

__all__ = ["DCGM_CONFIGMAP_KEY", "DCGM_METRICS", "EXPORTER_FIELDS", "XID_COUNT", "metrics_csv"]

DCGM_CONFIGMAP_KEY = "dcgm-metrics.csv"
XID_COUNT = "DCGM_EXP_XID_ERRORS_COUNT"
# Fields the exporter computes (not DCGM fields): dcgm-exporter d5e5f51 internal/pkg/counters/const.go.
EXPORTER_FIELDS = frozenset({XID_COUNT})

# field, Prometheus type, help
DCGM_METRICS: tuple[tuple[str, str, str], ...] = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    (XID_COUNT, "gauge", "Count of XID errors within the window (window_size_in_ms), one series per xid."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_DRIVER_VERSION", "label", "Driver Version"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    ("DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active."),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus, in bytes per second."),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus, in bytes per second."),
)


def metrics_csv(extra: tuple[tuple[str, str, str], ...] = ()) -> str:
    """The collectors CSV (`field, type, help` per line) the DCGM exporter reads."""
    rows = [*DCGM_METRICS, *extra]
    return "".join(f"{field}, {kind}, {help_}\n" for field, kind, help_ in rows)
