"""Serve the component package to the Pulumi engine (what `PulumiPlugin.yaml` runs, via `python -m gpu_platform`)."""

import sys
from importlib.metadata import PackageNotFoundError, version

import pulumi
from pulumi.provider import main

from ..options import PACKAGE
from .component import GpuPlatform, SpecComponentProvider

__all__ = ["COMPONENTS", "package_version", "serve"]

COMPONENTS: list[type[pulumi.ComponentResource]] = [GpuPlatform]


def package_version() -> str:
    """The installed distribution's version (the schema's `version`)."""
    try:
        return version(PACKAGE)
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
        return "0.0.0"


def serve() -> None:
    """Start the provider: it prints its port, then answers GetSchema and Construct until the engine stops it.

    As the SDK's `component_provider_host` (pulumi 3.272, pulumi/provider/experimental/host.py) does, with the
    provider that validates inputs with the spec's rules.
    """
    main(SpecComponentProvider(COMPONENTS, PACKAGE, None, package_version()), sys.argv[1:])
