"""Exceptions raised by gpu-platform. Every user-facing error names what is wrong and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finding", "GpuPlatformError", "SpecError", "RenderError", "OverrideConflictError"]


@dataclass(frozen=True)
class Finding:
    """One validation result: where (a field path), what, and how bad."""

    path: str
    message: str
    severity: str = "error"  # error | warning | info

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class GpuPlatformError(Exception):
    """Base class of every error gpu-platform raises on purpose."""


class SpecError(GpuPlatformError):
    """The platform spec is invalid; carries every error found, not only the first."""

    def __init__(self, findings: list[Finding], source: str | None = None) -> None:
        self.findings = [f for f in findings if f.severity == "error"]
        self.source = source
        where = f" in {source}" if source else ""
        lines = "\n".join(f"  - {f}" for f in self.findings)
        super().__init__(f"{len(self.findings)} error(s){where}:\n{lines}")


class RenderError(GpuPlatformError):
    """A renderer was asked for something the upstream component cannot do."""


class OverrideConflictError(GpuPlatformError):
    """A `valuesOverrides` / extra-fields escape hatch conflicts with a rendered value's type."""

    def __init__(self, path: str, rendered: object, override: object) -> None:
        self.path = path
        super().__init__(
            f"{path}: override of type {type(override).__name__} conflicts with rendered "
            f"{type(rendered).__name__} {rendered!r}; override the whole parent key or match its type"
        )
