"""Reading untrusted input files with bounds: size, nesting depth, expanded size (YAML aliases), duplicate keys.

Every limit is checked before the expensive step it protects: the file size before reading it, the depth and the
alias-expanded node count on libyaml's event stream before any Python object is built, so a hostile file fails in
milliseconds with a message naming the limit instead of hanging, crashing the parser or exhausting memory.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Protocol

import yaml

from .errors import GpuPlatformError

__all__ = [
    "DuplicateKeyError",
    "InputLimitError",
    "MAX_DEPTH",
    "MAX_DOCUMENT_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_DOCUMENT_CONTAINERS",
    "MAX_SPEC_BYTES",
    "MAX_VALUES",
    "YAML_LOADER",
    "check_shape",
    "load_json",
    "load_yaml",
    "named_source",
    "source_label",
    "located",
    "read_bounded",
    "decode_utf8",
]

MAX_SPEC_BYTES = 4 * 1024 * 1024  # a spec or demand file; the 10,000-GPU / 1,000-team spec is ~0.2 MB
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024  # a `pulumi stack export` / `preview --json` document for `audit`
# Objects and arrays of an audited document, counted as `{` and `[` in its text before parsing: an empty object
# costs Python 64 bytes for 3 bytes of JSON, so 32 MiB of `{},{},...` would take 700 MB; this bound keeps any
# document under about 600 MB (4 M containers at 64-120 bytes, or 8 M floats at 32 bytes in 32 MiB).
MAX_DOCUMENT_CONTAINERS = 4_000_000
MAX_VALUES = 100_000  # scalars and collections of a spec, each alias counted as the size of what it repeats
MAX_DEPTH = 64  # nested mappings / lists of a spec
MAX_DOCUMENT_DEPTH = 256  # of an audited document (Kubernetes objects nest deeper than a spec)

_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML is built with it
_MAX_INT_DIGITS = 4300  # CPython's int/str conversion limit (sys.get_int_max_str_digits() default)


class _Mark(Protocol):
    line: int  # 0-based


def _at(mark: _Mark | None) -> str:
    """`line N: ` of a parser event (every event the parser emits has a start mark)."""
    return f"line {mark.line + 1}: " if mark is not None else ""


def _libyaml_version() -> tuple[int, ...]:
    try:
        from yaml import _yaml
    except ImportError:
        return ()
    return tuple(_yaml.get_version())


# libyaml 0.2.5 and later stop at 1,000 nested levels; without an anchor a file cannot expand beyond its own size,
# so the event pre-pass (about a third of the parse time) is needed only with anchors or an older parser.
_LIBYAML_LIMITS_NESTING = _BASE_LOADER is not yaml.SafeLoader and _libyaml_version() >= (0, 2, 5)


class InputLimitError(GpuPlatformError):
    """An input file exceeds a size, depth or expansion limit, or cannot be decoded."""


class _UniqueKeyLoader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """Safe loader that rejects a key repeated in one mapping (YAML 1.2 requires unique keys)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                # JSON, Kubernetes objects, Helm values and Pulumi config objects have string keys only; Python
                # would also make 1 and true one key.
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"found key {_key_shown(key)}, which is not a string; allowed: string keys"
                    + (f" (quote it: {_short(str(key_node.value))})" if isinstance(key_node, yaml.ScalarNode) else ""),
                    key_node.start_mark,
                )
            first = seen.setdefault(key, key_node)
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {_short(key)} (first at line {first.start_mark.line + 1}); "
                    "a key may appear once per mapping",
                    key_node.start_mark,
                )
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """A value of the node's tag, or a constructor error with its line for an explicit tag it does not fit
        (`!!float gpu`, `!!map x`): PyYAML raised ValueError, KeyError or AttributeError from its constructors."""
        kind = _NODE_KIND.get(node.tag)
        if kind is not None and not isinstance(node, kind[0]):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the tag {_tag_name(node.tag)} needs {kind[1]}; allowed: a value of that kind",
                node.start_mark,
            )
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, KeyError, AttributeError, TypeError, IndexError, OverflowError):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{_short(node.value)} is not a {_tag_name(node.tag)} value; allowed: a value of that type, or no tag",
                node.start_mark,
            ) from None

    def construct_as_text(self, node: yaml.ScalarNode) -> str:
        """The scalar's text: what go-yaml gives for `=`, a `<<` that is not a key, and a date or time given the
        explicit tag !!timestamp (decoded into an interface, then JSON, it is the text)."""
        return str(self.construct_scalar(node))

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer, or a constructor error for one longer than CPython converts from text."""
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > _MAX_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"an integer of {digits:,} digits is too large for a number; allowed: at most "
                f"{_MAX_INT_DIGITS:,} digits",
                node.start_mark,
            )
        value: int = super().construct_yaml_int(node)
        return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _UniqueKeyLoader.construct_yaml_int)
for _tag in ("value", "merge", "timestamp"):
    _UniqueKeyLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _UniqueKeyLoader.construct_as_text)

_SCALAR = (yaml.ScalarNode, "a single value, not a list or mapping")
_NODE_KIND: dict[str, tuple[type, str]] = {
    **{
        f"tag:yaml.org,2002:{t}": _SCALAR
        for t in ("str", "int", "float", "bool", "null", "timestamp", "value", "merge", "binary")
    },
    "tag:yaml.org,2002:map": (yaml.MappingNode, "a mapping"),
    "tag:yaml.org,2002:seq": (yaml.SequenceNode, "a list"),
}


def _tag_name(tag: str) -> str:
    return _short(tag.replace("tag:yaml.org,2002:", "!!"), 40).strip("'")


def _refuse_tag(loader: _UniqueKeyLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"the tag {node.tag.replace('tag:yaml.org,2002:', '!!')} makes a value JSON has no place for; allowed: "
        "strings, numbers, true / false, null, lists and mappings",
        node.start_mark,
    )


def _float_or_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | str:
    """A float, or the text of one too large for a float (`1e400`): go-yaml v2's `resolve` keeps a value whose
    `strconv.ParseFloat` fails as a string (gopkg.in/yaml.v2 v2.4.0 resolve.go), so Kubernetes reads it as a
    quantity's text rather than an infinity; `.inf` stays infinite."""
    value = loader.construct_yaml_float(node)
    if math.isinf(value) and "inf" not in str(node.value).lower():
        return str(node.value)
    return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _float_or_text)

