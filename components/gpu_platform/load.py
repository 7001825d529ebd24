"""Read a spec from `Pulumi.<stack>.yaml` (key `gpu-platform:platform`) or a plain YAML file, and validate it."""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from .deferred import INPUT_FIELDS_NOTE, is_input
from .errors import Finding, Severity, SpecError
from .inputs import (
    MAX_DEPTH,
    MAX_SPEC_BYTES,
    MAX_VALUES,
    YAML_LOADER,
    InputLimitError,
    check_shape,
    decode_utf8,
    load_json,
    load_yaml,
    read_bounded,
    source_label,
)
from .names import shortened
from .spec import PlatformSpec
from .validation import check_spec, ensure_valid

__all__ = [
    "YAML_LOADER",
    "field_path",
    "load_config_json",
    "load_spec",
    "parse_spec",
    "pydantic_findings",
    "read_spec_data",
    "revalidate",
    "value_at",
]

CONFIG_KEY = "gpu-platform:platform"


def read_spec_data(path: str | Path, notes: list[Finding] | None = None) -> dict[str, Any]:
    """The raw spec object in a file: a Pulumi stack config or a plain spec. Notes about the file (an ESC
    environment whose values are not seen offline) are appended to `notes`."""
    try:
        data = load_yaml(decode_utf8(read_bounded(path, MAX_SPEC_BYTES, "spec"), path, "spec"))
    except InputLimitError as e:
        raise SpecError([Finding("", str(e))], source_label(path)) from None
    except yaml.YAMLError as e:
        raise SpecError([Finding("", f"not valid YAML: {_yaml_problem(e)}")], source_label(path)) from None
    path = source_label(path)  # how the messages below name it
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"{_kind(data)} ({shortened(data)})"
        raise SpecError(
            [
                Finding(
                    "",
                    f"{path} holds {got}; allowed: a mapping, either the spec itself or a "
                    f"Pulumi stack config with config: {CONFIG_KEY}: {{...}}",
                )
            ],
            str(path),
        )
    config = data.get("config", data) if isinstance(data.get("config"), dict) else data
    if CONFIG_KEY in config:
        if "environment" in data and notes is not None:
            notes.append(
                Finding(
                    "environment",
                    f"the Pulumi ESC environments {shortened(data['environment'])} are not "
                    "resolved offline: values they set are not seen here; check the resolved config with "
                    "`pulumi config --json --stack <stack> | gpu-platform validate --config-json -`",
                    Severity.INFO,
                )
            )
        entry = config[CONFIG_KEY]
        # `{"value": ..., "secret": ...}` is how `pulumi config --json` prints an entry; in a stack file's config it
        # is a spec with those keys, which the program would read as it is.
        data = _json_text(entry if config is not data else _resolved(entry), path)
        if secrets := _secure_values(data):
            raise SpecError(
                [
                    Finding(
                        where,
                        "an encrypted Pulumi secret ({secure: ...}), which is not readable offline; allowed: a plain "
                        "value, or resolve the stack first: `pulumi config --json --show-secrets --stack <stack> | "
                        "gpu-platform validate --config-json -`",
                    )
                    for where in secrets
                ],
                str(path),
            )
    elif "environment" in data:
        raise SpecError(
            [
                Finding(
                    "environment",
                    f"no {CONFIG_KEY!r} key in this stack config, and its Pulumi ESC "
                    "environments are not resolved offline; run `pulumi config --json --stack <stack> > "
                    "config.json` and give that file instead",
                )
            ],
            str(path),
        )
    elif "config" in data:
        raise SpecError([Finding("config", _missing_key(data["config"]))], str(path))
    elif hint := _other_kind(data):
        raise SpecError([Finding("", hint)], str(path))
    if not isinstance(data, dict):
        got = "empty (null)" if data is None else f"{_kind(data)} ({shortened(data)})"
        raise SpecError([Finding(CONFIG_KEY, f"is {got}; allowed: a mapping (the spec object)")], str(path))
    return data


def _missing_key(config: Any) -> str:
    """No spec key in a stack config: the keys it has, and the one it likely meant (a typo, or another project's
    name before `:platform`)."""
    keys = sorted(str(k) for k in config) if isinstance(config, dict) else []
    shown = ", ".join(keys[:10]) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")
    close = (
        difflib.get_close_matches(CONFIG_KEY, keys, n=1, cutoff=0.8) or [k for k in keys if k.endswith(":platform")][:1]
    )
    if close:
        return (
            f"no {CONFIG_KEY!r} key in this stack config (it has {shown}); if {close[0]!r} holds the spec, rename "
            f"it to {CONFIG_KEY!r}, the key the program reads"
        )
    return f"no {CONFIG_KEY!r} key in this stack config (it has {shown or 'no keys'}); put the spec under it"


