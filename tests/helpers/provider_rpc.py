"""Drive the component provider as the Pulumi engine does: start `python -m gpu_platform <engine>`, read its port,
call GetSchema / Construct over gRPC, with a stub engine (logs) and a stub resource monitor that records every
registration the provider makes, answering as `pulumi.runtime.mocks.MockMonitor` does."""

from __future__ import annotations

import sys
import threading
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)

from gpu_platform.policy.analyzer import PackStartError, start_plugin, stop_plugin

from .stack_urns import make_urn

# As MockMonitor.GetDeploymentInfo (no output values: inputs reach the monitor as plain values, as under mocks).
FEATURES = [
    resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS,
    resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES,
    resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS,
    resource_pb2.RESOURCE_MONITOR_FEATURE_DELETED_WITH,
    resource_pb2.RESOURCE_MONITOR_FEATURE_TRANSFORMS,
    resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_TRANSFORMS,
]


@dataclass(frozen=True)
class Recorded:
    """One RegisterResource request, in a form both sides of a comparison produce alike."""

    type: str
    name: str
    parent: str
    urn: str
    custom: bool
    inputs: dict[str, Any]
    aliases: tuple[str, ...]
    dependencies: tuple[str, ...]
    protect: bool
    retain_on_delete: bool


def record(request: Any, urn: str) -> Recorded:
    """A RegisterResourceRequest as plain data (inputs as protobuf JSON, aliases as text)."""
    return Recorded(
        request.type,
        request.name,
        request.parent,
        urn,
        request.custom,
        json_format.MessageToDict(request.object),
        tuple(sorted(str(a) for a in request.aliases)),
        tuple(sorted(request.dependencies)),
        request.protect,
        bool(getattr(request, "retainOnDelete", False)),
    )


def invoke_result(token: str, args: dict[str, Any]) -> dict[str, Any]:
    """The data source answers both sides give (the cluster the EFA security groups join)."""
    if token == "aws:eks/getCluster:getCluster":
        return {"name": args.get("name"), "vpcConfig": {"vpcId": "vpc-0mock", "clusterSecurityGroupId": "sg-0cluster"}}
    return {}


def computed_state(type_: str, state: dict[str, Any]) -> dict[str, Any]:
    """A resource's outputs on both sides: its inputs, plus what its provider computes that the outputs read."""
    if type_ == "aws:eks/nodeGroup:NodeGroup" and "nodeGroupNamePrefix" in state:  # the provider's suffix
        return {"nodeGroupName": state["nodeGroupNamePrefix"] + "2026113000000000000000000a", **state}
    return state


class StubMonitor(resource_pb2_grpc.ResourceMonitorServicer):
    """Records registrations; custom resources get id `<name>-id` and their inputs back as outputs."""

    def __init__(self, project: str, stack: str) -> None:
        self.project, self.stack = project, stack
        self.registered: list[Recorded] = []
        self.outputs: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def GetDeploymentInfo(self, request, context):
        return resource_pb2.DeploymentInfo(supportedFeatures=FEATURES)

    def SupportsFeature(self, request, context):
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id != "outputValues")

    def RegisterResource(self, request, context):
        urn = make_urn(self.stack, self.project, request.parent, request.type, request.name)
        with self.lock:
            self.registered.append(record(request, urn))
        if not request.custom:
            return resource_pb2.RegisterResourceResponse(urn=urn)
        state = computed_state(request.type, json_format.MessageToDict(request.object))
        return resource_pb2.RegisterResourceResponse(urn=urn, id=f"{request.name}-id", object=_struct(state))

    def RegisterResourceOutputs(self, request, context):
        with self.lock:
            self.outputs[request.urn] = json_format.MessageToDict(request.outputs)
        return empty_pb2.Empty()

    def Invoke(self, request, context):
        result = invoke_result(request.tok, json_format.MessageToDict(request.args))
        return resource_pb2.ResourceInvokeResponse(**{"return": _struct(result)})

    def RegisterPackage(self, request, context):
        return resource_pb2.RegisterPackageResponse(ref="stub-package")

    def SignalAndWaitForShutdown(self, request, context):
        return empty_pb2.Empty()


class StubEngine(engine_pb2_grpc.EngineServicer):
    """Records what the provider logs (validation warnings reach `pulumi up` this way)."""

    def __init__(self) -> None:
        self.logs: list[tuple[int, str, str]] = []

    def Log(self, request, context):
        self.logs.append((request.severity, request.message, request.urn))
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):
        return engine_pb2.GetRootResourceResponse(urn="")

    def SetRootResource(self, request, context):
        return engine_pb2.SetRootResourceResponse()


