"""Every wire name and GPU fact has one home: the code under components/ names it, never types it again.

Label keys, namespaces and the Kueue labels live in `contract.py`; the `nvidia.com/*` resource names and the GPU
models in the catalog; the default namespaces of what the platform installs in the spec's field defaults. The scan
reads every string constant of the package source (f-string parts included, docstrings left out) and fails on a
constant equal to a fact, or quoting it as a CEL string, outside the fact's home.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from gpu_platform import contract
from gpu_platform.catalog import GPU_MODELS
from gpu_platform.spec import GpuOperatorSpec, KueueSpec, PrometheusSpec, VolcanoSpec

PACKAGE = Path(contract.__file__).resolve().parent
CONTRACT, CATALOG, SPEC = "contract.py", "catalog/", "spec.py"


def _default_namespace(model: type) -> str:
    return str(model.model_fields["namespace"].default)  # type: ignore[attr-defined]


# fact -> the files (or folder, ending in "/") that may spell it out
FACTS: dict[str, tuple[str, ...]] = {
    contract.GPU_RESOURCE: (CATALOG,),
    contract.NVIDIA_RESOURCE_PREFIX: (CATALOG,),
    contract.MIG_RESOURCE_PREFIX: (CATALOG,),
    contract.MIG_CONFIG_LABEL: (CONTRACT,),
    contract.MIG_CONFIG_STATE_LABEL: (CONTRACT,),
    contract.DEVICE_PLUGIN_CONFIG_LABEL: (CONTRACT,),
    contract.DEPLOY_OPERANDS_LABEL: (CONTRACT,),
    contract.KUEUE_QUEUE_LABEL: (CONTRACT,),
    contract.KUEUE_PRIORITY_LABEL: (CONTRACT,),
    contract.NAMESPACE_NAME_LABEL: (CONTRACT,),
    contract.INSTANCE_TYPE_LABEL: (CONTRACT,),
    contract.CAPACITY_TYPE_LABEL: (CONTRACT,),
    contract.CLUSTER_TAG: (CONTRACT,),
    contract.POOL_TAG: (CONTRACT,),
    contract.MANAGED_BY_LABEL: (CONTRACT,),
    contract.PART_OF_LABEL: (CONTRACT,),
    # The spec cannot import the contract (the contract reads the spec), so its release defaults spell it too.
    contract.SYSTEM_NAMESPACE: (CONTRACT, SPEC),
    **{_default_namespace(m): (SPEC,) for m in (KueueSpec, VolcanoSpec, PrometheusSpec)},
}
# The operator's namespace default is also its chart and release name, so it is checked only in namespace lists.
DEFAULT_NAMESPACES = {
    contract.SYSTEM_NAMESPACE,
    *(_default_namespace(m) for m in (GpuOperatorSpec, KueueSpec, VolcanoSpec, PrometheusSpec)),
}


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def string_constants(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every string constant of `source` but docstrings, f-string parts included."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def typed_facts(source: str) -> Iterator[tuple[int, str]]:
    """(line, fact) of each constant equal to a fact, or quoting one as a CEL string literal."""
    for line, text in string_constants(source):
        for fact in FACTS:
            if text == fact or f"'{fact}'" in text or f'"{fact}"' in text:
                yield line, fact


_GPU_NAMES = sorted({*GPU_MODELS, *(m.family for m in GPU_MODELS.values())}, key=len, reverse=True)
_GPU_NAME = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, _GPU_NAMES)) + r")(?!\w)")
_FAMILY = {name: GPU_MODELS[name].family if name in GPU_MODELS else name for name in _GPU_NAMES}


def typed_gpu_lists(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each constant naming two or more GPU families: a list of GPUs typed into a message,
    where one name is an example."""
    for line, text in string_constants(source):
        if len({_FAMILY[name] for name in _GPU_NAME.findall(text)}) >= 2:
            yield line, text


def _modules() -> list[tuple[str, str]]:
    return [(p.relative_to(PACKAGE).as_posix(), p.read_text()) for p in sorted(PACKAGE.rglob("*.py"))]


def _home(relative: str, homes: tuple[str, ...]) -> bool:
    return any(relative.startswith(h) if h.endswith("/") else relative == h for h in homes)


def test_no_fact_is_typed_outside_its_home():
    found = [
        f"{rel}:{line}: {fact!r} (home: {', '.join(FACTS[fact])})"
        for rel, source in _modules()
        for line, fact in typed_facts(source)
        if not _home(rel, FACTS[fact])
    ]
    assert not found, "import these from their home:\n" + "\n".join(found)


def test_no_list_of_gpus_is_typed_outside_the_catalog():
    found = [
        f"{rel}:{line}: {text[:100]!r}"
        for rel, source in _modules()
        if not rel.startswith(CATALOG)
        for line, text in typed_gpu_lists(source)
    ]
    assert not found, "derive these from the catalog (gpu_families, MIG_CAPABLE_GPUS):\n" + "\n".join(found)


def typed_namespace_lists(source: str) -> Iterator[tuple[int, list[str]]]:
    """(line, names) of each list, tuple or set literal holding two or more of the default namespaces."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            literal = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(literal & DEFAULT_NAMESPACES) >= 2:
                yield node.lineno, sorted(literal & DEFAULT_NAMESPACES)


def test_exempt_namespaces_are_written_once():
    """The default exempt namespaces are read from the spec's defaults, not listed again as literals."""
    found = [f"{rel}:{line}: {names}" for rel, source in _modules() for line, names in typed_namespace_lists(source)]
    assert not found, "\n".join(found)


VIOLATIONS = '''
"""A docstring may name nvidia.com/gpu and kube-system."""
GPU = "nvidia.com/gpu"
def mig(p):
    return f"nvidia.com/mig-{p}"
CEL = "k.startsWith('nvidia.com/')"
QUEUE = {"kueue.x-k8s.io/queue-name": "team"}
NAMESPACES = ["kube-system", "monitoring"]
MESSAGE = "allowed: A100, H100 instance types"
EXAMPLE = "a catalog name (H100-80GB) or family (H100)"
'''


def test_the_scan_finds_what_it_guards_against():
    """The rules above would fail on a module that types the facts (and only there)."""
    assert sorted(fact for _, fact in typed_facts(VIOLATIONS)) == sorted(
        [
            contract.GPU_RESOURCE,
            contract.MIG_RESOURCE_PREFIX,
            contract.NVIDIA_RESOURCE_PREFIX,
            contract.KUEUE_QUEUE_LABEL,
            contract.SYSTEM_NAMESPACE,
            "monitoring",
        ]
    )
    assert [text for _, text in typed_gpu_lists(VIOLATIONS)] == ["allowed: A100, H100 instance types"]
    assert [names for _, names in typed_namespace_lists(VIOLATIONS)] == [["kube-system", "monitoring"]]