_DEMAND_TIER_KEYS = {"gpus", "mig", "seats"}
# What `pulumi stack init` writes into a stack file before any config.
_STACK_FILE_KEYS = {"encryptionsalt", "secretsprovider", "encryptedkey", "environment"}


def _other_kind(data: dict[str, Any]) -> str | None:
    """What the file is, when it is plainly not a spec: a Pulumi project file or a planner demand."""
    if data and set(data) <= _STACK_FILE_KEYS:
        return (
            "this is a Pulumi stack file without config (only "
            f"{', '.join(sorted(data))}); allowed: the spec under config: {CONFIG_KEY}: {{...}}"
        )
    if "apiVersion" in data and "kind" in data and "nodePools" not in data:
        return (
            f"this is a Kubernetes object ({shortened(data['kind'])}); allowed: a spec. `gpu-platform explain "
            "WORKLOAD --spec SPEC` takes a workload manifest"
        )
    if "runtime" in data and "name" in data and "nodePools" not in data:
        return (
            "this is a Pulumi project file (name, runtime); allowed: a stack file (Pulumi.<stack>.yaml, the spec "
            f"under config: {CONFIG_KEY}) or a spec file"
        )
    tiers = data.get("tiers")
    demand_tiers = isinstance(tiers, list) and any(isinstance(t, dict) and _DEMAND_TIER_KEYS & set(t) for t in tiers)
    if demand_tiers and "nodePools" not in data:
        return (
            "this is a planner demand (tiers with gpus, mig or seats, no nodePools); allowed: a spec. Plan the "
            "demand with `gpu-platform plan FILE` and merge its spec fragment into a spec"
        )
    return None


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and "secure" in value  # Pulumi reads any such as a secret


def _secure_values(data: Any) -> list[str]:
    """Paths of the `{secure: <ciphertext>}` entries in a stack config value (Pulumi's encrypted secrets)."""
    if _is_secure(data):
        return [CONFIG_KEY]
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:  # the value was read within the YAML limits (size, values, depth)
        node, where = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            at = f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else str(key))
            if _is_secure(value):
                found.append(at)
            else:
                stack.append((value, at))
    return sorted(found)


def _json_text(entry: Any, path: str | Path) -> Any:
    """A config entry written as a JSON string is the object it holds: the program reads the entry with
    `pulumi.Config.require_object`, which parses a string value as JSON (pulumi/pulumi v3.272.0
    sdk/python/lib/pulumi/config.py `_get_object`: `json.loads`)."""
    if not isinstance(entry, str) or not entry.lstrip().startswith("{"):
        return entry
    try:
        return load_json(entry, unique_keys=True)
    except ValueError as e:
        raise SpecError(
            [
                Finding(
                    CONFIG_KEY,
                    f"a string starting with '{{' that is not valid JSON ({e}); allowed: a mapping, or its JSON text",
                )
            ],
            str(path),
        ) from None


def _resolved(entry: Any) -> Any:
    """The spec from a stack config entry, or from `pulumi config --json` output (`{"value": "<json>",
    "objectValue": {...}, "secret": false}` per key, ESC environments already resolved)."""
    if isinstance(entry, dict) and set(entry) <= {"value", "objectValue", "secret"} and "value" in entry:
        if isinstance(entry.get("objectValue"), dict):
            return entry["objectValue"]
        try:
            return load_json(entry["value"]) if isinstance(entry["value"], str) else entry["value"]
        except ValueError:
            return entry["value"]
    return entry


def read_config_json(text: str | bytes, source: str) -> dict[str, Any]:
    """The raw spec object in `pulumi config --json` output: `{"<key>": {"value": "<string>", "objectValue": ...,
    "secret": bool}}` (pulumi/pulumi pkg/cmd/pulumi/config/config.go, `configValueJSON`: a secret's value is left out
    unless `--show-secrets` is given; ESC environments are already resolved)."""
    try:
        data = load_json(text, unique_keys=True)
    except ValueError as e:
        raise SpecError(
            [Finding("", f"not valid JSON: {e}; allowed: the output of `pulumi config --json`")], source
        ) from None
    if not isinstance(data, dict):
        raise SpecError(
            [
                Finding(
                    "", f"holds {_kind(data)}; allowed: an object of config keys, as `pulumi config --json` prints it"
                )
            ],
            source,
        )
    if CONFIG_KEY not in data:
        keys = ", ".join(sorted(map(str, data))[:10]) or "none"
        raise SpecError(
            [
                Finding(
                    CONFIG_KEY, f"missing; this config has {keys}; allowed: a config with the spec under {CONFIG_KEY!r}"
                )
            ],
            source,
        )
    return _config_entry(data[CONFIG_KEY], source)