def _struct(data: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(data)
    return out


@dataclass
class ProviderProcess:
    """`with ProviderProcess() as p:` a running provider plus the stub engine and monitor it talks to."""

    project: str = "gpu-platform"
    stack: str = "dev"
    timeout: float = 120.0
    engine: StubEngine = field(default_factory=StubEngine)
    monitor: StubMonitor | None = None

    def __enter__(self) -> ProviderProcess:
        self.monitor = StubMonitor(self.project, self.stack)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(self.monitor, self.server)
        engine_pb2_grpc.add_EngineServicer_to_server(self.engine, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.address = f"127.0.0.1:{port}"
        try:
            self.proc, self.channel = start_plugin(
                [sys.executable, "-m", "gpu_platform", self.address], self.timeout, "the provider"
            )
        except PackStartError:
            self.server.stop(None)
            raise
        self.stub = provider_pb2_grpc.ResourceProviderStub(self.channel)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_plugin(self.proc, self.channel)
        self.server.stop(None)

    def schema(self) -> str:
        """GetSchema (version 0): the schema text."""
        return self.stub.GetSchema(provider_pb2.GetSchemaRequest(), timeout=self.timeout).schema

    def construct(
        self,
        type_: str,
        name: str,
        inputs: dict[str, Any],
        parent: str = "",
        preview: bool = False,
        depends_on: tuple[str, ...] = (),
    ) -> Any:
        """Construct as the engine sends it for a program's `new GpuPlatform(name, inputs)` (an update unless
        `preview`); the registrations land in `self.monitor`."""
        request = provider_pb2.ConstructRequest(
            project=self.project,
            stack=self.stack,
            dryRun=preview,
            parallel=4,
            monitorEndpoint=self.address,
            type=type_,
            name=name,
            parent=parent,
            inputs=_struct(inputs),
            organization="organization",
            dependencies=list(depends_on),
        )
        return self.stub.Construct(request, timeout=self.timeout)


def python_side(
    data: dict[str, Any], name: str, project: str = "gpu-platform", stack: str = "dev"
) -> tuple[list[Recorded], dict[str, dict[str, Any]]]:
    """The Python component on the same spec under Pulumi mocks: its registrations and registered outputs."""
    import pulumi
    from pulumi.runtime import mocks as m

    from gpu_platform import GpuPlatform, GpuPlatformArgs, parse_spec

    found: list[Recorded] = []
    outputs: dict[str, dict[str, Any]] = {}

    class _Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs):
            return f"{args.name}-id", computed_state(args.typ, dict(args.inputs))

        def call(self, args: pulumi.runtime.MockCallArgs):
            return invoke_result(args.token, args.args)

    class _Monitor(m.MockMonitor):
        def RegisterResource(self, request):
            resp = super().RegisterResource(request)
            if request.type != "pulumi:pulumi:Stack":
                found.append(record(request, resp.urn))
            return resp

        def RegisterResourceOutputs(self, request):
            outputs[request.urn] = json_format.MessageToDict(request.outputs)
            return super().RegisterResourceOutputs(request)

    mocks = _Mocks()
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False, monitor=_Monitor(mocks))
    spec = parse_spec(data)

    @pulumi.runtime.test
    def _run():
        return GpuPlatform(name, GpuPlatformArgs(spec=spec)).urn

    _run()
    return found, outputs


STACK_URN = "urn:pulumi:dev::gpu-platform::pulumi:pulumi:Stack::gpu-platform-dev"


def property_errors(error: Any) -> list[tuple[str, str]]:
    """The (property path, reason) pairs of a failed Construct's InputPropertiesError details, as the engine reads
    them (pulumi/pulumi v3.259.0 pkg/resource/deploy/source_eval.go `errorToMessage`)."""
    from pulumi.runtime.proto import errors_pb2, status_pb2

    metadata = dict(error.trailing_metadata() or ())
    if "grpc-status-details-bin" not in metadata:
        return []
    found = []
    for detail in status_pb2.Status.FromString(metadata["grpc-status-details-bin"]).details:
        errors = errors_pb2.InputPropertiesError()
        if detail.Unpack(errors):
            found += [(e.property_path, e.reason) for e in errors.errors]
    return found
