"""Name and label types checked when a model is built, from YAML or in Python, since names become files and objects.

Each is an `Annotated[str, ...]` whose validator raises ValueError with the bad value and what is allowed, so a
pool named `../../x` or a cluster name holding a NUL byte never reaches a renderer or the file system.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator

__all__ = [
    "AwsRegion",
    "ChartVersion",
    "ClusterName",
    "DnsLabel",
    "DnsSubdomain",
    "GcpLocation",
    "GcpZone",
    "InstanceTypeName",
    "KubernetesMinor",
    "LabelKey",
    "LabelValue",
    "Namespace",
    "ReleaseName",
    "TierName",
    "UnprefixedChartVersion",
    "cluster_name_problem",
    "raising",
    "gcp_project_problem",
    "gcp_region",
    "role_arn_problem",
    "service_account_problem",
    "shortened",
    "tier_name_problem",
]

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
_CLUSTER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
# An IAM role ARN: a path of segments ending in '/', then a name of at most 64 characters (IAM's limits).
_ROLE_ARN = re.compile(r"arn:aws(-[a-z]+)*:iam::[0-9]{12}:role/([A-Za-z0-9+=,.@_-]+/){0,64}[A-Za-z0-9+=,.@_-]{1,64}")
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


def raising(problem: Callable[[str], str | None]) -> Callable[[str], str]:
    """A validator from a `*_problem` function: the value, or ValueError with the problem."""

    def validate(value: str) -> str:
        if found := problem(value):
            raise ValueError(found)
        return value

    return validate


def _label_of(limit: int, what: str, why: str = "") -> Callable[[str], str | None]:
    """The problem function of a name that is a DNS label of at most `limit` characters."""

    def problem(value: str) -> str | None:
        if len(value) > limit or not _DNS_LABEL.fullmatch(value):
            return (
                f"{_show(value)} is not {what}; allowed: a lower-case DNS label (a-z, 0-9, '-', starting and ending "
                f"alphanumeric) of at most {limit} characters{why}"
            )
        return None

    return problem


def _matching(pattern: re.Pattern[str], what: str, allowed: str) -> Callable[[str], str | None]:
    """The problem function of a value that must match `pattern` whole."""

    def problem(value: str) -> str | None:
        return None if pattern.fullmatch(value) else f"{_show(value)} is not {what}; allowed: {allowed}"

    return problem


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


# GCP project IDs: 6-30 characters, a lower-case letter first, letters, digits and '-', no '-' last; older projects
# may carry a domain prefix (example.com:my-project). A node service account is an e-mail address, or `default`.
_GCP_PROJECT = re.compile(r"([a-z][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]")
_SERVICE_ACCOUNT = re.compile(r"default|[a-z0-9][-a-z0-9_.+]*@([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]{2,}")
_K8S_MINOR = re.compile(r"1\.[1-9][0-9]")  # 1.10 .. 1.99; no leading zero (1.00, 1.09)
gcp_project_problem = _matching(
    _GCP_PROJECT,
    "a GCP project ID",
    "6-30 characters of a-z, 0-9 and '-', starting with a letter, not ending with '-', e.g. my-ml-project",
)
service_account_problem = _matching(
    _SERVICE_ACCOUNT, "a service account e-mail", "e.g. gpu-nodes@my-ml-project.iam.gserviceaccount.com, or default"
)
_k8s_minor = raising(_matching(_K8S_MINOR, "a minor version", "e.g. '1.33'"))


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


# An EC2 instance type or GCE machine type name: it becomes the node label `node.kubernetes.io/instance-type`, a field
# of OpenCost's pricing CSV and a Prometheus label, so nothing else fits.
_instance_type = raising(
    _matching(
        _INSTANCE_TYPE,
        "an instance or machine type name",
        "at most 63 characters of a-z, 0-9, '-' and '.', starting and ending alphanumeric (e.g. p5.48xlarge, "
        "a3-highgpu-8g)",
    )
)


# A chart version as Helm's `--version` takes it for a pinned install: one SemVer 2 version (Masterminds/semver,
# which Helm parses it with, also takes a leading v). Ranges (^1.2, >=1) are refused: the platform pins its charts.
_CHART_VERSION = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")


def _chart_version(value: str) -> str:
    if len(value) > 64 or not _CHART_VERSION.fullmatch(value):
        raise ValueError(f"{_show(value)} is not a chart version; allowed: semantic version, e.g. 9.59.0 or v0.5.30")
    return value


def _unprefixed_chart_version(value: str) -> str:
    _chart_version(value)
    if "+" in value:
        raise ValueError(
            f"{_show(value)}: the image tag is made as v<version>, and '+' (build metadata) is not allowed in an "
            "image tag; allowed: a version without +..., e.g. 0.19.2"
        )
    if value.startswith("v"):
        raise ValueError(
            f"{_show(value)}: the image tag is made as v<version>, so this would pull v{value}; allowed: the "
            f"version without its leading v, e.g. {value[1:]}"
        )
    return value


TIER_NAME_MAX = 59  # the tier's PriorityClass / WorkloadPriorityClass `gpu-<tier>` is a label value (63)


tier_name_problem = _label_of(
    TIER_NAME_MAX,
    "a tier name",
    ": its priority class gpu-<tier> is the value jobs put in the kueue.x-k8s.io/priority-class label, at most 63 "
    "characters",
)
# helm/helm v3 pkg/chartutil/validate_name.go: maxReleaseNameLen = 53
_release_name = raising(_label_of(53, "a Helm release name"))
_namespace = raising(_label_of(63, "a namespace name"))


# Region and zone names as the clouds spell them: us-east-1, us-gov-west-1, eusc-de-east-1 (AWS); us-central1 and
# us-central1-a (GCP). They reach API endpoints, node selectors and prices, so nothing else passes.
_AWS_REGION = re.compile(r"[a-z]{2,4}(-[a-z]+){1,3}-[0-9]{1,2}")
_GCP_REGION = re.compile(r"[a-z]+-[a-z]+[0-9]{1,2}")
_GCP_ZONE = re.compile(r"([a-z]+-[a-z]+[0-9]{1,2})-([a-z]|ai[0-9][a-z])")  # us-central1-a, us-central1-ai1a


_aws_region = raising(_matching(_AWS_REGION, "an AWS region", "a region name, e.g. us-east-1"))


def gcp_region(location: str) -> str:
    """The region of a GKE location (a region, or a zone of it)."""
    zone = _GCP_ZONE.fullmatch(location)
    return zone.group(1) if zone else location


def _gcp_location(value: str) -> str:
    if not (_GCP_REGION.fullmatch(value) or _GCP_ZONE.fullmatch(value)):
        raise ValueError(
            f"{_show(value)} is not a GCP region or zone; allowed: e.g. us-central1 (regional cluster) or "
            "us-central1-a (zonal cluster)"
        )
    return value


_gcp_zone = raising(_matching(_GCP_ZONE, "a GCP zone", "<region>-<zone>, e.g. us-central1-a"))


DnsLabel = Annotated[str, AfterValidator(raising(dns_label_problem))]
KubernetesMinor = Annotated[str, AfterValidator(_k8s_minor)]
TierName = Annotated[str, AfterValidator(raising(tier_name_problem))]
"""A tier name: a DNS label of at most 59 characters (its priority class `gpu-<tier>` is a label value)."""
ReleaseName = Annotated[str, AfterValidator(_release_name)]
"""A Helm release name: a DNS label of at most 53 characters (Helm's limit, for the names it derives from it)."""
AwsRegion = Annotated[str, AfterValidator(_aws_region)]
GcpLocation = Annotated[str, AfterValidator(_gcp_location)]
GcpZone = Annotated[str, AfterValidator(_gcp_zone)]
ChartVersion = Annotated[str, AfterValidator(_chart_version)]
UnprefixedChartVersion = Annotated[str, AfterValidator(_unprefixed_chart_version)]
"""A chart version whose images are tagged `v<version>` (Kueue, Volcano): written without the v."""
Namespace = Annotated[str, AfterValidator(_namespace)]
InstanceTypeName = Annotated[str, AfterValidator(_instance_type)]
DnsSubdomain = Annotated[str, AfterValidator(_dns_subdomain)]
ClusterName = Annotated[str, AfterValidator(raising(cluster_name_problem))]
LabelKey = Annotated[str, AfterValidator(_label_key)]
LabelValue = Annotated[str, AfterValidator(_label_value)]
