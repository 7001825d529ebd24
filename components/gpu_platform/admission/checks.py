"""Admission checks run by `validate`: the routing engine must exist for the spec's Kubernetes version."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import Finding, RenderError
from ..spec import PlatformSpec
from .render import engine_notes, mutation_engine

__all__ = ["check_admission"]


def check_admission(spec: PlatformSpec) -> Iterator[Finding]:
    """An engine the cluster cannot serve is an error; one that needs extra cluster setup is a warning."""
    try:
        mutation_engine(spec)
    except RenderError as e:
        path, _, message = str(e).partition(": ")
        yield Finding(path, message)
        return
    for note in engine_notes(spec)[1:]:
        yield Finding("admission.mutation", note.removeprefix("admission: "), "warning")
