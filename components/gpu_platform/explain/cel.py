"""The CEL engine of the admission simulator: celpy with Kubernetes' JSONPatch type, compiled once per expression.

Kubernetes evaluates admission CEL with cel-go; celpy implements the same CEL language (google/cel-spec), so the
very expressions the platform renders are evaluated here, not a second implementation of what they do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParser
from celpy.evaluation import CELEvalError, Evaluator

from .celext import KUBERNETES_FUNCTIONS

__all__ = ["CelError", "activation", "evaluate", "to_plain", "to_cel"]


class JSONPatch(celtypes.MessageType):
    """Kubernetes' CEL `JSONPatch{op, path, value, from}` object type (MutatingAdmissionPolicy, Kyverno)."""


class CelError(Exception):
    """A CEL expression failed to compile or to evaluate; `expression` is the source."""

    def __init__(self, expression: str, reason: str) -> None:
        super().__init__(reason)
        self.expression = expression
        self.reason = reason


_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member"}
)


class _ShortCircuitEvaluator(Evaluator):
    """celpy's evaluator, faster: `&&` and `||` short-circuit on a decided left operand, and one-child nodes are
    skipped.

    celpy evaluates both operands and then combines them with CEL's commutative rules; `false && x` is false and
    `true || x` is true whatever `x` is (an error included: google/cel-spec langdef.md "Logical operators"), so
    skipping `x` gives the same result. The platform's JSONPatch CEL guards 32 container indices with `&&`
    chains: this makes evaluating it several times faster.
    """

    def _logical(self, tree: Any, name: str, decided: bool) -> Any:
        if len(tree.children) != 2:
            return self.visit_children(tree)[0]
        left = self.visit(tree.children[0])
        if isinstance(left, celtypes.BoolType) and bool(left) == decided:
            return left
        right = self.visit(tree.children[1])
        try:
            return self.activation.resolve_function(name)(left, right)
        except TypeError as ex:
            return CELEvalError(f"found no matching overload for {name}", ex.__class__, ex.args, tree=tree)

    def _visit_tree(self, tree: Any) -> Any:
        """Skip the grammar's one-child precedence levels (`expr` -> `conditionalor` -> ... -> `member`): each
        returns its only child's value unchanged (celpy/evaluation.py), and a literal sits eight levels deep."""
        while tree.data in _PASS_THROUGH and len(tree.children) == 1 and isinstance(tree.children[0], lark.Tree):
            tree = tree.children[0]
        return super()._visit_tree(tree)

    def sub_evaluator(self, ast: Any) -> Evaluator:
        """Macro bodies (`filter`, `map`, `all`...) are evaluated the same way."""
        return _ShortCircuitEvaluator(ast, activation=self.activation)

    def conditionaland(self, tree: Any) -> Any:
        """`a && b`: false as soon as `a` is false."""
        return self._logical(tree, "_&&_", False)

    def conditionalor(self, tree: Any) -> Any:
        """`a || b`: true as soon as `a` is true."""
        return self._logical(tree, "_||_", True)


class _Meta(lark.tree.Meta):
    """No source position: celpy reads `line` and `column` only to put them into error values."""

    # None where lark declares int: the positions are absent, and celpy copies them into error values as they are
    line = column = end_line = end_column = start_pos = end_pos = None  # type: ignore[assignment]


_NO_POSITION = _Meta()  # type: ignore[no-untyped-call]  # lark's Meta.__init__ is not annotated


class _Tree(lark.Tree[lark.Token]):
    """Parse trees built without source positions (lark's position propagation doubles the parse time)."""

    @property
    def meta(self) -> Any:
        """The tree's (empty) position."""
        if self._meta is None:
            self._meta = _NO_POSITION
        return self._meta


class _Runner(celpy.InterpretedRunner):
    tree_node_class = _Tree

    def evaluate(self, context: Any) -> Any:
        return _ShortCircuitEvaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


