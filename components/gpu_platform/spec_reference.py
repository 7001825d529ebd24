"""The spec reference page of the docs, generated from the models.

`python -m gpu_platform.spec_reference docs/reference/spec.md` (run by `make docs`) rewrites the page;
without an argument it prints it. A test fails when the committed page differs from what this renders.
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from .spec import PlatformSpec

__all__ = ["VALIDATION_REQUIRED", "render_spec_reference_page", "write_if_changed"]

# Fields the model leaves optional (so a partial spec still parses and every error is reported at once) but the
# cross-field rules require; the key is "<Model>.<alias>", the value says when the rule applies.
VALIDATION_REQUIRED: dict[str, str] = {
    "AwsSpec.nodeRoleArn": "required by validation (EKS node groups run as this role)",
    "AwsSpec.subnetIds": "required by validation unless every pool sets `nodePools[].aws.subnetIds`",
}

_INTRO = """# Spec reference

Every field of `PlatformSpec` (`gpu_platform.spec`), the object under the stack config key
`gpu-platform:platform` or at the top of a plain spec YAML. Field names are camelCase on the wire (snake_case
works too when building the models in Python); unknown keys are errors, and so are `true` and `false` in an
int or float field (YAML would make `maxSize: true` one node). **required** means the field has no
default; *required by validation* means the model accepts it missing but `gpu-platform validate` (and
`GpuPlatform`) reject the spec without it. The rules that relate fields to each other are on
[Concepts](../concepts.md#validation-rules) and on each domain's page.

Generated from the models by `make docs` (`python -m gpu_platform.spec_reference docs/reference/spec.md`);
a test fails when this page is stale.
"""


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in args) + (
            " \\| null" if len(args) < len(typing.get_args(annotation)) else ""
        )
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is list:
        return f"list[{_type_name(args[0])}]"
    if origin is dict:
        return f"map[{_type_name(args[0])}, {_type_name(args[1])}]"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return getattr(annotation, "__name__", str(annotation))


def _default(model: type[BaseModel], name: str, field: Any) -> str:
    rule = VALIDATION_REQUIRED.get(f"{model.__name__}.{field.alias or name}")
    if field.is_required():
        return "**required**"
    if rule:
        return f"*{rule}*"
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            return "see below"
        return f"`{value}`" if value not in ({}, []) else "empty"
    value = field.default
    if value is PydanticUndefined or value is None:
        return "unset"
    return f"`{value.value if isinstance(value, enum.Enum) else value}`"


def _ordered_models() -> list[type[BaseModel]]:
    """PlatformSpec and every model under it, breadth first."""
    order: list[type[BaseModel]] = []
    queue: list[type[BaseModel]] = [PlatformSpec]
    while queue:
        model = queue.pop(0)
        if model in order:
            continue
        order.append(model)
        for f in model.model_fields.values():
            queue += _models(f.annotation)
    return order


def render_spec_reference(level: int = 2) -> str:
    """Markdown tables, one per model (headings at `level`), in the order they appear under PlatformSpec."""
    parts = []
    for model in _ordered_models():
        doc = (model.__doc__ or "").strip().splitlines()[0]
        rows = [
            f"{'#' * level} {model.__name__}",
            "",
            doc,
            "",
            "| field | type | default | meaning |",
            "|---|---|---|---|",
        ]
        for name, f in model.model_fields.items():
            meaning = (f.description or "").replace("|", "\\|")
            rows.append(
                f"| `{f.alias or name}` | {_type_name(f.annotation)} | {_default(model, name, f)} | {meaning} |"
            )
        parts.append("\n".join(rows))
    return "\n\n".join(parts) + "\n"


def render_spec_reference_page() -> str:
    """The whole reference page: an introduction, then one table per model."""
    return f"{_INTRO}\n{render_spec_reference()}"


def write_if_changed(path: str | Path, text: str) -> bool:
    """Write a generated page to `path` unless it already holds `text`; True when its content changed."""
    path = Path(path)
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def write_page(path: str | Path) -> bool:
    """Write the page to `path`; True when its content changed."""
    return write_if_changed(path, render_spec_reference_page())


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) > 1:
        write_page(sys.argv[1])
    else:
        print(render_spec_reference_page(), end="")
