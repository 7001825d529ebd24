"""The CEL builders of the admission render: literals read back by a CEL engine as the value they were built from."""

from __future__ import annotations

import json

import jsonpatch as python_jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_platform.admission.cel import (
    cel_get,
    cel_has,
    cel_has_path,
    cel_list,
    cel_literal,
    cel_map,
    cel_str,
    json_pointer,
    jsonpatch,
)
from gpu_platform.explain.cel import evaluate, to_cel, to_plain

HOSTILE = [
    "",
    "plain",
    'double " quote',
    "single ' quote",
    "back\\slash",
    "\\' escaped quote",
    "trailing backslash\\",
    "new\nline\rcarriage\ttab\bback\fform",
    "nul \x00 and bell \x07 and del \x7f",
    "' + variables.secret + '",
    '" + variables.secret + "',
    "}]) || true || ([{",
    "\\u0041 is not A",
    "é ü ß € 中文",
    "astral 😀 𝄞",
    "line\u2028separator",
]


def read_back(expression: str) -> object:
    return to_plain(evaluate(expression, {}))


@pytest.mark.parametrize("quote", ['"', "'"])
@pytest.mark.parametrize("value", HOSTILE)
def test_string_literal_reads_back_as_the_value(value, quote):
    literal = cel_str(value, quote)
    assert literal[0] == literal[-1] == quote
    assert read_back(literal) == value


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40), st.sampled_from(['"', "'"]))
def test_any_string_reads_back(value, quote):
    assert read_back(cel_str(value, quote)) == value


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs",)), max_size=40))
def test_double_quoted_literal_is_the_json_string_within_the_basic_plane(value):
    """Rendered objects stay byte-identical to the JSON-string literals written before the builders existed."""
    assert cel_str(value) == json.dumps(value)


def test_characters_beyond_the_basic_plane_take_long_escapes_not_surrogate_pairs():
    """A JSON surrogate pair reads back in CEL as two lone surrogates, not the character."""
    assert cel_str("😀") == '"\\U0001f600"'
    assert read_back(json.dumps("😀")) != "😀"


def test_bad_quote_and_lone_surrogate_are_refused_with_what_is_allowed():
    with pytest.raises(ValueError, match=r"quote '`'; allowed: \", '"):
        cel_str("x", "`")
    with pytest.raises(ValueError, match="lone surrogate U\\+D800"):
        cel_str("a\ud800b")


@pytest.mark.parametrize(
    "parts, pointer",
    [
        (("spec", "nodeSelector"), "/spec/nodeSelector"),
        (("gpu.example.com/gpu-pool",), "/gpu.example.com~1gpu-pool"),
        (("a~b",), "/a~0b"),
        (("~1",), "/~01"),
        (("/~",), "/~1~0"),
        (("",), "/"),
    ],
)
def test_json_pointer_escapes_tilde_then_slash(parts, pointer):
    assert json_pointer(*parts) == pointer


@pytest.mark.parametrize("key", ["gpu.example.com/gpu-pool", "a~b", "~1", "x/~0/y", "nvidia.com/mig-1g.10gb"])
def test_json_pointer_addresses_the_key_it_was_built_from(key):
    patched = python_jsonpatch.apply_patch(
        {"labels": {}}, [{"op": "add", "path": json_pointer("labels", key), "value": 1}]
    )
    assert patched == {"labels": {key: 1}}


def test_literals_of_plain_values():
    value = {"tier": ["nvidia.com/mig-1g.10gb", "it's"], "count": 3, "on": True, "off": False, "empty": []}
    assert read_back(cel_literal(value)) == value
    assert cel_literal({"a": ["b"]}) == '{"a": ["b"]}'
    assert cel_literal(list(range(3))) == "[0, 1, 2]"
    assert cel_list([]) == "[]" and cel_map([]) == "{}"
    with pytest.raises(TypeError, match="float value 1.5; allowed: str, bool, int, list, tuple, mapping"):
        cel_literal(1.5)  # type: ignore[arg-type]


def test_map_keeps_entries_as_cel_expressions_in_order():
    assert cel_map([("'b'", "1"), ("x.y", "z")]) == "{'b': 1, x.y: z}"


@pytest.mark.parametrize("quote", ["'", '"'])
def test_jsonpatch_objects_are_what_kubernetes_reads(quote):
    key = "gpu.example.com/gpu-pool"
    ops = cel_list(
        [
            jsonpatch("add", cel_str("/metadata/labels" + json_pointer(key)), cel_str('it\'s "hostile"'), quote=quote),
            jsonpatch("remove", cel_str(json_pointer("spec", "a~b")), quote=quote),
        ]
    )
    assert f"op: {quote}add{quote}" in ops and "{{" not in ops
    assert read_back(ops) == [
        {"op": "add", "path": "/metadata/labels/gpu.example.com~1gpu-pool", "value": 'it\'s "hostile"'},
        {"op": "remove", "path": "/spec/a~0b"},
    ]
    applied = python_jsonpatch.apply_patch({"metadata": {"labels": {}}, "spec": {"a~b": 1}}, read_back(ops))
    assert applied == {"metadata": {"labels": {key: 'it\'s "hostile"'}}, "spec": {}}


@pytest.mark.parametrize(
    "template, expected",
    [
        ({"metadata": {"labels": {"gpu.example.com/gpu-tier": "inference"}}, "spec": {}}, "inference"),
        ({"metadata": {"labels": {"other": "x"}}}, ""),
        ({"metadata": {}}, ""),
        ({"spec": {}}, ""),
    ],
)
def test_get_reads_a_key_only_where_its_map_is_set(template, expected):
    key = cel_str("gpu.example.com/gpu-tier")
    guarded = cel_get("t.metadata.labels", key, guards=["t.metadata", "t.metadata.labels"])
    assert guarded.startswith("(has(t.metadata) && has(t.metadata.labels) && ")
    assert to_plain(evaluate(guarded, {"t": to_cel(template)})) == expected


def test_get_guards_the_map_itself_by_default_and_takes_a_default():
    expression = cel_get("object.metadata.annotations", cel_str("q"), default="'none'")
    assert expression == (
        '(has(object.metadata.annotations) && "q" in object.metadata.annotations ? '
        "object.metadata.annotations[\"q\"] : 'none')"
    )
    for present, expected in (({"q": "team-a"}, "team-a"), ({}, "none")):
        obj = {"metadata": {"annotations": present}}
        assert to_plain(evaluate(expression, {"object": to_cel(obj)})) == expected
    assert cel_has("a", "a.b") == "has(a) && has(a.b)"


def test_cel_has_path_guards_every_step_of_a_dotted_path():
    expression = cel_has_path("object", "spec.template.spec")
    assert expression == "has(object.spec) && has(object.spec.template) && has(object.spec.template.spec)"
    assert cel_has_path("x", "resources") == "has(x.resources)"
    for obj, expected in (
        ({"spec": {"template": {"spec": {}}}}, True),
        ({"spec": {"template": {}}}, False),
        ({"spec": {}}, False),
        ({}, False),
    ):
        assert to_plain(evaluate(expression, {"object": to_cel(obj)})) is expected
