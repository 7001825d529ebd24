"""`synth`: render the whole desired state offline into DIR/kubernetes, DIR/helm and DIR/nodepools.

Each domain registers its renderer once in `RENDERERS`; a renderer is a pure function spec -> [Artifact].
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import yaml

from .admission.render import render_admission_artifacts
from .artifacts import KINDS, Artifact
from .autoscaling.render import render_autoscaling_artifacts
from .gpu_operator.render import render_gpu_operator_artifacts
from .load import YAML_LOADER
from .nodepools.render import render_nodepool_artifacts
from .observability.render import render_observability_artifacts
from .queues.render import render_queue_artifacts
from .spec import PlatformSpec

__all__ = ["RENDERERS", "Renderer", "previous_node_labels", "render_all", "write_artifacts"]

Renderer = Callable[[PlatformSpec], list[Artifact]]

RENDERERS: dict[str, Renderer] = {
    "nodepools": render_nodepool_artifacts,
    "gpu-operator": render_gpu_operator_artifacts,
    "queues": render_queue_artifacts,
    "observability": render_observability_artifacts,
    "autoscaling": render_autoscaling_artifacts,
    "admission": render_admission_artifacts,
}


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml's emitter when built with it
    """Block-style YAML that keeps key order and never emits anchors."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def dump_documents(documents: tuple[dict, ...] | list[dict]) -> str:
    """YAML text of several documents, in order, keys unsorted."""
    return yaml.dump_all(list(documents), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def render_all(spec: PlatformSpec) -> list[Artifact]:
    """Every artifact of every registered domain, in registration order."""
    return [a for render in RENDERERS.values() for a in render(spec)]


def write_artifacts(artifacts: list[Artifact], out: Path) -> dict[str, int]:
    """Write artifacts under `out` (replacing what a previous synth wrote there); return files per kind."""
    counts = dict.fromkeys(KINDS, 0)
    for kind in KINDS:
        target = out / kind
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
    for a in artifacts:
        path = out / a.kind / f"{a.name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)  # names may hold one subdirectory (nodepools/addons/)
        path.write_text(dump_documents(a.documents))
        counts[a.kind] += 1
    return counts


def previous_node_labels(out: Path) -> dict[str, dict[str, str]]:
    """Pool -> node labels, as an earlier `synth` into `out` wrote them (empty when there is none)."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted((out / "nodepools").glob("*.yaml")):
        try:
            doc = next(iter(yaml.load_all(path.read_text(), Loader=YAML_LOADER)))
            inputs = doc["inputs"]
            karpenter = inputs.get("spec", {}).get("template", {}).get("metadata", {}).get("labels")
            labels = inputs.get("labels") or inputs.get("nodeConfig", {}).get("labels") or karpenter or {}
            found[doc["name"]] = dict(labels)
        except (OSError, yaml.YAMLError, StopIteration, KeyError, TypeError, AttributeError):
            continue  # not ours, or hand-edited: nothing to compare against
    return found
