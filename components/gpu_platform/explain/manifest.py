"""Read a workload manifest safely: size, document, depth and node limits, and errors that say what to fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import GpuPlatformError
from ..inputs import InputLimitError, decode_utf8, located, read_bounded, source_label
from ..load import YAML_LOADER

__all__ = ["MAX_BYTES", "MAX_NODES", "ManifestError", "load_manifests"]

MAX_BYTES = 2 * 1024 * 1024  # far above any workload manifest; a bigger file is refused before parsing
MAX_DOCUMENTS = 200
MAX_DEPTH = 64
_INT64 = (-(2**63), 2**63 - 1)  # Kubernetes JSON decoding: integers are int64
# Values in the whole file, aliased ones counted every time they appear (no "billion laughs" expansion). Each
# object goes through the admission chain, whose CEL sees it converted value by value, once per matching policy
# and mutation (celpy: about 0.25 ms a value in all): 16,000 values of one pod took 5.3 s, 160,000 took 43 s.
MAX_NODES = 25_000
# explain evaluates the admission CEL once per pod template and per container in it (celpy: about 20 ms a template,
# 3 ms a container on the benchmark machine, more with a large spec); 14,000 containers in a 1.7 MB pod took 58 s
# of CPU, 50 pods of 4 containers 5 s with the 10,000-GPU spec. These bound a file to about 2.5 s of CPU there.
MAX_POD_TEMPLATES = 25
MAX_CONTAINERS = 100
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
# The deny's CEL also walks every volume, toleration and environment entry (celpy: about 1 ms each; 30,000
# volumes in a 1.6 MB pod ran for minutes), and splits every hostPath into its segments (a 900,000-segment path
# never finished): a file holds at most this many such entries, and a hostPath at most PATH_MAX characters
# (Linux include/uapi/linux/limits.h: no longer path can be mounted).
MAX_POD_LIST_ITEMS = 1_000
MAX_HOST_PATH = 4096
_POD_LISTS = ("volumes", "tolerations", "resourceClaims")
_CONTAINER_ITEMS = ("env", "envFrom", "volumeMounts")


class ManifestError(GpuPlatformError):
    """The workload manifest cannot be read (a usage error: exit 2)."""


def _check_shape(doc: Any, where: str, seen: int = 0) -> int:
    """Refuse documents nested too deep, or a file too large once aliases are expanded (`seen`: the values of the
    file's earlier documents); the values counted so far."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        seen += 1
        if depth > MAX_DEPTH:
            raise ManifestError(f"{where}: nested deeper than {MAX_DEPTH} levels; allowed: a Kubernetes manifest")
        if seen > MAX_NODES:
            raise ManifestError(
                f"{where}: the file holds more than {MAX_NODES:,} values (YAML aliases expanded); "
                "allowed: Kubernetes manifests of at most that many in one file (split it)"
            )
        if isinstance(node, int) and not isinstance(node, bool) and not _INT64[0] <= node <= _INT64[1]:
            raise ManifestError(
                f"{where}: the integer {str(node)[:40]} is outside the 64-bit range the API server "
                "decodes; allowed: -2^63 to 2^63-1"
            )
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return seen


def _what(doc: Any) -> str:
    """What a document that is no Kubernetes object is, in the user's terms."""
    tiers = doc.get("tiers") if isinstance(doc, dict) else None
    if isinstance(tiers, list) and any(isinstance(t, dict) and {"gpus", "mig", "seats"} & set(t) for t in tiers):
        return "this is a planner demand, which `gpu-platform plan` takes; WORKLOAD is a workload manifest"
    if isinstance(doc, dict) and ("nodePools" in doc or "config" in doc or "tiers" in doc):
        return "this is a spec or stack file: give it with --spec, and the workload manifest as WORKLOAD"
    kinds = {dict: "a mapping without them", list: "a list", str: "a string", type(None): "an empty document"}
    return "got " + kinds.get(type(doc), "a number or boolean")


def _objects(doc: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or not isinstance(doc.get("apiVersion"), str):
        raise ManifestError(f"{where}: not a Kubernetes object (a mapping with apiVersion and kind); {_what(doc)}")
    if doc["kind"] == "List" and isinstance(doc.get("items"), list):  # kubectl's v1 List
        return [o for i, item in enumerate(doc["items"]) for o in _objects(item, f"{where} items[{i}]")]
    if not isinstance(doc.get("metadata", {}), dict):
        raise ManifestError(f"{where}: metadata is not a mapping")
    return [doc]


def load_manifests(path: str | Path) -> list[dict[str, Any]]:
    """Every object of a (multi-document) YAML or JSON manifest file. Raises ManifestError."""
    # read with a bound, not by its reported size: a device or a pipe (/dev/zero, <(...)) reports 0 bytes
    try:
        text = decode_utf8(read_bounded(path, MAX_BYTES, "workload"), path, "workload")
    except InputLimitError as e:
        raise ManifestError(str(e)) from None
    path = source_label(path)  # how the messages below name it
    try:
        docs = []
        for doc in yaml.load_all(text, Loader=YAML_LOADER):
            docs.append(doc)
            if len(docs) > MAX_DOCUMENTS:
                raise ManifestError(f"{path}: more than {MAX_DOCUMENTS} documents")
    except yaml.YAMLError as e:
        if isinstance(e, yaml.reader.ReaderError):
            e = located(e, text)
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ManifestError(f"{path}: not valid YAML{where}: {getattr(e, 'problem', None) or e}") from None
    except RecursionError:
        raise ManifestError(f"{path}: nested too deep to parse") from None
    objects, seen = [], 0
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        where = f"{path} document {i + 1}"
        seen = _check_shape(doc, where, seen)
        objects += _objects(doc, where)
    if not objects:
        raise ManifestError(f"{path}: no Kubernetes object in the file")
    _check_pod_count(objects, path)
    return objects


def _check_pod_count(objects: list[dict[str, Any]], path: str | Path) -> None:
    """Refuse a file with more pod specs or containers than explain evaluates in bounded time."""
    templates = containers = entries = 0
    stack: list[Any] = list(objects)
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("containers"), list):
                templates += 1
                lists = [node[k] for k in _CONTAINER_LISTS if isinstance(node.get(k), list)]
                containers += sum(len(x) for x in lists)
                entries += _list_items(node, _POD_LISTS) + sum(
                    _list_items(c, _CONTAINER_ITEMS) for x in lists for c in x if isinstance(c, dict)
                )
                _check_host_paths(node, path)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if templates > MAX_POD_TEMPLATES:
        raise ManifestError(
            f"{path}: {templates:,} pod specs; allowed: at most {MAX_POD_TEMPLATES} in one file (split the manifest)"
        )
    if containers > MAX_CONTAINERS:
        raise ManifestError(
            f"{path}: {containers:,} containers in its pod specs; allowed: at most {MAX_CONTAINERS} "
            "in one file (split the manifest)"
        )
    if entries > MAX_POD_LIST_ITEMS:
        raise ManifestError(
            f"{path}: {entries:,} volumes, tolerations, resource claims and container env, envFrom "
            f"and volumeMounts entries in its pod specs; allowed: at most {MAX_POD_LIST_ITEMS:,} in one "
            "file (split the manifest)"
        )


def _list_items(node: dict[str, Any], keys: tuple[str, ...]) -> int:
    return sum(len(node[k]) for k in keys if isinstance(node.get(k), list))


def _check_host_paths(spec: dict[str, Any], path: str | Path) -> None:
    volumes = spec.get("volumes")
    volumes = volumes if isinstance(volumes, list) else []
    for v in volumes:
        host = v.get("hostPath") if isinstance(v, dict) else None
        p = host.get("path") if isinstance(host, dict) else None
        if isinstance(p, str) and len(p) > MAX_HOST_PATH:
            raise ManifestError(
                f"{path}: volume {str(v.get('name'))[:63]!r} has a hostPath of {len(p):,} characters; "
                f"allowed: at most {MAX_HOST_PATH:,} (PATH_MAX)"
            )
