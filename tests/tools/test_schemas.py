"""Tool schemas against each provider's published rules, and tool calls parsed back from their shapes."""

import re

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is part of the test extra; install it")

from minidebug import ToolCall
from minidebug.tools import TOOLS, load_tool
from minidebug.tools.schemas import tool_schemas

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # both providers' rule for function/tool names
ALL_TOOLS = [load_tool(name) for name in TOOLS]


def test_openai_schemas_are_valid_in_strict_mode():
    for schema in tool_schemas(ALL_TOOLS, "openai"):
        assert schema["type"] == "function"
        function = schema["function"]
        assert NAME.match(function["name"]) and function["description"] and function["strict"] is True
        parameters = function["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert parameters["required"] == list(parameters["properties"])  # strict: every property required
        for prop in parameters["properties"].values():
            assert set(prop) <= {"type", "description", "items"}  # no keywords strict mode rejects (default...)
            if "array" in prop["type"]:
                assert prop["items"] == {"type": "string"}


def test_anthropic_schemas_are_valid_json_schema():
    for schema in tool_schemas(ALL_TOOLS, "anthropic"):
        assert set(schema) == {"name", "description", "input_schema"} and NAME.match(schema["name"])
        jsonschema.Draft202012Validator.check_schema(schema["input_schema"])
        assert schema["input_schema"]["type"] == "object"


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_a_strict_openai_call_with_nulls_validates_and_parses(tool):
    parameters = tool_schemas([tool], "openai")[0]["function"]["parameters"]
    sample = {"path": "a.py", "start": 1, "end": 2, "new_code": "x", "old": None, "new": None,
              "pattern": "x", "regex": None, "depth": None, "command": "p x", "target": "f", "max_calls": None,
              "at": "exception", "expr": ["x"]}
    arguments = {name: sample.get(name) for name in parameters["properties"]}
    jsonschema.validate(arguments, parameters)
    tool.parse(arguments)


def test_tool_calls_from_openai_and_anthropic_shapes():
    openai_call = {"id": "call_9", "type": "function",
                   "function": {"name": "view", "arguments": '{"path": "a.py", "start": null}'}}
    anthropic_block = {"type": "tool_use", "id": "toolu_1", "name": "view", "input": {"path": "a.py"}}
    assert ToolCall.parse(openai_call) == ToolCall("view", {"path": "a.py", "start": None}, "call_9")
    assert ToolCall.parse(anthropic_block) == ToolCall("view", {"path": "a.py"}, "toolu_1")
    assert ToolCall.from_openai(openai_call).id == "call_9"
    assert ToolCall.from_anthropic(anthropic_block).arguments == {"path": "a.py"}


def test_openai_sdk_objects_parse():
    from openai.types.chat import ChatCompletionMessageToolCall

    call = ChatCompletionMessageToolCall.model_validate(
        {"id": "c1", "type": "function", "function": {"name": "eval", "arguments": "{}"}})
    assert ToolCall.from_openai(call) == ToolCall("eval", {}, "c1")
