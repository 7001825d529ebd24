"""What renderers produce: plain documents grouped into files, plus Helm release documents and deep-merge."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .errors import Finding, OverrideConflictError

__all__ = ["KINDS", "Artifact", "ArtifactKind", "deep_merge", "helm_release"]


class ArtifactKind(StrEnum):
    """The folder of `synth --out DIR` an artifact is written to."""

    KUBERNETES = "kubernetes"  # plain Kubernetes documents
    HELM = "helm"  # Helm release documents
    NODEPOOLS = "nodepools"  # one cloud node pool per file (and its add-ons)


KINDS = tuple(ArtifactKind)


@dataclass(frozen=True)
class Artifact:
    """One output file of `synth`: `DIR/<kind>/<name>.yaml` holding `documents` (plain dicts)."""

    kind: ArtifactKind
    name: str  # file stem
    documents: tuple[dict[str, Any], ...]
    notes: tuple[Finding, ...] = field(default=())  # for the synth summary, printed as `note: <finding>`

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"artifact kind {self.kind!r} not in {tuple(k.value for k in KINDS)}")
        object.__setattr__(self, "kind", ArtifactKind(self.kind))


def helm_release(
    name: str, chart: str, repository: str, version: str, namespace: str, values: dict[str, Any]
) -> dict[str, Any]:
    """The document `synth` writes to `DIR/helm/<name>.yaml` and the component passes to `helm.v3.Release`."""
    return {
        "name": name,
        "chart": chart,
        "repository": repository,
        "version": version,
        "namespace": namespace,
        "values": values,
    }


def _copied(value: Any) -> Any:
    """A copy of the maps and lists in `value`; other values (strings, numbers, Pulumi Outputs and secrets,
    which cannot be deep-copied) are shared as they are."""
    if isinstance(value, Mapping):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def deep_merge(base: Mapping[str, Any], overrides: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """`base` with `overrides` merged in recursively (overrides win); a map/non-map clash is an error."""
    out: dict[str, Any] = _copied(dict(base))
    for key, value in overrides.items():
        here = f"{path}.{key}" if path else str(key)
        if key in out and isinstance(out[key], Mapping) and isinstance(value, Mapping):
            out[key] = deep_merge(out[key], value, here)
        elif key in out and isinstance(out[key], Mapping) != isinstance(value, Mapping) and value is not None:
            raise OverrideConflictError(here, out[key], value)
        else:
            out[key] = _copied(value)
    return out
