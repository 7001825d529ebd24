"""`synth`: render the whole desired state offline into DIR/kubernetes, DIR/helm and DIR/nodepools.

Each domain registers its renderer once in `RENDERERS`; a renderer is a pure function spec -> [Artifact].
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .admission.render import render_admission_artifacts
from .artifacts import KINDS, Artifact, ArtifactKind
from .autoscaling.render import render_autoscaling_artifacts
from .errors import GpuPlatformError, RenderError
from .gpu_operator.render import render_gpu_operator_artifacts
from .inputs import MAX_SPEC_BYTES, InputLimitError, decode_utf8, load_json, load_yaml, read_bounded
from .nodepools.render import render_nodepool_artifacts
from .observability.render import render_observability_artifacts
from .queues.render import render_queue_artifacts
from .spec import PlatformSpec

__all__ = [
    "MANIFEST",
    "RENDERERS",
    "SynthConflictError",
    "previous_node_labels",
    "render_all",
    "write_artifacts",
    "dump_documents",
]

Renderer = Callable[[PlatformSpec], list[Artifact]]

RENDERERS: dict[str, Renderer] = {
    "nodepools": render_nodepool_artifacts,
    "gpu-operator": render_gpu_operator_artifacts,
    "queues": render_queue_artifacts,
    "observability": render_observability_artifacts,
    "autoscaling": render_autoscaling_artifacts,
    "admission": render_admission_artifacts,
}


if TYPE_CHECKING:
    _BaseDumper = yaml.SafeDumper
else:
    _BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter when built with it


class _Dumper(_BaseDumper):
    """Block-style YAML that keeps key order and never emits anchors."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def dump_documents(documents: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    """YAML text of several documents, in order, keys unsorted."""
    return yaml.dump_all(list(documents), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def render_all(spec: PlatformSpec) -> list[Artifact]:
    """Every artifact of every registered domain, in registration order."""
    return [a for render in RENDERERS.values() for a in render(spec)]


MANIFEST = ".gpu-platform-synth.json"  # the files the last `synth` wrote into DIR, relative to DIR
_STAGING_PREFIX = ".gpu-platform-synth-"
_SAFE_STEM = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]{0,200}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,200}")  # one subdirectory


class SynthConflictError(GpuPlatformError):
    """`synth --out DIR` would delete or overwrite files that an earlier `synth` did not write."""


def _check_names(artifacts: list[Artifact]) -> None:
    seen: set[str] = set()
    for a in artifacts:
        if not _SAFE_STEM.fullmatch(a.name) or ".." in a.name:
            raise RenderError(
                "",
                f"artifact {a.kind}/{a.name!r} is not a safe file name; allowed: letters, digits, "
                "'.', '_' and '-', starting alphanumeric, in at most one subdirectory (validate the "
                "spec: names are DNS labels)",
            )
        rel = f"{a.kind}/{a.name}.yaml"
        if rel in seen:
            raise RenderError("", f"two artifacts would both be written to {rel}; names must be unique")
        seen.add(rel)


def _previous_manifest(out: Path) -> set[str]:
    try:
        data = load_json(read_bounded(out / MANIFEST, MAX_SPEC_BYTES, "synth manifest"))
    except (InputLimitError, ValueError):
        return set()
    files = data.get("files") if isinstance(data, dict) else None
    return {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()


def foreign_files(out: Path) -> list[str]:
    """Entries under `out` that no earlier `synth` wrote there (by its manifest), relative to `out`, sorted."""
    if not out.is_dir():
        return []
    listed = _previous_manifest(out)
    folders = {*KINDS, *(Path(f).parent.as_posix() for f in listed)}
    ours = listed | {MANIFEST}
    found = []
    for root, dirs, names in os.walk(out):
        rel_root = Path(root).relative_to(out)
        for name in names:
            rel = (rel_root / name).as_posix()
            if rel not in ours:
                found.append(rel)
        for d in list(dirs):
            rel = (rel_root / d).as_posix()
            if rel not in folders or (Path(root) / d).is_symlink():
                if rel not in found:
                    found.append(rel + "/")
                dirs.remove(d)  # never descend into (or follow) what is not ours
    return sorted(found)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE); False when the system cannot."""
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: the file system cannot exchange
        return False
    raise OSError(errno, os.strerror(errno), str(b))


_TRASH_SUFFIX = ".discarded"  # a staging directory renamed so before it is removed: ours whatever is left in it


def _clean_stale_staging(parent: Path, name: str) -> None:
    """Remove what a synth killed mid-way left next to `out`: staging directories marked as ours (a manifest,
    the discard suffix) or still empty. Anything else matching the prefix is left alone."""
    for stale in parent.glob(f"{_STAGING_PREFIX}{name}-*"):
        if not stale.is_dir() or stale.is_symlink():
            continue
        if stale.name.endswith(_TRASH_SUFFIX) or (stale / MANIFEST).exists() or not any(stale.iterdir()):
            shutil.rmtree(stale, ignore_errors=True)


def _discard(path: Path) -> None:
    """Remove a staging directory; renamed first (one atomic step), so a kill during the removal, which may take
    the manifest before the rest, still leaves a directory the next synth recognises as its own."""
    if not path.exists():
        return
    trash = path.with_name(path.name + _TRASH_SUFFIX)
    try:
        os.rename(path, trash)
    except OSError:
        trash = path
    shutil.rmtree(trash, ignore_errors=True)


