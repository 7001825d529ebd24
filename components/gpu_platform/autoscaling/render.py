"""Everything the autoscaling domain renders, grouped into `synth` artifacts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..artifacts import Artifact, ArtifactKind
from ..errors import Finding, Severity
from ..spec import PlatformSpec
from .keda import render_keda_release, render_scaled_objects

__all__ = ["AutoscalingDocs", "render_autoscaling", "render_autoscaling_artifacts"]


@dataclass(frozen=True)
class AutoscalingDocs:
    """The KEDA release (None when disabled) and the ScaledObjects."""

    keda: dict[str, Any] | None = None
    scaled_objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        """`namespace/name` of every ScaledObject."""
        return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in self.scaled_objects]


def render_autoscaling(spec: PlatformSpec) -> AutoscalingDocs:
    """Every autoscaling document of the spec."""
    return AutoscalingDocs(render_keda_release(spec), render_scaled_objects(spec))


def render_autoscaling_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """`synth` files: helm/keda.yaml and kubernetes/gpu-platform-scaledobjects.yaml."""
    docs = render_autoscaling(spec)
    out = []
    if docs.keda:
        out.append(
            Artifact(
                ArtifactKind.HELM,
                "keda",
                (docs.keda,),
                (
                    Finding(
                        "autoscaling",
                        f"KEDA {docs.keda['version']}, {len(docs.scaled_objects)} queue-depth ScaledObjects",
                        Severity.INFO,
                    ),
                ),
            )
        )
    if docs.scaled_objects:
        out.append(Artifact(ArtifactKind.KUBERNETES, "gpu-platform-scaledobjects", tuple(docs.scaled_objects)))
    return out
