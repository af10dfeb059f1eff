"""make()'s options are documented once, on the fields of `Limits` and `EnvConfig`: make()'s docstring, the options
table (minidebug/core/README.md, next to make()) and the signature of make() are held to those fields here."""

import inspect
import re
import sys
import warnings
from pathlib import Path

import pytest

import minidebug
from minidebug.agents.clients import Reply
from minidebug.agents.llm import LLMAgent
from minidebug.core.config import EnvConfig
from minidebug.core.env import DebugEnv
from minidebug.core.make import NOT_FIELDS, make, option_field, shown_default
from minidebug.errors import TaskError
from minidebug.sandbox import choose
from minidebug.tasks.spec import Limits, TaskSpec
from minidebug.tasks.task import load_task
from minidebug.tools.strategies import parse_strategy

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CHECKOUT = Path(__file__).resolve().parents[2]
README = (CHECKOUT / "README.md").read_text(encoding="utf-8")
README_WORDS = " ".join(README.split())  # for phrases that line wrapping may break
OPTIONS_PAGE = (CHECKOUT / "minidebug" / "core" / "README.md").read_text(encoding="utf-8")  # the options table
OPTIONS_WORDS = " ".join(OPTIONS_PAGE.split())
DOCS_WORDS = " ".join(" ".join(path.read_text(encoding="utf-8").split())
                      for path in [CHECKOUT / "README.md", *sorted((CHECKOUT / "minidebug").glob("*/README.md"))])
PARAMETERS = inspect.signature(make).parameters
FIELDS = {**Limits.model_fields, **EnvConfig.model_fields}
TABLE_HEADER = "| option | default | description |"


def expected_rows() -> list[tuple[str, str, str]]:
    """(option, default, description) for each of make()'s parameters, straight from the fields."""
    rows = []
    for name, parameter in PARAMETERS.items():
        if name in FIELDS:
            rows.append((name, shown_default(FIELDS[name].default), FIELDS[name].description))
        else:
            default = "required" if parameter.default is inspect.Parameter.empty else shown_default(parameter.default)
            rows.append((name, default, NOT_FIELDS[name]))
    return rows


def readme_rows() -> list[tuple[str, str, str]]:
    lines = OPTIONS_PAGE.splitlines()
    assert lines.count(TABLE_HEADER) == 1, "minidebug/core/README.md has no options table, or more than one"
    assert TABLE_HEADER not in DOCS_WORDS.replace(OPTIONS_WORDS, ""), "a second options table, on another page"
    start = lines.index(TABLE_HEADER) + 2  # past the header and its |---| line
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"not three cells: {line}"
        name = cells[0].strip("`")
        rows.append((name, cells[1], cells[2]))
    return rows


def docstring_entries() -> dict[str, str]:
    """make()'s Args section as {option: description}, continuation lines joined."""
    doc = make.__doc__
    args = doc.split("\n    Args:\n", 1)[1].split("\n\n", 1)[0]
    entries: dict[str, str] = {}
    name = None
    for line in args.splitlines():
        match = re.fullmatch(r" {8}(\w+): (.*)", line)
        if match:
            name = match.group(1)
            entries[name] = match.group(2)
        else:
            assert name is not None and line.startswith(" " * 12), f"unexpected line in Args: {line!r}"
            entries[name] += " " + line.strip()
    return entries


def test_every_make_option_is_a_field_or_hand_written_and_every_field_an_option():
    assert not set(Limits.model_fields) & set(EnvConfig.model_fields)
    for name in PARAMETERS:
        is_field = option_field(name) is not None
        assert is_field != (name in NOT_FIELDS), f"make(): option {name!r} needs exactly one description"
    assert set(NOT_FIELDS) <= set(PARAMETERS), "NOT_FIELDS describes an option make() does not take"
    assert set(FIELDS) <= set(PARAMETERS), "a field of Limits or EnvConfig is no option of make()"
    assert [name for name, p in PARAMETERS.items() if p.kind is not p.KEYWORD_ONLY] == ["task"]


def test_make_defaults_are_none_or_the_fields_own():
    for name, parameter in PARAMETERS.items():
        if name in FIELDS:
            assert parameter.default is None or parameter.default == FIELDS[name].default, name


def test_every_field_has_a_description_stating_its_default():
    for name, field in FIELDS.items():
        assert field.description and field.description.endswith((".", ")")), name
        default = field.default
        if isinstance(default, tuple):
            assert "Default: " in field.description, name
        else:
            shown = f'"{default}"' if isinstance(default, str) else str(default)
            assert f"Default {shown}" in field.description, (name, shown)


