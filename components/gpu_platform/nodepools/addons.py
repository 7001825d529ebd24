"""Pure render of the cluster-wide companions of the node pools: cluster-autoscaler and the EFA device plugin
(Helm releases, EKS) and Google's driver installer (GKE, gpu-operator stack)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..artifacts import Artifact, ArtifactKind
from ..errors import Finding, Severity
from ..spec import PlatformSpec
from .autoscaler import render_cluster_autoscaler_release
from .efa import render_efa_device_plugin_release
from .gke_driver import needs_driver_installer, render_driver_installer

__all__ = ["render_node_addon_artifacts", "render_node_addons"]

DRIVER_ARTIFACT = "gke-nvidia-driver-installer"


@dataclass(frozen=True)
class NodeAddonsRender:
    """What `GpuNodeAddons` registers and `synth` writes."""

    releases: tuple[dict[str, Any], ...]
    documents: tuple[dict[str, Any], ...]

    @property
    def release_names(self) -> list[str]:
        """Names of the Helm releases (each is also the release's child resource suffix)."""
        return [r["name"] for r in self.releases]

    @property
    def empty(self) -> bool:
        """True when the spec needs none of them."""
        return not self.releases and not self.documents


def render_node_addons(spec: PlatformSpec) -> NodeAddonsRender:
    """The releases and objects the spec's pools need besides the pools themselves."""
    releases = [r for r in (render_cluster_autoscaler_release(spec), render_efa_device_plugin_release(spec)) if r]
    documents = [render_driver_installer()] if needs_driver_installer(spec) else []
    return NodeAddonsRender(tuple(releases), tuple(documents))


def render_node_addon_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """`DIR/helm/<release>.yaml` per release and `DIR/kubernetes/gke-nvidia-driver-installer.yaml`."""
    r = render_node_addons(spec)
    out = [Artifact(ArtifactKind.HELM, rel["name"], (rel,)) for rel in r.releases]
    if r.documents:
        out.append(
            Artifact(
                ArtifactKind.KUBERNETES,
                DRIVER_ARTIFACT,
                r.documents,
                (
                    Finding(
                        "GKE driver installer",
                        "Google's COS DaemonSet installs the NVIDIA driver that gpuDriverVersion "
                        "INSTALLATION_DISABLED leaves out",
                        Severity.INFO,
                    ),
                ),
            )
        )
    return out