def _config_entry(entry: Any, source: str) -> dict[str, Any]:
    shape = 'allowed: {"value": "<spec as JSON>", "objectValue": {...}, "secret": false}'
    if not isinstance(entry, dict) or not set(entry) <= {"value", "objectValue", "secret"}:
        raise SpecError(
            [Finding(CONFIG_KEY, f"{shortened(entry)} is not a `pulumi config --json` entry; {shape}")], source
        )
    if "value" not in entry and "objectValue" not in entry:
        hint = (
            "it is secret and its value is not shown: run `pulumi config --json --show-secrets`"
            if entry.get("secret")
            else "it has no value"
        )
        raise SpecError([Finding(CONFIG_KEY, f"{hint}; {shape}")], source)
    value = entry.get("objectValue")
    if value is None:
        try:
            value = load_json(entry["value"]) if isinstance(entry["value"], str) else entry["value"]
        except ValueError as e:
            raise SpecError(
                [Finding(f"{CONFIG_KEY}.value", f"not valid JSON: {e}; allowed: the spec object as JSON")], source
            ) from None
    if not isinstance(value, dict):
        raise SpecError(
            [Finding(CONFIG_KEY, f"{shortened(value)} is {_kind(value)}; allowed: a mapping (the spec object)")], source
        )
    return value


def load_config_json(source: str) -> PlatformSpec:
    """Read and validate the spec in `pulumi config --json` output: a file path, or `-` for standard input."""
    label = source_label(source)
    try:
        data = read_bounded(source, MAX_SPEC_BYTES, "config")
    except InputLimitError as e:
        raise SpecError([Finding("", str(e))], label) from None
    return parse_spec(read_config_json(data, label), label)


def _yaml_problem(e: yaml.YAMLError) -> str:
    """The parser's problem and its line/column in the file (not in an in-memory string)."""
    mark = getattr(e, "problem_mark", None)
    problem = " ".join(str(x) for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x) or str(e)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark else problem


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", type(None): "null"}
    return names.get(type(value), f"a {type(value).__name__}")


