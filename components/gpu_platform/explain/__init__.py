"""`gpu-platform explain`: run a workload manifest through the rendered platform, stage by stage (pure, no pulumi).

Admission evaluates the rendered policies' own CEL (celpy) and applies their JSONPatches (python-jsonpatch);
Kueue, the scheduler, priority and cost read the rendered queues, pools and prices.
"""

from __future__ import annotations

from .admission import AdmissionChain, AdmissionResult, Request, Step, build_chain
from .cluster import RenderedPlatform
from .core import Entry, explain_object
from .manifest import ManifestError, load_manifests

__all__ = [
    "AdmissionChain",
    "AdmissionResult",
    "Entry",
    "ManifestError",
    "RenderedPlatform",
    "Request",
    "Step",
    "build_chain",
    "explain_object",
    "load_manifests",
]