def test_docstring_is_built_from_the_fields():
    entries = docstring_entries()
    assert list(entries) == list(PARAMETERS)
    assert entries == {name: description for name, _, description in expected_rows()}
    assert "{options}" not in make.__doc__ and "(undocumented)" not in make.__doc__
    assert all(len(line) <= 112 for line in make.__doc__.splitlines())
    assert minidebug.make.__doc__ == make.__doc__


def test_readme_table_matches_the_fields():
    assert readme_rows() == expected_rows()


def test_readme_names_the_limits_as_a_run_of_the_table():
    names = [name for name, _, _ in readme_rows()]
    first, last = names.index("max_steps"), names.index("processes")
    assert names[first:last + 1] == list(Limits.model_fields)
    assert "The limits, `max_steps` to `processes`, can also be set per task in task.toml's `[limits]`" in OPTIONS_WORDS


def test_readme_task_toml_example_is_a_valid_task_toml():
    block = README.split("A task is a folder:", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    spec = TaskSpec.model_validate(tomllib.loads(block))
    assert spec.limits.max_steps == 30 and spec.limits.eval_timeout == 120


@pytest.mark.parametrize("options, message", [
    ({"max_steps": 0}, "bad option max_steps=0: Input should be greater than 0"),
    ({"eval_timeout": "soon"}, "bad option eval_timeout='soon': Input should be a valid number"),
    ({"sandbox": "docker"}, "bad option sandbox='docker': Input should be 'auto', 'bwrap' or 'landlock'"),
    ({"tools": ["vew"]}, "bad option tools=('vew',): unknown tool 'vew'. Did you mean 'view'?"),
    ({"strategy": "debug-after-0"}, "bad option strategy='debug-after-0': debug-after-N needs N >= 1"),
    ({"max_seconds": "long"}, "bad option max_seconds='long': Input should be a valid number"),
])
def test_a_bad_option_is_a_value_error_naming_it(calc_task, options, message):
    with pytest.raises(ValueError) as raised:
        minidebug.make(calc_task, **options)
    assert str(raised.value).startswith("make(): " + message)
    assert "pydantic" not in str(raised.value)


def test_a_bad_limit_in_task_toml_names_the_field(task_dir):
    root = task_dir({"a.py": "x = 1\n"}, 'description = "d"\neval = "python -m pytest -q"\n[limits]\nmemory_mb = 0\n')
    with pytest.raises(TaskError, match="field 'limits.memory_mb': Input should be greater than 0"):
        load_task(root)


def test_options_reach_the_limits_and_the_config(calc_task):
    env = minidebug.make(calc_task, max_steps=7, memory_mb=512, max_seconds=9.5, bash=True, strategy="rewrite")
    assert (env.limits.max_steps, env.limits.memory_mb, env.limits.eval_timeout) == (7, 512, 60)
    assert env.config.max_seconds == 9.5 and env.config.strategy == "rewrite" and "bash" in env.config.tools
    assert env.config.encoding == EnvConfig.model_fields["encoding"].default


@pytest.mark.parametrize("bwrap, landlock, chosen", [(True, True, "bwrap"), (False, True, "landlock"),
                                                     (False, False, None)])
def test_sandbox_auto_does_what_its_description_says(monkeypatch, bwrap, landlock, chosen):
    assert '"auto" uses bubblewrap, else Landlock, else nothing with a RuntimeWarning' \
        in EnvConfig.model_fields["sandbox"].description
    monkeypatch.setattr(choose, "bwrap_works", lambda: bwrap)
    monkeypatch.setattr(choose, "landlock_works", lambda: landlock)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert choose.resolve("auto") == chosen
    assert [w.category for w in caught] == ([] if chosen else [RuntimeWarning])


class FakeEnv:
    """What the llm agent uses of an env: the strategy, tool schemas, and report_usage (recorded)."""

    strategy = parse_strategy("debug")

    def __init__(self):
        self.charged = []

    def tool_schemas(self, provider):
        return [{"type": "function", "function": {"name": "eval", "description": "run the tests",
                                                  "parameters": {"type": "object", "properties": {}}}}]

    def report_usage(self, tokens):
        self.charged.append(tokens)


class ScriptedClient:
    def complete(self, messages, tools):
        message = {"role": "assistant", "content": None,
                   "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "eval", "arguments": "{}"}}]}
        return Reply(message, 7, {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107})


def test_the_llm_agent_charges_completion_tokens_as_documented():
    agent = LLMAgent(model="m", base_url="http://127.0.0.1:1/v1")
    agent.client = ScriptedClient()
    env = FakeEnv()
    agent.start(env, "fix it", {})
    assert agent.act("fix it", {}).name == "eval"
    assert env.charged == [7]  # the completion tokens, not the 100 prompt tokens
    assert "completion tokens" in DebugEnv.report_usage.__doc__
    assert "The `llm` agent reports each answer's completion tokens" in README_WORDS
    assert "prompt + completion" not in DOCS_WORDS