# PyYAML's safe loader would make bytes, a set or a list of pairs: none reaches Kubernetes, Helm or the spec as JSON.
for _tag in ("binary", "set", "omap", "pairs"):
    _UniqueKeyLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag)


def _as_pulumi_reads(resolvers: dict[str, list[tuple[str, re.Pattern[str]]]]) -> dict[str, list[Any]]:
    """PyYAML's implicit types, with numbers and dates read as Pulumi reads `Pulumi.<stack>.yaml` and kubectl
    reads a manifest (go-yaml v2 `resolve` / `decode`, gopkg.in/yaml.v2 v2.4.0, resolve.go and decode.go; v3
    does the same for these): no base-60 numbers (`1:30` stays a string, not 90), a float with an exponent and
    no dot (`1e3`), and a date or time left as the string it is (go-yaml sets a timestamp-like value decoded
    into an interface as a string). Booleans, nulls, other integers (`010` is 8, `0x1F` 31) are as before."""
    dropped = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp"}
    out = {ch: [(tag, rx) for tag, rx in entries if tag not in dropped] for ch, entries in resolvers.items()}
    for ch in "-+0123456789.":  # integers first: the float pattern also matches digits alone ("08" is 8.0)
        out.setdefault(ch, [])
        if ch != ".":
            out[ch].append(("tag:yaml.org,2002:int", _INT))
        out[ch].append(("tag:yaml.org,2002:float", _FLOAT))
    return out


