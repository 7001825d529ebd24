"""Drive a policy pack process the way the Pulumi engine does: start it, read its port, call it over gRPC.

Used to test the real pack (`policies/`) and to measure it, without the Pulumi CLI.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, plugin_pb2

from .config import Enforcement
from .resources import StackResource

__all__ = ["PackProcess", "PackStartError", "start_plugin", "stop_plugin"]

# Each level's EnforcementLevel number on the wire; keys are StrEnum members, so the config's plain strings find them.
_LEVELS = {
    Enforcement.ADVISORY: analyzer_pb2.ADVISORY,
    Enforcement.MANDATORY: analyzer_pb2.MANDATORY,
    Enforcement.DISABLED: analyzer_pb2.DISABLED,
    Enforcement.REMEDIATE: analyzer_pb2.REMEDIATE,
}


class PackStartError(RuntimeError):
    """The pack process did not print its port in time."""


def _analyze_request(r: StackResource) -> analyzer_pb2.AnalyzeRequest:
    return analyzer_pb2.AnalyzeRequest(type=r.type, properties=_struct(r.props), urn=r.urn, name=r.name)


def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(props)
    return s


def start_plugin(cmd: list[str], timeout: float, label: str) -> tuple[subprocess.Popen[bytes], grpc.Channel]:
    """Start a Pulumi plugin process and connect to it as the engine does: the plugin prints its gRPC port as
    the first line of stdout. Raises PackStartError (naming `label`) when no port comes within `timeout`."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    stdout = proc.stdout
    assert stdout is not None  # stdout=PIPE
    ready, _, _ = select.select([stdout], [], [], timeout)
    line = stdout.readline().decode().strip() if ready else ""
    if not line.isdigit():
        stop_plugin(proc, None)
        raise PackStartError(f"{label} printed no port within {timeout}s: {line!r}")
    channel = grpc.insecure_channel(f"127.0.0.1:{line}")
    grpc.channel_ready_future(channel).result(timeout=timeout)
    return proc, channel


def stop_plugin(proc: subprocess.Popen[bytes] | None, channel: grpc.Channel | None) -> None:
    """Close the channel, terminate the process (kill it after 10 s) and close its pipes."""
    if channel is not None:
        channel.close()
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    for pipe in (proc.stdout, proc.stderr) if proc else ():
        if pipe is not None:
            pipe.close()


class PackProcess:
    """A running policy pack (`python -m pulumi.policy <engine> <dir>`); use as a context manager."""

    def __init__(
        self,
        pack_dir: str | Path,
        timeout: float = 60.0,
        engine: str = "127.0.0.1:0",
        python: str | Path = sys.executable,
    ) -> None:
        self.pack_dir, self.timeout, self.engine, self.python = Path(pack_dir), timeout, engine, str(python)
        self.proc: subprocess.Popen[bytes] | None = None
        self.channel: grpc.Channel | None = None
        self.stub: analyzer_pb2_grpc.AnalyzerStub | None = None

    def __enter__(self) -> PackProcess:
        cmd = [self.python, "-m", "pulumi.policy", self.engine, str(self.pack_dir)]
        self.proc, self.channel = start_plugin(cmd, self.timeout, f"policy pack in {self.pack_dir}")
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_plugin(self.proc, self.channel)

    @property
    def _stub(self) -> analyzer_pb2_grpc.AnalyzerStub:
        if self.stub is None:
            raise PackStartError("the pack is not running; allowed: calls inside `with PackProcess(...)`")
        return self.stub

    def info(self) -> analyzer_pb2.AnalyzerInfo:
        """GetAnalyzerInfo: the pack's name, policies, levels and initial config."""
        info: analyzer_pb2.AnalyzerInfo = self._stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=self.timeout)
        return info

    def plugin_info(self) -> plugin_pb2.PluginInfo:
        """GetPluginInfo: the pulumi-policy version."""
        info: plugin_pb2.PluginInfo = self._stub.GetPluginInfo(empty_pb2.Empty(), timeout=self.timeout)
        return info

    def configure(self, config: dict[str, dict[str, Any]]) -> None:
        """Configure: per policy `{enforcementLevel, ...properties}`, as the engine sends it."""
        req = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, value in config.items():
            props = {k: v for k, v in value.items() if k != "enforcementLevel"}
            level = _LEVELS[value.get("enforcementLevel", Enforcement.MANDATORY)]
            req.policyConfig[name].CopyFrom(
                analyzer_pb2.PolicyConfig(enforcementLevel=level, properties=_struct(props))
            )
        self._stub.Configure(req, timeout=self.timeout)

    def analyze(self, r: StackResource) -> analyzer_pb2.AnalyzeResponse:
        """Analyze one resource (resource policies)."""
        response: analyzer_pb2.AnalyzeResponse = self._stub.Analyze(_analyze_request(r), timeout=self.timeout)
        return response

    def remediate(self, r: StackResource) -> analyzer_pb2.RemediateResponse:
        """Remediate one resource (remediation policies): the properties each policy would set."""
        response: analyzer_pb2.RemediateResponse = self._stub.Remediate(_analyze_request(r), timeout=self.timeout)
        return response

    def analyze_future(self, r: StackResource) -> Any:
        """Start Analyze of one resource without waiting (a grpc future; `.result()` gives the response)."""
        return self._stub.Analyze.future(_analyze_request(r), timeout=self.timeout)

    def analyze_stack(self, resources: list[StackResource]) -> analyzer_pb2.AnalyzeResponse:
        """AnalyzeStack over every resource (stack policies)."""
        req = analyzer_pb2.AnalyzeStackRequest()
        for r in resources:
            ar = req.resources.add(
                type=r.type,
                properties=_struct(r.props),
                urn=r.urn,
                name=r.name,
                parent=r.parent or "",
                dependencies=r.dependencies,
            )
            for key, urns in r.property_dependencies.items():
                ar.propertyDependencies[key].urns.extend(urns)
        response: analyzer_pb2.AnalyzeResponse = self._stub.AnalyzeStack(req, timeout=self.timeout)
        return response
