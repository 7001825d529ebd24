"""Remediation: GPU launch templates get IMDSv2 required (the pack's one auto-fix; off until chosen).

A launch template that names a GPU instance type, or is tagged by the platform as a GPU pool's, and lets
instances use IMDSv1 (`metadataOptions.httpTokens` not `required`) is rewritten with `httpTokens: required`
(and the metadata endpoint on) when the policy's enforcement level is `remediate`; otherwise it is reported.
Pods on GPU nodes could otherwise read the node role's credentials through IMDSv1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .props import aws_gpu_type, dig, mapping

if TYPE_CHECKING:  # the engine's argument types, for annotations only: the checks import no policy SDK
    from pulumi_policy import ResourceValidationArgs

__all__ = ["check_imdsv2", "remediate_imdsv2"]

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
_POOL_TAG_SUFFIX = "/gpu-pool"


def gpu_launch_template(resource_type: str, props: Mapping[str, Any]) -> bool:
    """A launch template for GPU nodes: a GPU instance type, or the platform's pool tag."""
    if resource_type != LAUNCH_TEMPLATE:
        return False
    if aws_gpu_type(str(props.get("instanceType") or "")):
        return True
    return any(str(k).endswith(_POOL_TAG_SUFFIX) for k in mapping(props.get("tags")))


def _imdsv1_allowed(props: Mapping[str, Any]) -> bool:
    return bool(dig(props, "metadataOptions", "httpTokens") != "required")


def remediate_imdsv2(args: ResourceValidationArgs) -> dict[str, Any] | None:
    """The launch template's properties with IMDSv2 required, or None when there is nothing to change."""
    props = dict(args.props)
    if not gpu_launch_template(args.resource_type, props) or not _imdsv1_allowed(props):
        return None
    options = dict(mapping(props.get("metadataOptions")))
    options.update(httpTokens="required", httpEndpoint="enabled")
    options.setdefault("httpPutResponseHopLimit", 2)  # containers reach IMDS through one more hop
    return {**props, "metadataOptions": options}


def check_imdsv2(args: ResourceValidationArgs, report_violation: Callable[..., None]) -> None:
    """Report a GPU launch template that allows IMDSv1 (fixed instead at the `remediate` level)."""
    if gpu_launch_template(args.resource_type, args.props) and _imdsv1_allowed(args.props):
        report_violation(
            f"launch template {args.name!r} for GPU nodes allows IMDSv1 "
            f"(metadataOptions.httpTokens is {dig(args.props, 'metadataOptions', 'httpTokens')!r}); "
            "set httpTokens=required, or set this policy to `remediate` to have it fixed"
        )