_INT = re.compile(r"^[-+]?(?:0b[01_]+|0o[0-7_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_UniqueKeyLoader.yaml_implicit_resolvers = _as_pulumi_reads(_BASE_LOADER.yaml_implicit_resolvers)
YAML_LOADER = _UniqueKeyLoader


def _key_shown(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return f"{_short(key)} (a number)"
    return f"of type {type(key).__name__}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


STDIN = "-"  # a file argument of `-` is standard input


def source_label(path: str | Path) -> str:
    """How messages name a file argument: `standard input` for `-`."""
    return "standard input" if str(path) == STDIN else str(path)


def named_source(path: str | Path) -> str:
    """How a message that names what was read goes on (`spec x.yaml`, `spec on standard input`)."""
    return "on standard input" if str(path) == STDIN else str(path)


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of `path` (standard input for `-`), or InputLimitError when it is larger than `limit` (checked
    before reading it all)."""
    try:
        if str(path) == STDIN:
            if sys.stdin is None or getattr(sys.stdin, "buffer", None) is None:
                raise InputLimitError(f"cannot read {what} on standard input: it is closed")
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with Path(path).open("rb") as f:
                data = f.read(limit + 1)
    except OSError as e:
        raise InputLimitError(f"cannot read {what} {named_source(path)}: {e.strerror or e}") from None
    if len(data) > limit:
        raise InputLimitError(
            f"{what} {named_source(path)} is larger than {limit // (1024 * 1024)} MiB; allowed: at most {limit:,} bytes"
        )
    return data


def decode_utf8(data: bytes, path: str | Path, what: str) -> str:
    """`data` as text, or InputLimitError naming the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputLimitError(
            f"{what} {named_source(path)} is not UTF-8 text: byte {e.object[e.start : e.start + 1]!r} at offset "
            f"{e.start}; allowed: UTF-8"
        ) from None


def _yaml_shape(text: str, max_values: int, max_depth: int) -> None:
    """Walk libyaml's events (no objects built): nesting depth and the size once every alias is expanded."""
    total = 0
    sizes: dict[str, int] = {}
    open_: list[tuple[str | None, int]] = []
    for event in yaml.parse(text, Loader=_BASE_LOADER):
        if isinstance(event, yaml.AliasEvent):
            total += sizes.get(event.anchor, 1) if event.anchor is not None else 1
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            total += 1
            open_.append((event.anchor, total))
            if len(open_) > max_depth:
                raise InputLimitError(
                    f"{_at(event.start_mark)}nesting depth over {max_depth}; allowed: at "
                    f"most {max_depth} nested mappings and lists"
                )
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            anchor, start = open_.pop()
            if anchor:
                sizes[anchor] = total - start + 1
        if total > max_values:
            raise InputLimitError(
                f"{_at(event.start_mark)}more than {max_values:,} values once aliases (*name) are "
                f"expanded; allowed: at most {max_values:,}"
            )


def located(error: yaml.reader.ReaderError, text: str) -> yaml.MarkedYAMLError:
    """A reader error (a NUL or other control character) with the line and column of the character: the reader
    reports only its offset in the text."""
    pos = error.position
    if error.encoding != "unicode":  # libyaml's offset is in the UTF-8 bytes of the text; PyYAML's in characters
        pos = len(text.encode("utf-8", "surrogatepass")[: max(pos, 0)].decode("utf-8", "ignore"))
    pos = min(max(pos, 0), len(text))
    line = text.count("\n", 0, pos)
    column = pos - (text.rfind("\n", 0, pos) + 1)
    char = error.character
    code = f"#x{ord(char):04x}" if isinstance(char, str) else f"#x{char:04x}"
    return yaml.MarkedYAMLError(
        problem=f"the character {code} is not allowed in YAML ({error.reason}); remove it",
        problem_mark=yaml.Mark("<text>", pos, line, column, None, 0),  # no buffer: no snippet,
    )


def load_yaml(text: str, max_values: int = MAX_VALUES, max_depth: int = MAX_DEPTH, *, stream: bool = False) -> Any:
    """Parse YAML text within the limits; duplicate keys rejected. Raises InputLimitError or yaml.YAMLError.

    With `stream`, every document of a multi-document file, as a list (the limits apply to the whole file).
    """
    try:
        if "&" in text or not _LIBYAML_LIMITS_NESTING:
            _yaml_shape(text, max_values, max_depth)  # anchors (alias bombs), or a parser without a nesting limit
        if stream:
            return list(yaml.load_all(text, Loader=YAML_LOADER))
        return yaml.load(text, Loader=YAML_LOADER)
    except yaml.reader.ReaderError as e:
        raise located(e, text) from None
    except RecursionError:
        raise InputLimitError(
            f"nesting depth over what Python can build; allowed: at most {max_depth} nested mappings and lists"
        ) from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is too large for a number")
    return value


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > _MAX_INT_DIGITS:
        raise ValueError(f"an integer of {digits:,} digits ({text[:12]}...) is too large for a number")
    return int(text)


class DuplicateKeyError(ValueError):
    """A JSON object that names one key twice (read with `unique_keys`)."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"duplicate key {_short(key)} in one object; a key may appear once per object")
        out[key] = value
    return out


def load_json(text: str | bytes, max_containers: int | None = None, *, unique_keys: bool = False) -> Any:
    """Parse strict JSON (no NaN/Infinity, no number that overflows a float). Raises ValueError with the reason,
    InputLimitError when the text holds more than `max_containers` objects and arrays (an upper bound: brackets
    inside strings count too, so a document can only be rejected early, never parsed beyond the bound).

    With `unique_keys`, a key given twice in one object raises DuplicateKeyError (Python's parser keeps the last
    silently: in a config, the value a reader of the file sees first would not be the one that applies).

    Nesting is bounded by the parser itself (its recursion limit, about 1,000 levels): nothing that reads the
    result recurses without a bound of its own.
    """
    if max_containers is not None:
        brackets = (b"{", b"[") if isinstance(text, bytes) else ("{", "[")
        count = text.count(brackets[0]) + text.count(brackets[1])  # type: ignore[arg-type]
        if count > max_containers:
            raise InputLimitError(f"{count:,} JSON objects and arrays; allowed: at most {max_containers:,}")
    try:
        return json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite,
            parse_int=_bounded_int,
            object_pairs_hook=_unique_pairs if unique_keys else None,
        )
    except RecursionError:
        raise ValueError("nested deeper than Python can parse (about 1,000 levels of JSON nesting)") from None


def check_shape(data: Any, max_values: int | None = None, max_depth: int = MAX_DEPTH) -> None:
    """Iteratively check nesting depth (and, when given, the number of values) of plain data. Raises ValueError."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if max_values is not None and count > max_values:
            raise ValueError(f"more than {max_values:,} values; allowed: at most {max_values:,}")
        if isinstance(node, dict | list):
            if depth > max_depth:
                raise ValueError(
                    f"nesting depth over {max_depth}; allowed: at most {max_depth} nested mappings and lists"
                )
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
