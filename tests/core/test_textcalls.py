"""ToolCall.parse_text: tool calls written in a model's text, in the common shapes."""

import pytest

pytest.importorskip("hypothesis", reason="hypothesis is part of the test extra; install it")

from hypothesis import given, settings, strategies as st

from minidebug import ToolCall
from minidebug.errors import ToolError

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)

SCHEMAS = [{"name": "edit", "input_schema": {"type": "object", "properties": {
    "path": {"type": "string"}, "start": {"type": "integer"}, "end": {"type": "integer"},
    "new_code": {"type": "string"}}}}]


def parsed(text, schemas=None):
    return [(c.name, dict(c.arguments)) for c in ToolCall.parse_text(text, schemas)]


def test_tagged_json_several_in_order_and_a_cut_closing_tag():
    text = ('Plan.\n<tool_call>{"name": "view", "arguments": {"path": "a.py"}}</tool_call>\nthen\n'
            '<tool_call>\n{"name": "grep", "parameters": {"pattern": "x"}}')
    assert parsed(text) == [("view", {"path": "a.py"}), ("grep", {"pattern": "x"})]


def test_function_parameter_shape_bare_or_tagged_typed_by_schema():
    text = ("<function=edit>\n<parameter=path>\na.py\n</parameter>\n<parameter=start>\n3\n</parameter>\n"
            "<parameter=end>3</parameter>\n<parameter=new_code>\n    return 42\n\n</parameter>\n</function>")
    assert parsed(text, SCHEMAS) == [("edit", {"path": "a.py", "start": 3, "end": 3, "new_code": "    return 42\n"})]
    tagged = "<tool_call>\n<function=edit><parameter=new_code>12</parameter></function>\n</tool_call>"
    assert parsed(tagged, SCHEMAS) == [("edit", {"new_code": "12"})]  # a string stays a string
    assert parsed(tagged) == [("edit", {"new_code": 12})]  # without schemas, digits are a number


def test_fenced_json_object_list_and_openai_shape():
    assert parsed('```json\n{"name": "eval"}\n```') == [("eval", {})]
    assert parsed('```\n[{"name": "eval"}, {"type": "function", "function": {"name": "view", '
                  '"arguments": "{\\"path\\": \\"b.py\\"}"}}]\n```') == [("eval", {}), ("view", {"path": "b.py"})]
    # a fence holding an example rather than a call is passed over when a real call is there
    assert parsed('```\nnot json\n```\n<tool_call>{"name": "submit"}</tool_call>') == [("submit", {})]


@pytest.mark.parametrize("text, message", [
    ("I think the bug is in line 3.", "no tool call found"),
    ("<tool_call>{name: view}</tool_call>", "malformed JSON in <tool_call>"),
    ('<tool_call>{"arguments": {}}</tool_call>', 'needs a "name" string'),
    ('<tool_call>{"name": "view", "arguments": [1]}</tool_call>', 'must be an object'),
    ("<tool_call>[]</tool_call>", "empty list"),
    ("```json\n[1, 2]\n```", "must hold an object"),
    ('<tool_call>{"name": "view", "arguments": "{bad"}</tool_call>', "malformed JSON in the arguments"),
])
def test_anything_else_is_a_clear_error(text, message):
    with pytest.raises(ToolError, match=message) as info:
        ToolCall.parse_text(text)
    assert "<tool_call>" in str(info.value) or "arguments" in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('<>/={}[]"`\n tool_call function parameter json:,x1')), max_size=200))
def test_any_text_gives_calls_or_a_tool_error(text):
    try:
        calls = ToolCall.parse_text(text)
    except ToolError:
        return
    assert calls and all(isinstance(c, ToolCall) and c.name for c in calls)
