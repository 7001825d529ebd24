"""Name and label types checked when a model is built, from YAML or in Python, since names become files and objects.

Each is an `Annotated[str, ...]` whose validator raises ValueError with the bad value and what is allowed, so a
pool named `../../x` or a cluster name holding a NUL byte never reaches a renderer or the file system.
"""

from __future__ import annotations

import re
import reprlib
from typing import Annotated, Any

from pydantic import AfterValidator

__all__ = [
    "ClusterName",
    "DnsLabel",
    "DnsSubdomain",
    "InstanceTypeName",
    "LabelKey",
    "LabelValue",
    "cluster_name_problem",
    "role_arn_problem",
    "shortened",
]

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
_CLUSTER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_ROLE_ARN = re.compile(r"arn:aws(-[a-z]+)*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}")
DNS_LABEL_ALLOWED = "a lower-case DNS label: a-z, 0-9 and '-', starting and ending alphanumeric, at most 63 characters"


class _Shown(reprlib.Repr):
    """`repr`, cut short, with true, false and null as the YAML or JSON the value came from spells them."""

    def repr_bool(self, x: bool, level: int) -> str:
        return "true" if x else "false"

    def repr_NoneType(self, x: None, level: int) -> str:  # noqa: N802  # reprlib's name for None's type
        return "null"


_REPR = _Shown()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, 60, 60


def shortened(value: Any) -> str:
    """`repr(value)` cut to under 60 characters, with true, false and null for booleans and None: a value from the
    user's input in a message."""
    try:
        text = _REPR.repr(value)
    except ValueError:  # an integer of more digits than Python converts to text
        return "an integer too large to show"
    return text if len(text) < 60 else text[:57] + "..."


def _show(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 70 else text[:67] + "..."


def dns_label_problem(value: str) -> str | None:
    """Why `value` is not a DNS label (RFC 1123), or None."""
    if len(value) > 63 or not _DNS_LABEL.fullmatch(value):
        return f"{_show(value)} is not a valid name; allowed: {DNS_LABEL_ALLOWED}"
    return None


def _dns_label(value: str) -> str:
    if problem := dns_label_problem(value):
        raise ValueError(problem)
    return value


def _dns_subdomain(value: str) -> str:
    if len(value) > 253 or not _DNS_SUBDOMAIN.fullmatch(value):
        raise ValueError(
            f"{_show(value)} is not a DNS subdomain; allowed: lower-case DNS labels joined by '.', "
            "at most 253 characters, e.g. gpu.example.com"
        )
    return value


def cluster_name_problem(value: str) -> str | None:
    """Why `value` is not an EKS / GKE cluster name, or None."""
    if len(value) > 100 or not _CLUSTER.fullmatch(value):
        return (
            f"{_show(value)} is not a cluster name; allowed: letters, digits, '-' and '_', starting with a letter "
            "or digit, at most 100 characters (EKS; GKE allows a subset)"
        )
    return None


def role_arn_problem(value: str) -> str | None:
    """Why `value` is not an IAM role ARN, or None."""
    if not _ROLE_ARN.fullmatch(value):
        return f"{value!r} is not an IAM role ARN; allowed: arn:aws:iam::<12-digit account>:role/<name>"
    return None


def _cluster_name(value: str) -> str:
    if problem := cluster_name_problem(value):
        raise ValueError(problem)
    return value


def _label_key(value: str) -> str:
    prefix, slash, name = value.rpartition("/")
    ok = (
        0 < len(name) <= 63
        and _LABEL_NAME.fullmatch(name)
        and (not slash or (0 < len(prefix) <= 253 and _DNS_SUBDOMAIN.fullmatch(prefix)))
    )
    if not ok:
        raise ValueError(
            f"label key {_show(value)} is not valid; allowed: [prefix/]name, name at most 63 "
            "characters of a-z, A-Z, 0-9, '-', '_', '.' starting and ending alphanumeric, prefix a "
            "DNS subdomain"
        )
    return value


def _label_value(value: str) -> str:
    if len(value) > 63 or not _LABEL_NAME.fullmatch(value):
        raise ValueError(
            f"label value {_show(value)} is not valid; allowed: empty or at most 63 characters of "
            "a-z, A-Z, 0-9, '-', '_', '.' starting and ending alphanumeric"
        )
    return value


_INSTANCE_TYPE = re.compile(r"[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?")


def _instance_type(value: str) -> str:
    """An EC2 instance type or GCE machine type name: it becomes the node label `node.kubernetes.io/instance-type`,
    a field of OpenCost's pricing CSV and a Prometheus label, so nothing else fits."""
    if not _INSTANCE_TYPE.fullmatch(value):
        raise ValueError(
            f"{_show(value)} is not an instance or machine type name; allowed: at most 63 characters of a-z, 0-9, "
            "'-' and '.', starting and ending alphanumeric (e.g. p5.48xlarge, a3-highgpu-8g)"
        )
    return value


DnsLabel = Annotated[str, AfterValidator(_dns_label)]
InstanceTypeName = Annotated[str, AfterValidator(_instance_type)]
DnsSubdomain = Annotated[str, AfterValidator(_dns_subdomain)]
ClusterName = Annotated[str, AfterValidator(_cluster_name)]
LabelKey = Annotated[str, AfterValidator(_label_key)]
LabelValue = Annotated[str, AfterValidator(_label_value)]
