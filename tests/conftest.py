"""Shared fixtures: the dev spec, upstream reference data, and a recording Pulumi mock per test."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers.pulumi_mocks import mock_call

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(os.environ.get("GPU_PLATFORM_REFERENCE", ROOT.parent / "shared" / "reference"))
DEV_STACK = ROOT / "Pulumi.dev.yaml"


# Where the upstream reference files are and how to get them (docs/testing.md, "Conformance data").
REFERENCE_HELP = (
    "upstream reference data (CRDs, Helm values files) not found at {path}: put the reference "
    "folder at ../shared/reference beside the clone or set GPU_PLATFORM_REFERENCE=/path/to/reference "
    "(docs/testing.md#conformance-data)"
)
# Fixtures that make a test a conformance test: the upstream files, and promtool (Debian package `prometheus`).
CONFORMANCE_FIXTURES = frozenset({"reference", "promtool"})
_skipped_for_reference: list[str] = []


def reference_path(*parts: str) -> Path:
    """A file under ../shared/reference; skip (or fail in CI) when the reference data is absent."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"reference file missing in CI: {path}")
        pytest.skip(f"upstream reference file not found: {path} (set GPU_PLATFORM_REFERENCE)")
    return path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that uses upstream data or promtool `conformance`; without the data, skip those at once."""
    missing = not REFERENCE.is_dir() and os.environ.get("CI") != "true"
    kept = []
    for item in items:
        uses = CONFORMANCE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if uses:
            item.add_marker(pytest.mark.conformance)
        if missing and "reference" in uses:
            _skipped_for_reference.append(item.nodeid)
        else:
            kept.append(item)
    if _skipped_for_reference:  # left out as a group, reported once in the terminal summary
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid in set(_skipped_for_reference)])
        items[:] = kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line naming what was skipped for missing reference data, and how to get it."""
    if _skipped_for_reference:
        terminalreporter.write_line(
            f"conformance: skipped {len(_skipped_for_reference)} tests: " + REFERENCE_HELP.format(path=REFERENCE),
            yellow=True,
        )


@pytest.fixture(scope="session")
def reference() -> Any:
    """Callable returning paths under ../shared/reference (conformance tests)."""
    return reference_path


@pytest.fixture
def dev_data() -> dict[str, Any]:
    """The dev stack's raw spec object (a fresh copy per test, safe to mutate)."""
    return yaml.safe_load(DEV_STACK.read_text())["config"]["gpu-platform:platform"]


@pytest.fixture
def dev_spec(dev_data):
    """The dev stack's validated spec."""
    from gpu_platform.load import parse_spec

    return parse_spec(dev_data)


@dataclass
class Registered:
    """One resource registration the program made."""

    type: str
    name: str
    inputs: dict[str, Any]
    parent: str
    urn: str
    custom: bool
    protect: bool
    ignore_changes: list[str]
    delete_before_replace: bool
    aliases: list[Any] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)  # URNs this registration depends on
    retain_on_delete: bool = False
    provider: str = ""  # the provider reference (`<urn>::<id>`) the engine was told to use, '' for the default

    @property
    def parent_name(self) -> str:
        """The name part of the parent URN ('' for the stack)."""
        return self.parent.rsplit("::", 1)[-1] if self.parent else ""


class Recorder:
    """Records every resource registered under the mock monitor."""

    def __init__(self) -> None:
        self.resources: list[Registered] = []
        self.outputs: dict[str, dict[str, Any]] = {}  # component URN -> what it passed to register_outputs

    def of_type(self, typ: str) -> list[Registered]:
        """Registrations of one type token."""
        return [r for r in self.resources if r.type == typ]

    def named(self, name: str) -> Registered:
        """The registration called `name` (fails when absent)."""
        found = [r for r in self.resources if r.name == name]
        assert found, f"no resource named {name!r}; have {[r.name for r in self.resources]}"
        return found[0]

    def depends_on(self, name: str, other: str) -> bool:
        """True when the registration `name` lists `other` among its dependencies."""
        return self.named(other).urn in self.named(name).dependencies

    def run(self, program) -> Recorder:
        """Run `program()` under the mocks and wait for every registration to finish."""
        import pulumi

        @pulumi.runtime.test
        def _run():
            return program()

        _run()
        return self


@pytest.fixture
def pulumi_mocks(monkeypatch) -> Recorder:
    """A fresh mock Pulumi runtime per test that records registrations (types, names, parents, inputs, options)."""
    import pulumi
    from pulumi.runtime import mocks as m

    recorder = Recorder()

    class _Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs):
            state = dict(args.inputs)
            if args.typ == "aws:eks/cluster:Cluster":  # what the provider computes: an autoname, the API endpoint
                state = {
                    "name": f"{args.name}-0a1b2c3",
                    "endpoint": f"https://{args.name}.eks.example",
                    "certificateAuthority": {"data": "Y2VydA=="},
                    **state,
                }
            if args.typ == "aws:eks/nodeGroup:NodeGroup" and "nodeGroupNamePrefix" in state:  # the provider's suffix
                state.setdefault("nodeGroupName", state["nodeGroupNamePrefix"] + "2026113000000000000000000a")
            if args.typ == "aws:iam/role:Role":
                state = {"arn": f"arn:aws:iam::111122223333:role/{args.name}", "name": args.name, **state}
            return f"{args.name}-id", state

        def call(self, args: pulumi.runtime.MockCallArgs):
            return mock_call(args.token, args.args)

    class _Monitor(m.MockMonitor):
        def RegisterResource(self, request):
            resp = super().RegisterResource(request)
            if request.type != "pulumi:pulumi:Stack":
                inputs = m.rpc.deserialize_properties(request.object) if request.object else {}
                recorder.resources.append(
                    Registered(
                        request.type,
                        request.name,
                        inputs,
                        request.parent,
                        resp.urn,
                        request.custom,
                        request.protect,
                        list(request.ignoreChanges),
                        request.deleteBeforeReplace,
                        [a for a in getattr(request, "aliases", [])],
                        list(request.dependencies),
                        bool(getattr(request, "retainOnDelete", False)),
                        request.provider,
                    )
                )
            return resp

        def RegisterResourceOutputs(self, request):
            outputs = m.rpc.deserialize_properties(request.outputs) if request.outputs else {}
            recorder.outputs[request.urn] = outputs
            return super().RegisterResourceOutputs(request)

    mocks = _Mocks()
    pulumi.runtime.set_mocks(mocks, project="gpu-platform", stack="test", preview=False, monitor=_Monitor(mocks))
    yield recorder
    pulumi.runtime.settings.reset_options() if hasattr(pulumi.runtime.settings, "reset_options") else None


def loaded_modules() -> set[str]:
    """Names of the modules imported so far in this process."""
    return set(sys.modules)


GOLDEN = ROOT / "tests" / "golden"


@pytest.fixture
def golden():
    """compare(relative_path, text): assert `text` equals tests/golden/<relative_path>.

    Set GPU_PLATFORM_UPDATE_GOLDEN=1 (`make golden`) to rewrite the files instead.
    """

    def compare(relative: str, text: str) -> None:
        path = GOLDEN / relative
        if os.environ.get("GPU_PLATFORM_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        assert path.exists(), f"golden file {path} missing; run `make golden` to create it"
        assert text == path.read_text(), f"{relative} differs from its golden file; review, then `make golden`"

    return compare
