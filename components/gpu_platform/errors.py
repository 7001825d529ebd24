"""Exceptions raised by gpu-platform. Every user-facing error names what is wrong and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "Finding",
    "GpuPlatformError",
    "MissingExtraError",
    "OverrideConflictError",
    "RenderError",
    "Severity",
    "SpecError",
]


class Severity(StrEnum):
    """How bad a finding is: an error stops `validate` and `synth`; warnings and notes (info) are printed."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    """One validation result or render note: where (a field path, or the area a note is about), what, how bad."""

    path: str
    message: str
    severity: Severity = Severity.ERROR

    def __post_init__(self) -> None:
        if not isinstance(self.severity, Severity):
            try:
                object.__setattr__(self, "severity", Severity(self.severity))
            except ValueError:
                allowed = ", ".join(s.value for s in Severity)
                raise ValueError(f"Finding.severity: {self.severity!r}; allowed: {allowed}") from None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class GpuPlatformError(Exception):
    """Base class of every error gpu-platform raises on purpose."""


class SpecError(GpuPlatformError):
    """The platform spec is invalid; carries every error found, not only the first."""

    def __init__(self, findings: list[Finding], source: str | None = None) -> None:
        self.findings = [f for f in findings if f.severity == Severity.ERROR]
        self.source = source
        where = f" in {source}" if source else ""
        lines = "\n".join(f"  - {f}" for f in self.findings)
        super().__init__(f"{len(self.findings)} error(s){where}:\n{lines}")


class RenderError(GpuPlatformError):
    """A renderer was asked for something the upstream component cannot do.

    `path` names the spec field (`nodePools[1].sharing`, empty when the error is about no one field) and `message`
    what is wrong and what is allowed, like pulumi's `InputPropertyError(property_path, reason)`; `findings` holds
    them as a `Finding`, or every finding when a renderer refuses a spec for several at once. The text is
    `path: message`, one finding after another.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, message)
        self.path = path
        self.message = message
        self.findings: tuple[Finding, ...] = (Finding(path, message),)

    @classmethod
    def of(cls, findings: list[Finding]) -> RenderError:
        """One error for every finding (at least one); `path` and `message` are the first's."""
        first, *_ = findings
        error = cls(first.path, first.message)
        error.findings = tuple(findings)
        return error

    def __str__(self) -> str:
        return "; ".join(str(f) for f in self.findings)


class OverrideConflictError(GpuPlatformError):
    """A `valuesOverrides` / extra-fields escape hatch conflicts with a rendered value's type."""

    def __init__(self, path: str, rendered: object, override: object) -> None:
        self.path = path
        super().__init__(
            f"{path}: override of type {type(override).__name__} conflicts with rendered "
            f"{type(rendered).__name__} {rendered!r}; override the whole parent key or match its type"
        )


class MissingExtraError(GpuPlatformError, ImportError):
    """A cloud's Pulumi provider package is not installed: the extra that brings it is named (an ImportError too, so
    code that tries an import and falls back still works)."""

    def __init__(self, extra: str, what: str, cause: ImportError) -> None:
        super().__init__(
            f"{what} need {cause.name or 'a package'} ({cause}); allowed: install the {extra} extra, "
            f"pip install 'gpu-platform[{extra}]'",
            name=cause.name,
        )