def field_path(loc: tuple[Any, ...]) -> str:
    """`tiers[0].mig.profile` for the location ('tiers', 0, 'mig', 'profile')."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that owns the field at `loc` (for did-you-mean on unknown keys)."""
    model: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = next((f for n, f in model.model_fields.items() if part in (n, f.alias)), None)
        if field is None:
            return None
        model = _inner_model(field.annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _inner_model(annotation: Any) -> Any:
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


_MOST = {"too_long": "at most", "too_short": "at least"}


def _items(count: Any) -> str:
    """`1 item`, `2001 items`."""
    return f"{count} item" if count == 1 else f"{count} items"


def _finding(root: type[BaseModel], err: ErrorDetails) -> Finding:
    loc = tuple(err["loc"])
    path = field_path(loc)
    if err["type"] == "extra_forbidden":
        owner = _model_at(root, loc[:-1])
        known = [f.alias or n for n, f in owner.model_fields.items()] if owner else []
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return Finding(path, f"unknown key{hint}; allowed: {', '.join(known)}" if known else "unknown key")
    if err["type"] == "missing":
        return Finding(path, "missing; this field is required")
    if err["type"] == "value_error" and err.get("ctx", {}).get("error") is not None:
        return Finding(field_path(loc[:-1]) if loc[-1:] == ("[key]",) else path, str(err["ctx"]["error"]))
    value = err.get("input")
    if is_input(value):
        return Finding(path, f"a Pulumi Input; allowed: a plain value. {INPUT_FIELDS_NOTE}")
    if err["type"] == "invalid_key" or loc[-1:] == ("[key]",):
        key_owner = loc[:-1] if err["type"] == "invalid_key" else loc[:-2]
        return Finding(field_path(key_owner), f"key {value!r} is {_kind(value)}; allowed: string keys (quote it)")
    shown = (
        shortened(value)
        if not isinstance(value, dict | list)
        else ("a mapping" if isinstance(value, dict) else "a list")
    )
    ctx = err.get("ctx") or {}
    if err["type"] in ("too_long", "too_short"):
        bound = ctx.get("max_length") if err["type"] == "too_long" else ctx.get("min_length")
        count = ctx.get("actual_length", len(value) if isinstance(value, list | dict | str) else "?")
        return Finding(path, f"{_items(count)}; allowed: {_MOST[err['type']]} {_items(bound)}")
    if err["type"] in ("model_type", "model_attributes_type", "dict_type"):
        model = _model_at(root, loc)
        keys = f" with keys {', '.join(f.alias or n for n, f in model.model_fields.items())}" if model else ""
        return Finding(path, f"{shown}: not a mapping; allowed: a mapping{keys}")
    hint = "; quote it in YAML" if err["type"] == "string_type" and isinstance(value, int | float) else ""
    if err["type"] in ("bool_type", "bool_parsing"):
        hint = "; allowed: true or false"
    return Finding(path, f"{shown}: {err['msg']}{hint}")


def pydantic_findings(root: type[BaseModel], error: ValidationError) -> list[Finding]:
    """One Finding per pydantic error: camelCase field path, bad value, message, did-you-mean for unknown keys."""
    return [_finding(root, err) for err in error.errors()]


def parse_spec(data: dict[str, Any], source: str | None = None) -> PlatformSpec:
    """Validate a raw spec object: structure and every cross-field rule, all errors at once. Raises SpecError."""
    try:
        check_shape(data, MAX_VALUES, MAX_DEPTH)
    except ValueError as e:
        raise SpecError([Finding("", f"spec too large: {e}")], source) from None
    try:
        spec = PlatformSpec.model_validate(data)
    except ValidationError as e:
        raise SpecError(pydantic_findings(PlatformSpec, e) + _rule_errors_elsewhere(data, e), source) from None
    if infinite := _non_finite(data):  # in free-form values (valuesOverrides ...); typed fields reject them above
        raise SpecError(infinite + check_spec(spec), source)
    ensure_valid(spec, source)
    return spec


def _non_finite(data: Any, path: str = "") -> list[Finding]:
    """NaN and infinities anywhere in plain data: JSON, Kubernetes and Helm values cannot carry them."""
    if isinstance(data, float) and not math.isfinite(data):
        return [Finding(path, f"{data}: not a finite number; allowed: a finite number")]
    if isinstance(data, dict):
        return [f for k, v in data.items() for f in _non_finite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(data, list | tuple):
        return [f for i, v in enumerate(data) for f in _non_finite(v, f"{path}[{i}]")]
    return []


def revalidate(spec: PlatformSpec) -> PlatformSpec:
    """`spec` built again from its field values, so each field is checked: `model_copy(update=...)` sets values
    without validation (a bad cluster name, an Output where a plain value belongs, an Output not yet wrapped as a
    deferred value). Values already checked come back as they are. Raises SpecError with every field's error."""
    try:
        return PlatformSpec.model_validate(_field_values(spec))
    except ValidationError as e:
        raise SpecError(pydantic_findings(PlatformSpec, e)) from None


def _field_values(node: Any) -> Any:
    """Models as mappings of the values of their set fields (camelCase keys; defaults stay defaults and unset),
    recursively; everything else as it is."""
    if isinstance(node, BaseModel):
        fields = type(node).model_fields
        return {fields[name].alias or name: _field_values(getattr(node, name)) for name in node.model_fields_set}
    if isinstance(node, list | tuple):
        return [_field_values(v) for v in node]
    if isinstance(node, dict):
        return {k: _field_values(v) for k, v in node.items()}
    return node


def _rule_errors_elsewhere(data: dict[str, Any], error: ValidationError) -> list[Finding]:
    """Cross-field errors of the objects the structural errors leave untouched.

    Each offending key is dropped; when what remains is a valid structure, the rules run on it and report what
    they find outside the objects that held a structural error (those are fixed first). Otherwise nothing.
    """
    repaired = _copy(data)
    touched: set[str] = set()
    for err in error.errors():
        loc = tuple(err["loc"])
        parent = value_at(repaired, loc[:-1])
        if not loc or not isinstance(parent, dict) or loc[-1] not in parent:
            return []
        del parent[loc[-1]]
        touched.add(field_path(loc[:-1]) if len(loc) > 1 else field_path(loc))
    try:
        spec = PlatformSpec.model_validate(repaired)
    except ValidationError:
        return []
    return [
        f
        for f in check_spec(spec)
        if f.severity == Severity.ERROR
        and not any(f.path == t or f.path.startswith((t + ".", t + "[")) for t in touched)
    ]


def _copy(node: Any) -> Any:
    """A copy of the mappings and lists of `node`; other values shared (a Pulumi Output cannot be deep-copied)."""
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node


def value_at(node: Any, loc: tuple[Any, ...]) -> Any:
    """The value at `loc` in plain data, or None when there is none."""
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def load_spec(path: str | Path, notes: list[Finding] | None = None) -> PlatformSpec:
    """Read and validate the spec in `path`. Raises SpecError with every error found; notes about the file itself
    are appended to `notes`."""
    return parse_spec(read_spec_data(path, notes), source_label(path))
