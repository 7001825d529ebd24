"""GpuAdmission: wires the rendered admission objects (and the Kyverno release) into Pulumi resources."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from .. import k8s
from ..options import check_component_args, child_options, registration
from ..spec import PlatformSpec
from .render import render_admission_objects

__all__ = ["GpuAdmission", "GpuAdmissionArgs"]


@dataclass(frozen=True)
class GpuAdmissionArgs:
    """Inputs of GpuAdmission: the validated spec. The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec

    def __post_init__(self) -> None:
        check_component_args(self.spec)


class GpuAdmission(pulumi.ComponentResource):
    """Deny unclassified GPU pods and route tiered ones (`gpu-platform:index:GpuAdmission`).

    Children: `<name>-kyverno` (Helm release, when Kyverno routes) and one resource per object named
    `<name>-<kind>-<object>`; Kyverno policies wait for the release that installs their CRDs.
    """

    policy_names: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuAdmissionArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        token, own = registration("GpuAdmission", opts)
        super().__init__(token, name, None, own)
        rendered = render_admission_objects(args.spec)
        child = child_options(self, opts)
        release = rendered.kyverno_release
        self.kyverno_release = k8s.helm_release_resource(f"{name}-kyverno", release, child) if release else None
        after = child_options(self, opts, self.kyverno_release)
        self.deny = k8s.k8s_objects(name, list(rendered.deny), child)
        self.routes = k8s.k8s_objects(name, list(rendered.routes), after)
        self.policy_names = pulumi.Output.from_input(rendered.policy_names)
        self.register_outputs({"policyNames": self.policy_names})
