"""Every module's `__all__` lists exactly the names the rest of the project takes from it.

A name is taken from `gpu_platform.m` when another module, an example, a benchmark, a test or a Python block of the
docs imports it (`from gpu_platform.m import a`, `from .m import a`), reads it off the module (`m.a` after
`from gpu_platform import m`), names it in a `"gpu_platform.m:a"` string, or when the API reference page renders it
(`::: gpu_platform.m`, its `members:` list or else the package's whole `__all__`). Every package `__init__` defines
`__all__`, and no private name (leading underscore) is imported across modules.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "components" / "gpu_platform"
# Folders that are not the project's own source (the virtualenv, built docs, a Node project's packages).
_SKIP_DIRS = {".venv", "build", "node_modules", ".git", "site"}
# A module and one of its names written as a string: "gpu_platform.audit:audit" (a lazy import), or a dotted path.
_NAME_STRING = re.compile(r"(gpu_platform(?:\.\w+)*)[:.](\w+)")
_API_PAGE = ROOT / "docs" / "reference" / "api.md"
_PYPROJECT = ROOT / "pyproject.toml"
_DIRECTIVE = re.compile(r"^::: (gpu_platform[\w.]*)\n((?:[ \t]+.*\n|\n(?=[ \t]))*)", re.M)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _parse(source: str) -> ast.Module:
    """`ast.parse` with the garbage collector held: in CPython 3.11 a finalizer that the collector runs while the
    tree is built (objects the Pulumi mocks' event loop left behind) can end in "SystemError: AST constructor
    recursion depth mismatch"."""
    gc.collect()
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        gc.enable()


def _declared_all(path: Path) -> list[str] | None:
    """The module's literal `__all__`, or None when it defines none."""
    for node in _parse(path.read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == "__all__" and node.value is not None:
            return list(ast.literal_eval(node.value))
    return None


def _sources() -> Iterator[tuple[str, str, str | None, bool]]:
    """(where, Python source, module name inside the package or None, is a package `__init__`) for every Python
    file of the project (this one excepted) and every Python block of its Markdown."""
    for path in sorted(ROOT.rglob("*.py")):
        if _SKIP_DIRS & set(path.relative_to(ROOT).parts) or path == Path(__file__).resolve():
            continue
        inside = PACKAGE in path.parents
        yield (
            str(path.relative_to(ROOT)),
            path.read_text(),
            _module_name(path) if inside else None,
            path.stem == "__init__",
        )
    for path in sorted(ROOT.rglob("*.md")):
        if _SKIP_DIRS & set(path.relative_to(ROOT).parts):
            continue
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S)):
            yield f"{path.relative_to(ROOT)} (python block {i + 1})", block, None, False


def _target(node: ast.ImportFrom, module: str | None, is_package: bool) -> str | None:
    """The absolute module an import takes names from (relative imports resolved against `module`)."""
    if not node.level:
        return node.module
    if module is None:
        return None
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _split(dotted: str) -> tuple[str, str] | None:
    """("gpu_platform.m", "a") for "gpu_platform.m.a" when `a` is a name of module m, not a submodule."""
    module, _, name = dotted.rpartition(".")
    return (module, name) if module in MODULES and dotted not in MODULES else None


