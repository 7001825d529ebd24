"""Observability checks registered in `validation.DOMAIN_CHECKS`: durations and thresholds of the alerts.

Everything `synth` would otherwise reject, or render into rules that promtool rejects or that can never fire,
is reported here with its field path, so `validate` exits 1 on it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from ..errors import Finding, Severity
from ..spec import Cloud, PlatformSpec

__all__ = ["check_observability", "duration_seconds", "exact_number"]

# Prometheus' duration grammar (prometheus/common model.ParseDuration): units in this order, each at most once.
_DURATION = re.compile(
    r"^(?:([0-9]+)y)?(?:([0-9]+)w)?(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?(?:([0-9]+)ms)?\Z"
)
_UNIT_SECONDS = (31536000, 604800, 86400, 3600, 60, 1, 0.001)
# Alert waits and windows longer than a week outlast any sensible page and make range queries heavy.
DURATION_MAX_SECONDS = 7 * 86400
# EKS node auto repair acts on AcceleratedHardwareReady=False after 10 minutes (EKS user guide "node auto repair").
EKS_REPAIR_DELAY_SECONDS = 600
_PATH = "monitoring.thresholds"
# XIDs are small integers in NVIDIA's catalog (1..~170 today).
_XID_MAX = 999


def duration_seconds(value: str) -> float | None:
    """Seconds of a Prometheus duration, or None when it is not one."""
    m = _DURATION.match(value or "")
    if not value or not m:
        return None
    return sum(int(n) * s for n, s in zip(m.groups(), _UNIT_SECONDS, strict=True) if n)


def exact_number(x: float) -> str:
    """A threshold as PromQL text: integers without a point, other values exactly (never exponent notation)."""
    if float(x).is_integer():
        return str(int(x))
    text = repr(float(x))
    if "e" in text or "E" in text:
        text = f"{x:.15f}".rstrip("0").rstrip(".")
    return text


def _camel(name: str) -> str:
    return re.sub(r"_(\w)", lambda m: m.group(1).upper(), name)


def _durations(spec: PlatformSpec) -> Iterator[Finding]:
    th = spec.monitoring.thresholds
    for name, value in th.model_dump().items():
        if not name.endswith(("_for", "_window")):
            continue
        path, secs = f"{_PATH}.{_camel(name)}", duration_seconds(value)
        if secs is None:
            yield Finding(
                path,
                f"{value!r} is not a Prometheus duration; use e.g. '90s', '30m', '2h' or '1h30m' "
                "(units y w d h m s ms, largest first, each once)",
            )
        elif secs <= 0:
            yield Finding(path, f"{value!r} is zero; allowed: a duration from 1s to 7d")
        elif secs > DURATION_MAX_SECONDS:
            yield Finding(path, f"{value!r} is longer than 7d; allowed: a duration from 1s to 7d")
        elif secs < 1:
            yield Finding(path, f"{value!r} is shorter than 1s; allowed: a duration from 1s to 7d")


def _remediation(spec: PlatformSpec) -> Iterator[Finding]:
    th = spec.monitoring.thresholds
    wait, window = duration_seconds(th.xid_remediation_for), duration_seconds(th.xid_hardware_window)
    if wait is None or window is None or not (0 < wait <= DURATION_MAX_SECONDS and window > 0):
        return
    if wait >= window:
        yield Finding(
            f"{_PATH}.xidRemediationFor",
            f"{th.xid_remediation_for!r} must be shorter than "
            f"xidHardwareWindow ({th.xid_hardware_window!r}), or the alert that node repair did not act "
            "can never fire; lengthen the window or shorten the wait",
        )
    repairing = spec.cloud == Cloud.AWS and any(p.aws.node_repair for p in spec.node_pools)
    if repairing and wait <= EKS_REPAIR_DELAY_SECONDS:
        yield Finding(
            f"{_PATH}.xidRemediationFor",
            f"{th.xid_remediation_for!r} is not longer than EKS node auto "
            "repair's 10-minute delay: GpuXidHardwareNotRemediated pages before repair can act; allowed "
            "without this warning: more than 10m",
            Severity.WARNING,
        )


def _number(path: str, value: float, low: float, high: float, unit: str = "") -> Iterator[Finding]:
    allowed = f"allowed: {exact_number(low)} to {exact_number(high)}{unit}"
    if not math.isfinite(value):
        yield Finding(path, f"{value!r} is not a finite number; {allowed}")
    elif not low <= value <= high:
        yield Finding(path, f"{value!r} is out of range; {allowed}")


def _thresholds(spec: PlatformSpec) -> Iterator[Finding]:
    th = spec.monitoring.thresholds
    yield from _number(f"{_PATH}.strandedSmActive", th.stranded_sm_active, 0, 1)
    yield from _number(f"{_PATH}.fbMemoryPercent", th.fb_memory_percent, 0, 100, " %")
    # GPUs throttle from about 85 C and shut down above 100 C; below 30 C an idle GPU would page.
    yield from _number(f"{_PATH}.temperatureCelsius", th.temperature_celsius, 30, 120, " C")
    yield from _number(f"{_PATH}.starvedQueueDepth", th.starved_queue_depth, 0, 1_000_000)
    yield from _number(f"{_PATH}.pendingWorkloads", th.pending_workloads, 0, 1_000_000)
    codes = th.xid_hardware_codes
    if not codes:
        yield Finding(
            f"{_PATH}.xidHardwareCodes",
            "is empty: every XID would be an application XID and the "
            "hardware alerts could never fire; list at least one XID (default: catalog.xid.HARDWARE_XIDS)",
        )
    dupes = sorted({c for c in codes if codes.count(c) > 1})
    if dupes:
        yield Finding(f"{_PATH}.xidHardwareCodes", f"lists {', '.join(map(str, dupes))} more than once")
    bad = sorted({c for c in codes if not 1 <= c <= _XID_MAX})
    if bad:
        yield Finding(f"{_PATH}.xidHardwareCodes", f"{', '.join(map(str, bad))}: not an XID; allowed: 1 to {_XID_MAX}")


def check_observability(spec: PlatformSpec) -> Iterator[Finding]:
    """Alert durations are Prometheus durations from 1s to 7d, thresholds finite and in range, XIDs sensible."""
    yield from _durations(spec)
    yield from _remediation(spec)
    yield from _thresholds(spec)
