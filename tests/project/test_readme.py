"""Every ```bash and ```python block of README.md and of the package's pages (minidebug/*/README.md) runs, as
written, and succeeds; every relative link of those pages and of benchmarks/README.md leads to a file and heading.

A local HTTP server (tests/chat_server.py) stands in for every model: it finds the task from the problem
statement in the conversation and answers with the gold patch's edits, then eval and submit, in the shape the
client asked for (OpenAI tool calls, streamed or not, text tool calls, Anthropic tool_use blocks, or one shell
command of `md` calls for mini-swe-agent's bash tool). What cannot run literally here is changed by the tables
below, each entry with its reason; a table entry whose README text is gone fails `test_every_rule_still_applies`.
Bash blocks run command by command (continuation lines joined) in one folder per block, in order.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from minidebug.agents.oracle import gold_edits
from minidebug.core.calls import ToolCall
from minidebug.errors import WorkspaceError
from minidebug.store.interpreters import find_python
from minidebug.tasks.recipes import task_environment
from minidebug.tasks.task import bundled_task_names, load_task, smoke_task_paths

from ..conftest import processes_left

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

CHECKOUT = Path(__file__).resolve().parents[2]
README = CHECKOUT / "README.md"
# README and the pages next to the code it links to: every block of each runs, every link of each resolves.
DOCS = [README, *sorted((CHECKOUT / "minidebug").glob("*/README.md"))]
LINKED_DOCS = [*DOCS, CHECKOUT / "benchmarks" / "README.md"]

# ---- every substitution, in one place ----------------------------------------------------------------------
# (README text, what runs instead, why); applied to each command of a bash block and to each python block.
SUBSTITUTIONS = [
    ("&& pytest ", '&& (cd "$CHECKOUT" && pytest --collect-only -q -n 0 -p no:cacheprovider tests/project/test_layout.py) ',
     "the suite is what runs this test, and its own collection imports every module: the command, with the "
     "project's configuration, collecting one module stands for running it"),
    ("--backend ray -j 8 --ray-address ray://head-node:10001", "--backend ray -j 2 --tasks sum_tree",
     "no Ray cluster here: a local Ray (the README's 'omit for local'), one task on two workers"),
    ("--model openai/gpt-4.1-mini", "--model mockllm/model",
     "inspect's OpenAI provider needs openai>=3.4, which the [verifiers] extra installed here rules out"),
    ("http://localhost:8000/v1", "$MODEL_URL", "the local stand-in model"),
    ('"https://api.openai.com/v1"', '__import__("os").environ["MODEL_URL"]', "the local stand-in model"),
    ("&& minidebug run              #", "&& minidebug run --tasks sum_tree late_handlers #",
     "other tests run the oracle on every bundled task (test_redteam_forgery, test_warm -m slow); two here"),
    ("minidebug check                    #", 'minidebug check "$CHECKOUT"/tasks/sum_tree "$CHECKOUT"/tasks/late_handlers #',
     "tests/taskcheck/test_check.py checks every bundled task already (over a minute); two here"),
    ("import asyncio, minidebug\n", "import asyncio, minidebug\nfrom my_agent import my_policy  # stand-in\n",
     "`my_policy` is the reader's own: a stand-in that submits at once"),
]
# An llm run over every bundled task is cut to one: the stand-in model solves each the same way.
LLM_ON_EVERY_TASK = (re.compile(r"^minidebug run --agent llm(?!.*--tasks)"), "minidebug run --tasks sum_tree --agent llm")
# Remote endpoints the SDKs read from the environment, pointed at the stand-in model.
MODEL_ENVIRONMENT = {"OPENAI_BASE_URL": "{url}", "OPENAI_API_KEY": "sk-local", "ANTHROPIC_BASE_URL": "{root}",
                     "ANTHROPIC_API_KEY": "sk-ant-local", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
# Commands run first, for names a snippet takes as existing: runs/gpt is the reader's earlier run.
BEFORE = {"minidebug report runs/qwen runs/gpt":
          "minidebug run --tasks sum_tree --agent llm --model gpt-4.1-mini --strategy rewrite debug --out runs/gpt"}
# Interactive commands get their input on stdin.
STDIN = {"minidebug play sum_tree": "view tree.py 1 8\nsubmit\n"}
# `minidebug mcp` is a stdio server: an MCP client drives it (its tools listed, one called).
MCP_COMMAND = "minidebug mcp "
# What a python block prints when it did its job (a block can succeed with a failing model: see the rewards).
EXPECTED_OUTPUT = {"MinidebugEnvironment(task=": "Submitted 1.0", "load_environment(tasks=": "[1.0, 1.0]",
                   'minidebug.make("sum_tree", max_steps=30)': "1.0 4 4"}
# Placeholder modules, written next to the snippet: `my_agent.Agent` and `my_policy` are the reader's own.
MY_AGENT = '''\
"""Stand-ins for the reader's agent: Agent replays the gold patch of the task its first observation names."""
from tests.project.test_readme import gold_calls