@lru_cache(maxsize=1)
def _env() -> celpy.Environment:
    """The CEL environment, built on first use.

    celpy builds its LALR parser from cel.lark in every process (a sixth of a second); the same parser is built
    here first with lark's grammar-analysis cache (a file in the temp directory keyed by grammar, options and
    lark version), with celpy 0.5's options (celpy/celparser.py CELParser.__init__) except source positions,
    which only locate errors in the expression text.
    """
    if CELParser.CEL_PARSER is None:
        grammar = (Path(celpy.__file__).parent / "cel.lark").read_text()
        try:
            CELParser.CEL_PARSER = lark.Lark(
                grammar,
                parser="lalr",
                start="expr",
                debug=True,
                g_regex_flags=re.M,
                lexer_callbacks={"IDENT": CELParser.ambiguous_literals},
                propagate_positions=False,
                maybe_placeholders=False,
                priority="invert",
                tree_class=_Tree,
                cache=True,
            )
        except OSError:  # an unwritable temp directory: celpy builds its parser without the cache
            CELParser.CEL_PARSER = None
    return celpy.Environment(annotations={"JSONPatch": JSONPatch}, runner_class=_Runner)


@lru_cache(maxsize=4096)
def _program(expression: str) -> celpy.Runner:
    """Compile once per distinct expression text (celpy's parser is the slow part)."""
    env = _env()
    try:
        return env.program(env.compile(expression), functions=KUBERNETES_FUNCTIONS)
    except Exception as e:  # celpy raises its own syntax errors; all are a compile failure here
        raise CelError(expression, f"does not compile: {e}") from None


def to_cel(value: Any) -> Any:
    """A plain JSON value as a CEL value."""
    return json_to_cel(value)


def to_plain(value: Any) -> Any:
    """A CEL value as a plain JSON value (dict, list, str, int, float, bool, None)."""
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, celtypes.BoolType | bool):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType | int):
        return int(value)
    if isinstance(value, celtypes.DoubleType | float):
        return float(value)
    if isinstance(value, celtypes.StringType | str):
        return str(value)
    return value


class LazyVariables(celtypes.MapType):
    """`variables.<name>`: each variable evaluated on first use and cached, as the API server composes them.

    k8s.io/apiserver v0.33 pkg/admission/plugin/cel/composition.go (lazy variable evaluation, in declaration order:
    a variable sees only the ones declared before it).
    """

    def __init__(self, declared: list[dict[str, str]], activation: dict[str, Any]) -> None:
        super().__init__({})
        self._declared = {v["name"]: v["expression"] for v in declared}
        self._order = [v["name"] for v in declared]
        self._activation = activation

    def __contains__(self, key: object) -> bool:
        return str(key) in self._declared

    def __getitem__(self, key: Any) -> Any:
        name = str(key)
        if name not in self._declared:
            raise KeyError(name)
        cached: Any = dict.get(self, celtypes.StringType(name), _MISSING)
        if cached is _MISSING:
            try:
                cached = evaluate(self._declared[name], self._activation)
            except CelError as e:
                cached = CELEvalError(f"variables.{name}: {e.reason}", RuntimeError, None)
            dict.__setitem__(self, celtypes.StringType(name), cached)
        return cached


_MISSING = object()


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """Evaluate `expression` (compiled once) with CEL values bound; raise CelError on an evaluation error."""
    program = _program(expression)
    try:
        result = program.evaluate({"JSONPatch": JSONPatch, **activation})
    except CELEvalError as e:
        raise CelError(expression, str(e.args[0] if e.args else e)) from None
    except Exception as e:  # noqa: BLE001 - celpy surfaces type and key errors from its runtime as plain exceptions
        raise CelError(expression, f"{type(e).__name__}: {e}") from None
    error = _first_error(result)
    if error is not None:
        raise CelError(expression, str(error.args[0] if error.args else error))
    return result


def _first_error(value: Any) -> CELEvalError | None:
    """An evaluation error celpy left inside a list or map literal (cel-go fails the whole expression)."""
    if isinstance(value, CELEvalError):
        return value
    if isinstance(value, Mapping):
        return next((e for v in value.values() if (e := _first_error(v)) is not None), None)
    if isinstance(value, list | tuple):
        return next((e for v in value if (e := _first_error(v)) is not None), None)
    return None


def activation(
    values: dict[str, Any], variables: list[dict[str, str]] | None = None, convert: Callable[[Any], Any] = to_cel
) -> dict[str, Any]:
    """The CEL activation of one admission evaluation, with lazily evaluated `variables`."""
    act = {k: convert(v) for k, v in values.items()}
    act["variables"] = LazyVariables(variables or [], act)
    return act