def _scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` outside the functions and classes nested in it."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield from _scope_nodes(child)


def _uses() -> dict[str, dict[str, set[str]]]:
    """Map each module to the names taken from it, each to where it is taken."""
    uses: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for where, source, module, is_package in _sources():
        tree = _parse(source)
        scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef))]
        for scope in scopes:
            aliases: dict[str, str] = {}  # a name this scope binds to one of the package's modules -> that module
            for node in _scope_nodes(scope):
                if isinstance(node, ast.ImportFrom) and (target := _target(node, module, is_package)):
                    for alias in node.names:
                        if f"{target}.{alias.name}" in MODULES:
                            aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
                        elif target in MODULES:
                            uses[target][alias.name].add(where)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name in MODULES:
                            aliases[alias.asname or alias.name] = alias.name
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    named = _NAME_STRING.fullmatch(node.value)
                    if named and (found := _split(f"{named[1]}.{named[2]}")):
                        uses[found[0]][found[1]].add(where)
            for node in ast.walk(scope):  # reads off a module this scope imported, in it and the functions it holds
                if isinstance(node, ast.Attribute) and (dotted := _dotted(node)):
                    head, _, rest = dotted.partition(".")
                    found = _split(f"{aliases[head]}.{rest.split('.')[0]}") if head in aliases and rest else None
                    if found and not found[1].startswith("__"):
                        uses[found[0]][found[1]].add(where)
    for module, name in re.findall(r"\"(gpu_platform[\w.]*):(\w+)\"", _PYPROJECT.read_text()):  # entry points
        uses[module][name].add(_PYPROJECT.name)
    for module, options in _DIRECTIVE.findall(_API_PAGE.read_text()):
        members = (yaml.safe_load(options.replace("\t", "  ")) or {}).get("options", {}).get("members")
        for name in members if members is not None else _declared_all(MODULES[module]) or []:
            uses[module][name].add(str(_API_PAGE.relative_to(ROOT)))
    return uses


USES = _uses()

# Private names other modules import on purpose, each with its reason. Keep this short: a name another module needs
# is public (listed in `__all__`, no underscore).
PRIVATE_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {
    ("gpu_platform.validation", "_most_that_fits"): "the rules tests check every suggested MIG layout fits",
    ("gpu_platform.load", "_yaml_problem"): "the planner's demand file reports bad YAML as spec loading does",
    ("gpu_platform.load", "_kind"): "the planner's demand file names what a file holds as spec loading does",
    ("gpu_platform.synth", "_check_replaceable"): "the synth safety tests call the guard on a system folder",
    ("gpu_platform.planner.branch", "_Incidence"): "the branch tests check which columns a node allows",
    ("gpu_platform.planner.remote", "_frame"): "the worker tests read a framed message back",
    ("gpu_platform.planner.remote", "_receive"): "the worker tests feed the reader bytes that are no message",
    ("gpu_platform.planner.branch", "_Node"): "the branch tests check which columns a node allows",
    ("gpu_platform.planner.branch", "_restricted"): "the branch tests check which columns a node allows",
    ("gpu_platform.planner.branch", "_Search"): "the branch tests fail one lane and see which lane solves each node",
    ("gpu_platform.planner.branch", "_size_branch"): "the branch tests check where a branch on pool sizes splits",
    ("gpu_platform.planner.branch", "_NO_MOST"): "the branch tests check where a branch on pool sizes splits",
    ("gpu_platform.planner.columns", "_STAGE_TIERS"): "the pricing tests check every stage size against enumeration",
    ("gpu_platform.planner.candidates", "_shapes_for"): "the rules tests ask every pool shape what it serves",
    ("gpu_platform.planner.master", "_assignment_dive"): "the solver tests check each stage of the master problem",
    ("gpu_platform.planner.master", "_ONE_DIVE_FROM"): "the solver tests check the root's dives either side of it",
    ("gpu_platform.planner.master", "_full"): "the solver tests check each stage of the master problem",
    ("gpu_platform.planner.master", "_generate"): "the solver tests check each stage of the master problem",
    ("gpu_platform.planner.master", "_greedy"): "the solver tests check each stage of the master problem",
    ("gpu_platform.planner.master", "_listings"): "the branch tests check the listings end once branch-and-price joins",
    ("gpu_platform.planner.master", "_repacked"): "the solver tests check the repack against every route of its tiers",
    ("gpu_platform.planner.master", "_REPACK_TIERS"): "the solver tests check which groups get the repack",
    ("gpu_platform.planner.master", "solve_cover"): "the branch tests count the cover programs the listings solve",
    ("gpu_platform.planner.local", "_State"): "the solver tests price a move quickly and in full",
    ("gpu_platform.planner.local", "_changes"): "the solver tests price a move quickly and in full",
    ("gpu_platform.planner.master", "_Master"): "branch-and-price and its tests run column generation on it",
    ("gpu_platform.planner.solve", "_pairs"): "the solver tests check the MIG pairing on its own",
    ("gpu_platform.planner.branch", "_SPAWN_LEFT"): "the worker tests give a search less time than a start needs",
    ("gpu_platform.planner.master", "branch_and_price"): "the solver tests check that a proven group is not searched",
    ("gpu_platform.planner.remote", "_BOOT"): "the worker tests run its first lines for a parent that is gone",
    (
        "gpu_platform.planner.solve",
        "_one_pool_per_tier",
    ): "the solver tests keep a repacked plan's tiers in one pool each",
    ("gpu_platform.planner.solve", "solve_group"): "the rules tests weaken a group's bound to see the unit floor hold",
    ("gpu_platform.planner.highs", "_stop_at"): "the solver tests drive the listings' stall clock with made-up events",
    ("gpu_platform.planner.highs", "_PATIENCE"): "the solver tests drive the listings' stall clock with made-up events",
    ("gpu_platform.planner.highs", "_SUB_MIPS"): "the solver tests check a racing program is given these options",
}


def test_every_package_defines_all():
    missing = [m for m, p in MODULES.items() if p.name == "__init__.py" and _declared_all(p) is None]
    assert not missing, f"packages without __all__: {missing}"


def test_all_lists_no_name_twice():
    twice = {
        m: sorted({n for n in names if names.count(n) > 1}) for m, p in MODULES.items() if (names := _declared_all(p))
    }
    assert not {m: n for m, n in twice.items() if n}


def test_all_lists_exactly_the_names_taken_from_the_module():
    problems = []
    for module, path in MODULES.items():
        declared = _declared_all(path)
        if declared is None:
            continue
        taken = {n for n in USES.get(module, {}) if (module, n) not in PRIVATE_IMPORTS_ALLOWED}
        for name in sorted(taken - set(declared)):
            where = ", ".join(sorted(USES[module][name])[:3])
            problems.append(f"{module}: {name!r} is imported ({where}) but not in __all__")
        for name in sorted(set(declared) - taken):
            problems.append(f"{module}: {name!r} is in __all__ but nothing imports it: drop it, or use it")
    assert not problems, "\n".join(problems)


def test_no_private_name_is_imported_across_modules():
    found = [
        f"{module}.{name} imported by {', '.join(sorted(where))}"
        for module, names in USES.items()
        for name, where in names.items()
        if name.startswith("_") and not name.startswith("__") and (module, name) not in PRIVATE_IMPORTS_ALLOWED
    ]
    assert not found, "private names used outside their module (make them public or stop importing them):\n" + (
        "\n".join(found)
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from gpu_platform.errors import SpecError", {"gpu_platform.errors": {"SpecError"}}),
        ("from gpu_platform import errors\nerrors.RenderError", {"gpu_platform.errors": {"RenderError"}}),
        ("import gpu_platform.errors as e\ne.Finding", {"gpu_platform.errors": {"Finding"}}),
        ("x = 'gpu_platform.audit:audit'", {"gpu_platform.audit": {"audit"}}),
        ("from gpu_platform import nodepools", {}),  # a submodule, not a name of the package
    ],
)
def test_the_scan_sees_each_kind_of_use(source, expected, monkeypatch):
    """The scanner counts imports, attribute reads on an imported module and "module:name" strings."""
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "_sources", lambda: iter([("snippet", source, None, False)]))
    monkeypatch.setattr(this, "_API_PAGE", ROOT / "Pulumi.yaml")  # no `:::` directive
    monkeypatch.setattr(this, "_PYPROJECT", ROOT / "Pulumi.yaml")  # no entry point
    found = {m: set(names) for m, names in _uses().items()}
    assert found == expected