class Agent:
    def __init__(self):
        self.plan = None

    def act(self, observation):
        if self.plan is None:
            self.plan = iter(gold_calls(observation))
        return next(self.plan, {"name": "submit"})


def my_policy(observation):
    return {"name": "submit"}
'''


@dataclass
class Block:
    lang: str
    heading: str
    text: str
    doc: Path = README


def readme_blocks() -> list[Block]:
    """The ```bash and ```python blocks of every page of DOCS, README's first."""
    return [block for doc in DOCS for block in doc_blocks(doc)]


def doc_blocks(doc: Path) -> list[Block]:
    blocks, heading, lines = [], "", doc.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        fence = re.fullmatch(r"\s*```(bash|python)\s*", line)
        if fence:
            end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```")
            blocks.append(Block(fence.group(1), heading, "\n".join(lines[index + 1:end]) + "\n", doc))
            index = end
        index += 1
    return blocks


def block_id(block: Block, blocks: list[Block]) -> str:
    """`<heading>-<n>` for README's blocks, `<folder>-<heading>-<n>` for a package page's (`tasks-...`)."""
    same = [b for b in blocks if b.heading == block.heading and b.doc == block.doc]
    slug = re.sub(r"[^a-z0-9]+", "-", block.heading.lower()).strip("-")
    page = "" if block.doc == README else f"{block.doc.parent.name}-"
    return f"{page}{slug}-{same.index(block) + 1}"


BLOCKS = readme_blocks()


# ---- the stand-in model --------------------------------------------------------------------------------------
@functools.cache
def known_tasks():
    return [load_task(name) for name in bundled_task_names()] + [load_task(path) for path in smoke_task_paths()]


def gold_calls(text: str) -> list[ToolCall]:
    """The gold patch's edits, eval and submit, for the task whose problem statement `text` holds."""
    matches = [task for task in known_tasks() if task.spec.description.strip() in text]
    if not matches:
        return []
    task = max(matches, key=lambda task: len(task.spec.description))
    return gold_edits(task, lambda rel: (task.repo / rel).read_text()) + [ToolCall("eval"), ToolCall("submit")]


def _text(content) -> str:
    if isinstance(content, list):
        return "\n".join(_text(part.get("text", part.get("content", ""))) for part in content)
    return content or ""


def gold_model(body: dict) -> tuple[int, dict]:
    """A chat-completions or Messages API answer: the next gold call, counted by the answers so far."""
    messages = body.get("messages", [])
    calls = gold_calls(_text(body.get("system")) + "\n".join(_text(m.get("content")) for m in messages))
    step = sum(1 for m in messages if m.get("role") == "assistant")
    tools = [t.get("function", t).get("name") for t in body.get("tools", [])]
    if "system" in body:  # Anthropic's Messages API
        blocks = [{"type": "tool_use", "id": f"toolu_{step}", "name": call.name, "input": dict(call.arguments)}
                  for call in calls[step:step + 1]] or [{"type": "text", "text": "Done."}]
        return 200, {"id": f"msg_{step}", "type": "message", "role": "assistant", "model": body["model"],
                     "content": blocks, "stop_reason": "tool_use" if calls[step:] else "end_turn",
                     "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 9}}
    message, finish = {"role": "assistant", "content": "Done."}, "stop"
    if tools == ["bash"]:  # mini-swe-agent: one shell command of md calls, then its submit line
        edits = [f"md {c.name} {shlex.quote(json.dumps(dict(c.arguments)))}" for c in calls if c.name == "edit"]
        command = " && ".join(edits + ["md eval"]) if step == 0 else "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        calls = [ToolCall("bash", {"command": command})] * (step + 1)
    if step < len(calls) and tools:
        call = calls[step]
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{step}", "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))}}]}
        finish = "tool_calls"
    elif step < len(calls):  # --tool-format text
        message["content"] = f'<tool_call>{json.dumps({"name": calls[step].name, "arguments": dict(calls[step].arguments)})}</tool_call>'
    return 200, {"id": f"c{step}", "object": "chat.completion", "created": 0, "model": body.get("model", "local"),
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 9, "total_tokens": 109}}


# ---- running the blocks --------------------------------------------------------------------------------------
def extras() -> set[str]:
    return set(tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def check_pip_install(command: str) -> None:
    """`pip install -e .` or `-e '.[extra,...]'` is not run: each extra must be one of pyproject.toml's."""
    words = shlex.split(command)
    target = words[words.index("-e") + 1]
    assert target == "." or re.fullmatch(r"\.\[[\w,-]+\]", target), command
    named = set(target[2:-1].split(",")) if target != "." else set()
    assert named <= extras(), f"{command}: no such extra {named - extras()}"


def substitute(text: str) -> str:
    for readme_text, replacement, _why in SUBSTITUTIONS:
        text = text.replace(readme_text, replacement)
    return LLM_ON_EVERY_TASK[0].sub(LLM_ON_EVERY_TASK[1], text)


def commands(block: Block) -> list[str]:
    joined = re.sub(r"\\\n\s*", "", block.text)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def shell_env(tmp_path: Path, temp: Path, cache_dir: Path, url: str) -> dict[str, str]:
    """The host's environment (uv's cache and certificates: verifiers prepares its chat program with uv) but
    for model settings; commands find this checkout's minidebug, inspect and pytest, the test cache and the
    stand-in model; `temp` is their TMPDIR (short: Ray's socket paths must fit in 107 bytes)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, module in {"minidebug": "minidebug", "inspect": "inspect_ai", "pytest": "pytest"}.items():
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n')
        (bin_dir / name).chmod(0o755)
    model = {key: value.format(url=url, root=url.removesuffix("/v1")) for key, value in MODEL_ENVIRONMENT.items()}
    host = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "ANTHROPIC_"))}
    return {**host, "PATH": os.pathsep.join([str(bin_dir), sysconfig.get_path("scripts"), host.get("PATH", "/bin")]),
            "TMPDIR": str(temp),
            "MINIDEBUG_CACHE": str(cache_dir), "CHECKOUT": str(CHECKOUT), "MODEL_URL": url, "LANG": "C.UTF-8",
            **model}


def run(command: str, cwd: Path, env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def run_mcp(command: str, cwd: Path, env: dict[str, str]) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    words = shlex.split(command)
    params = StdioServerParameters(command=str(Path(env["PATH"].split(os.pathsep)[0]) / words[0]), args=words[1:],
                                   env=env, cwd=str(cwd))

    async def session():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                assert {"view", "edit", "submit", "reset"} <= {t.name for t in (await client.list_tools()).tools}
                result = await client.call_tool("view", {"path": "tree.py", "start": 5, "end": 5})
                assert "def __init__" in result.content[0].text
    asyncio.run(asyncio.wait_for(session(), 120))


def run_bash(block: Block, cwd: Path, env: dict[str, str]) -> None:
    for command in commands(block):
        for part in re.split(r"\s+&&\s+", command.split("  #")[0]):
            if part.startswith("pip install"):
                check_pip_install(part)
        command = re.sub(r"^(pip install [^&#]*&&\s*)+", "", substitute(command))
        if command.startswith("pip install"):
            continue
        if command.startswith(MCP_COMMAND):
            run_mcp(command.split("#")[0], cwd, env)
            continue
        for prefix, before in BEFORE.items():
            if command.startswith(prefix):
                run(before, cwd, env)
        run(command, cwd, env, next((text for prefix, text in STDIN.items() if command.startswith(prefix)), ""))


def run_python(block: Block, cwd: Path, env: dict[str, str]) -> None:
    (cwd / "my_agent.py").write_text(MY_AGENT)
    source = substitute(block.text)
    if "@pytest.mark.minidebug_tasks" in source:  # a test file for the pytest plugin: pytest runs it
        (cwd / "test_snippet.py").write_text(source)
        run("pytest -q -p no:cacheprovider test_snippet.py", cwd, env)
        return
    (cwd / "snippet.py").write_text(source)
    output = run(f'"{sys.executable}" snippet.py', cwd, env)
    for marker, expected in EXPECTED_OUTPUT.items():
        if marker in source:
            assert expected in output, output


# Whole framework runs that other tests make in the default run too (tests/integrations/test_inspect_cli.py runs
# README's `inspect eval` command, tests/integrations/test_verifiers.py a scripted rollout), and the two longest
# command sequences, whose commands the default run makes elsewhere (tests/run/test_batch.py: --resume,
# --rerun-failed, --sandbox, --limit, Ray; tests/agents/test_llm.py, tests/agents/test_agents.py and
# tests/run/test_play_and_replay.py: the llm agent against a local model, play, replay and the replay agent): these
# blocks run with -m slow.
SLOW_BLOCKS = {"in-other-frameworks-inspect-ai-mini-swe-agent-skyrl-gym-verifiers-1",
               "in-other-frameworks-inspect-ai-mini-swe-agent-skyrl-gym-verifiers-4",
               "many-episodes-1", "agents-people-and-replays-1"}


@pytest.mark.parametrize("block", [pytest.param(b, marks=pytest.mark.slow) if block_id(b, BLOCKS) in SLOW_BLOCKS
                                   else b for b in BLOCKS], ids=[block_id(b, BLOCKS) for b in BLOCKS])
def test_readme_block_runs(block, server, tmp_path, cache_dir):
    chat = server(gold_model)
    temp = Path(tempfile.mkdtemp(prefix="mdr-", dir="/tmp"))
    try:
        run_block(block, tmp_path, temp, shell_env(tmp_path, temp, cache_dir, chat.url))
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert not processes_left()


def run_block(block: Block, tmp_path: Path, temp: Path, env: dict[str, str]) -> None:
    # This checkout's packages alone on the path, not its root: an editable install's egg-info there would make
    # inspect take minidebug for a non-editable distribution and find no task of it.
    site = tmp_path / "site"
    site.mkdir()
    for package in ("minidebug", "tests"):
        (site / package).symlink_to(CHECKOUT / package)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "work"), str(site)])
    (tmp_path / "work").mkdir()
    (run_bash if block.lang == "bash" else run_python)(block, tmp_path / "work", env)
    assert not list(temp.glob("minidebug-ep-*")), "an episode folder was left"


def test_every_rule_still_applies():
    """Each table entry names README text that is still there, and each block is a bash or python one."""
    text = "\n".join(b.text for b in BLOCKS)
    joined = re.sub(r"\\\n\s*", "", text)
    for readme_text, _, why in SUBSTITUTIONS:
        assert readme_text in text or readme_text in joined, (readme_text, why)
    for prefix in [*BEFORE, *STDIN, MCP_COMMAND]:
        assert prefix in joined, prefix
    for marker in EXPECTED_OUTPUT:
        assert marker in text, marker
    assert any(LLM_ON_EVERY_TASK[0].search(c) for b in BLOCKS if b.lang == "bash" for c in commands(b))
    assert len(BLOCKS) >= 12 and {b.lang for b in BLOCKS} == {"bash", "python"}


# ---- the `[source]` task and the recipe table of "Other sources of tasks", run together ------------------------
# What cannot run literally: a local repository stands in for the task's URL, two of its commits for the hashes.
SOURCE_TASK = {"https://example.org/me/mathlib.git": "{repo}", "8d634ec": "{base}", "a41c2b0": "{environment}"}
MATHLIB = {  # the repository the two tables describe: double(4) gives 9 at the task's commit
    "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
                      '[project]\nname = "mathlib"\nversion = "1.0"\n',
    "requirements/dev.txt": "-e .\niniconfig\n",  # the first of the recipe's requirement_files
    "src/mathlib/__init__.py": "",
    "src/mathlib/ops.py": "def double(x):\n    return x + x + 1\n\n\ndef negate(x):\n    return -x\n",
    "tests/test_ops.py": "from mathlib.ops import negate\n\n\ndef test_negate():\n    assert negate(3) == -3\n",
}
MATHLIB_TESTS = ("--- /dev/null\n+++ b/tests/test_double.py\n@@ -0,0 +1,5 @@\n+from mathlib.ops import double\n+\n"
                 "+\n+def test_double():\n+    assert double(4) == 8\n")
MATHLIB_FIX = ("--- a/src/mathlib/ops.py\n+++ b/src/mathlib/ops.py\n@@ -1,5 +1,5 @@\n def double(x):\n"
               "-    return x + x + 1\n+    return 2 * x\n \n \n def negate(x):\n")


def toml_blocks() -> list[str]:
    """The ```toml blocks of README.md and the package's pages, dedented."""
    return [textwrap.dedent(block) for doc in DOCS for block in re.findall(
        r"^ *```toml\n(.*?)^ *```$", doc.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)]


def mathlib_repo(root: Path) -> dict[str, str]:
    """The stand-in repository, with a commit for the task and a later one for its environment."""
    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                              capture_output=True, text=True).stdout.strip()

    for rel, text in MATHLIB.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "faster double")
    base = git("rev-parse", "HEAD")
    (root / "README").write_text("mathlib\n")
    git("add", "-A")
    git("commit", "-qm", "a readme")
    return {"repo": str(root), "base": base, "environment": git("rev-parse", "HEAD")}


@pytest.mark.slow  # the recipe's Python is 3.9: another interpreter, as the other slow tests need
def test_the_source_task_and_its_recipe_validate_as_written(tmp_path, cache_dir, monkeypatch):
    """The README's `[source]` task, built from its recipe table (installed from the environment commit), is
    valid under `minidebug validate`: the fail_to_pass test fails on the base, the gold patch fixes it."""
    task_toml = next(b for b in toml_blocks() if "[source]" in b and "[environment]" in b)
    recipe_toml = next(b for b in toml_blocks() if b.startswith("repositories = "))
    names = mathlib_repo(tmp_path / "mathlib")
    for readme_text, stand_in in SOURCE_TASK.items():
        assert readme_text in task_toml, readme_text
        task_toml = task_toml.replace(readme_text, stand_in.format(**names))
    task, recipes = tmp_path / "mathlib_double", tmp_path / "recipes"
    task.mkdir()
    recipes.mkdir()
    (task / "task.toml").write_text(task_toml)
    (task / "tests.patch").write_text(MATHLIB_TESTS)
    (task / "solution.patch").write_text(MATHLIB_FIX)
    (recipes / "mathlib.toml").write_text(recipe_toml)
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(recipes))
    python = task_environment(load_task(task).spec)[0].python  # the task's version's own
    try:
        find_python(python)
    except WorkspaceError as exc:
        pytest.skip(f"the recipe's interpreter is not here: {exc}")
    done = subprocess.run([sys.executable, "-m", "minidebug", "validate", str(task)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MINIDEBUG_CACHE": str(cache_dir)})
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[-1] == "1/1 tasks valid", done.stdout + done.stderr
    assert lines[1].split() == ["mathlib_double", "1/1", "1/1", "1/1", "-", "ok", "valid"]
    assert f"recipe me/mathlib 1.0 (python {python}," in lines[2], lines[2]
    assert not processes_left()


# ---- links between the pages -----------------------------------------------------------------------------------
LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")


def anchors(doc: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as hyphens, a
    repeated one numbered."""
    found: set[str] = set()
    text = re.sub(r"^ *```.*?^ *```$", "", doc.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def broken_links(doc: Path) -> list[str]:
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not this checkout's
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists() or not linked.is_relative_to(CHECKOUT):
            broken.append(f"{target}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=[str(d.relative_to(CHECKOUT)) for d in LINKED_DOCS])
def test_every_relative_link_leads_to_a_file_and_heading(doc):
    assert broken_links(doc) == []


def test_the_link_check_catches_a_missing_file_and_heading(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CHECKOUT", tmp_path)
    (tmp_path / "a.md").write_text("# A page\n## `make()`: options\n```python\n# not a heading\n```\n"
                                   "[x](#make-options) [y](b.md) [z](#not-a-heading) [w](a.md#a-page) "
                                   "[v](https://example.org/#nowhere)\n")
    assert broken_links(tmp_path / "a.md") == ["b.md: no such file", "#not-a-heading: no such heading"]


def test_every_package_page_is_linked_from_readme():
    linked = {(README.parent / target.partition("#")[0]).resolve()
              for target in LINK.findall(README.read_text(encoding="utf-8"))}
    assert [doc for doc in DOCS[1:] if doc not in linked] == []


def test_the_stand_in_model_plays_the_gold_patch():
    """The stand-in model finds the task from its problem statement, in both API shapes."""
    statement = load_task("sum_tree").spec.description
    status, answer = gold_model({"model": "m", "messages": [{"role": "user", "content": statement}],
                                 "tools": [{"type": "function", "function": {"name": "edit"}}]})
    call = answer["choices"][0]["message"]["tool_calls"][0]["function"]
    assert status == 200 and call["name"] == "edit" and json.loads(call["arguments"])["path"] == "tree.py"
    status, answer = gold_model({"model": "m", "system": "", "messages": [
        {"role": "user", "content": [{"type": "text", "text": statement}]}, {"role": "assistant", "content": []}]})
    assert [b["name"] for b in answer["content"]] == [gold_calls(statement)[1].name]
    assert gold_calls("no task here") == []


def test_the_md_commands_the_readme_shows_run_in_order(cache_dir):
    """The `md ...` examples of the mini-swe-agent paragraph, through a live episode's shell bridge."""
    pytest.importorskip("minisweagent", reason="the [mini-swe-agent] extra is part of the test extra; install it")
    from minidebug.integrations.mini_swe_agent import MinidebugEnvironment

    examples = re.findall(r"`(md [^`]+)`", README.read_text(encoding="utf-8"))
    assert "md inspect tree.py:6 children" in examples and examples[-1] == "md submit"
    with MinidebugEnvironment(task="sum_tree", cache_dir=cache_dir) as env:
        outputs = {}
        for example in examples:
            status, outputs[example] = env.bridge.run(example, 60)
            assert status == 0, (example, outputs[example])
    assert "children = []" in outputs["md inspect tree.py:6 children"]
    assert not processes_left()