def write_artifacts(artifacts: list[Artifact], out: Path, force: bool = False) -> dict[ArtifactKind, int]:
    """Write artifacts as `out`, replacing an earlier render atomically; return files per kind.

    The render is written into a staging directory next to `out` and swapped in with one rename, so an
    interrupted or failed synth leaves the earlier render whole. `out` is replaced only when everything in it was
    written by an earlier synth (its manifest lists it), or with `force`. Raises SynthConflictError or OSError.
    """
    _check_names(artifacts)
    out = Path(os.path.abspath(out))
    if out.is_symlink():
        out = out.resolve()  # replace the directory the link points to, keep the link
    if out.exists() and not out.is_dir():
        raise SynthConflictError(f"--out {out} exists and is not a directory; allowed: a directory or a new path")
    _check_replaceable(out)
    foreign = [] if force else foreign_files(out)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise SynthConflictError(
            f"--out {out} holds files an earlier synth did not write ({shown}); synth replaces "
            "the whole directory, so move them away, choose another --out, or pass --force to "
            "delete them"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    _clean_stale_staging(out.parent, out.name)
    staging = Path(tempfile.mkdtemp(prefix=f"{_STAGING_PREFIX}{out.name}-", dir=out.parent))
    # mkdtemp makes it 0700; the render becomes --out, so it gets the mode mkdir gives (readable by others under the
    # usual umask 022, for a `kubectl apply` or a CI step run as another user)
    staging.chmod(0o777 & ~_umask())
    # Marked as ours before anything else is written: a synth killed mid-write leaves a staging directory the
    # next synth recognises and removes (the manifest is rewritten with the file list at the end).
    (staging / MANIFEST).write_text(
        json.dumps({"generator": "gpu-platform synth", "files": []}) + "\n", encoding="utf-8"
    )
    try:
        counts = _write_tree(artifacts, staging)
        _swap_in(staging, out)
    finally:
        _discard(staging)
    return counts


# Directories of the Filesystem Hierarchy Standard (3.0, chapters 3 and 4) and /usr/local, /var/lib: never a render.
_SYSTEM_DIRS = frozenset(
    Path(p)
    for p in (
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/usr/bin",
        "/usr/lib",
        "/usr/local",
        "/usr/sbin",
        "/usr/share",
        "/var",
        "/var/lib",
        "/var/log",
        "/var/tmp",
    )
)


def _check_replaceable(out: Path) -> None:
    """Refuse, even with --force, to replace `/`, a system directory, the home directory or one holding it, or a
    directory holding the working directory: synth swaps the whole directory, so a slip of `--out` must not take a
    tree of unrelated files with it."""
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):
        home = None
    cwd = Path.cwd().resolve()
    what = (
        "the root directory"
        if out == Path(out.anchor)
        else "a system directory"
        if out in _SYSTEM_DIRS
        else "your home directory"
        if out == home
        else "one holding your home directory"
        if home is not None and out in home.parents
        else "the working directory or one holding it"
        if cwd == out or out in cwd.parents
        else None
    )
    if what:
        raise SynthConflictError(
            f"--out {out} is {what}; synth replaces the whole --out directory, so it never "
            "takes that one, even with --force; allowed: a new or dedicated directory such as "
            "build/<stack>"
        )


def _write_tree(artifacts: list[Artifact], root: Path) -> dict[ArtifactKind, int]:
    counts = dict.fromkeys(KINDS, 0)
    for kind in KINDS:
        (root / kind).mkdir()
    written = []
    for a in artifacts:
        rel = f"{a.kind}/{a.name}.yaml"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)  # names may hold one subdirectory (nodepools/addons/)
        (root / rel).write_text(dump_documents(a.documents), encoding="utf-8")
        written.append(rel)
        counts[a.kind] += 1
    manifest = {"generator": "gpu-platform synth", "files": sorted(written)}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return counts


def _umask() -> int:
    """The process's umask (Linux reports it in /proc/self/status; elsewhere it is set and put back)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _swap_in(staging: Path, out: Path) -> None:
    """Make `staging` be `out`; what was at `out` ends up in `staging` (deleted by the caller)."""
    if not out.exists():
        os.rename(staging, out)
        staging.mkdir()  # the caller removes it
        return
    if _exchange(staging, out):
        return
    old = Path(tempfile.mkdtemp(prefix=f"{_STAGING_PREFIX}{out.name}-", dir=out.parent))
    os.rename(out, old / "previous")
    try:
        os.rename(staging, out)
    except OSError:
        os.rename(old / "previous", out)  # put the earlier render back
        raise
    finally:
        _discard(old)
    staging.mkdir()


def previous_node_labels(out: Path) -> dict[str, dict[str, str]]:
    """Pool -> node labels, as an earlier `synth` into `out` wrote them (empty when there is none)."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted((out / ArtifactKind.NODEPOOLS).glob("*.yaml")):
        if not path.is_file():  # a FIFO or device would block the read or never end: never a render of ours
            continue
        try:
            text = decode_utf8(read_bounded(path, MAX_SPEC_BYTES, "earlier render"), path, "earlier render")
            doc = load_yaml(text, stream=True)[0]
            inputs = doc["inputs"]
            karpenter = inputs.get("spec", {}).get("template", {}).get("metadata", {}).get("labels")
            labels = inputs.get("labels") or inputs.get("nodeConfig", {}).get("labels") or karpenter or {}
            found[str(doc["name"])] = {str(k): str(v) for k, v in dict(labels).items()}
        except (InputLimitError, yaml.YAMLError, IndexError, KeyError, TypeError, AttributeError, ValueError):
            continue  # not ours, hand-edited or hostile: nothing to compare against
    return found
