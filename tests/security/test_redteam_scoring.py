"""Red team: the score rests on the text patch. Bytecode, binary files and `.gitattributes` tricks that would
score without a text fix, or hide what was changed from `env.diff()`.

The task is CALC: `add` is wrong, `mul` is right, so the true reward of an unfixed project is 1/2.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap

import pytest

from minidebug.scoring.evaltree import copy_pristine
from minidebug.scoring.evaluate import score
from minidebug.scoring.pytest_run import run_pytest
from minidebug.store.cache import ensure_eval_base
from tests.conftest import CALC, CALC_PATCH, CALC_TOML
from tests.security.test_redteam import UNFIXED, bash, evaluate, needs_bwrap, needs_landlock

FIXED_CALC = CALC["calc.py"].replace("a - b", "a + b")
COUNTED = ("test_calc.py::test_add", "test_calc.py::test_mul")


def venv_python(env, script):
    """Run a Python script with the venv's interpreter in the worktree, as the agent's bash would."""
    body = textwrap.dedent(script)
    out = bash(env, f"python - <<'EOF'\n{body}\nEOF\necho done")
    assert "done" in out, out
    return out


def plant_unchecked_pyc(env):
    """The fixed module compiled to an unchecked-hash pyc beside the buggy calc.py."""
    fixed = textwrap.dedent(FIXED_CALC)
    return venv_python(env, f"""\
        import importlib.util, os, py_compile, tempfile
        src = os.path.join(tempfile.mkdtemp(), "calc.py")
        open(src, "w").write({fixed!r})
        py_compile.compile(src, cfile=importlib.util.cache_from_source("calc.py"), dfile="calc.py",
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        """)


def plant_rewrite_cache(env):
    """pytest's assertion-rewrite cache for test_calc.py (source-hash checked) with every test body `pass`."""
    return venv_python(env, """\
        import importlib.util, marshal, os
        from _pytest.assertion.rewrite import PYTEST_TAG
        os.makedirs("__pycache__", exist_ok=True)
        code = compile("def test_add():\\n    pass\\n\\n\\ndef test_mul():\\n    pass\\n", "test_calc.py", "exec")
        source_hash = importlib.util.source_hash(open("test_calc.py", "rb").read())
        header = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little") + source_hash[:8]
        with open(os.path.join("__pycache__", "test_calc." + PYTEST_TAG + ".pyc"), "wb") as out:
            out.write(header + marshal.dumps(code))
        """)


@pytest.fixture
def calc(task_dir):
    return task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc")


@pytest.fixture
def agent(make_env, calc):
    env = make_env(calc, bash=True)
    env.reset()
    return env


def test_an_unchecked_hash_pyc_of_the_fixed_module_does_not_score(agent):
    plant_unchecked_pyc(agent)
    pyc = "__pycache__/calc.cpython-311.pyc"
    assert "add(2, 3) = 5" in bash(agent, "python -c 'import calc; print(\"add(2, 3) =\", calc.add(2, 3))'")
    assert "a - b" in (agent.workspace.root / "calc.py").read_text()  # the source is still buggy
    reward, observation, _ = evaluate(agent)
    assert reward == UNFIXED, observation
    assert pyc in observation and "text patch" in observation
    assert f"File not scored: {pyc} (bytecode cache)" in agent.diff()


def test_a_forged_pytest_rewrite_cache_does_not_score(agent):
    plant_rewrite_cache(agent)
    assert "2 passed" in bash(agent, "python -m pytest -q -p no:cacheprovider test_calc.py")  # pytest uses it
    reward, observation, _ = evaluate(agent)
    assert reward == UNFIXED, observation
    assert "__pycache__/test_calc.cpython-311-pytest-" in observation


@pytest.mark.parametrize("name", ["calc.pyc", "calc.cpython-311-x86_64-linux-gnu.so", "calc.pyd"])
def test_compiled_modules_never_reach_eval(agent, name):
    """A sourceless module beside (or instead of) the source: left out by name, whatever the bytes."""
    plant_unchecked_pyc(agent)
    bash(agent, f"cp __pycache__/calc.cpython-311.pyc {name} && rm -r __pycache__")
    reward, observation, _ = evaluate(agent)
    assert reward == UNFIXED, observation
    assert name in observation
    assert f"File not scored: {name}" in agent.diff()


@pytest.mark.parametrize("plant", [plant_unchecked_pyc, plant_rewrite_cache])
def test_eval_reads_no_bytecode_from_the_tree(agent, tmp_path, plant):
    """Even with a forged cache in the tree pytest runs in, the buggy source is what runs."""
    tree, scratch = tmp_path / "tree", tmp_path / "scratch"
    plant(agent)
    ensure_eval_base(agent.workspace.task, agent.workspace.prepared)
    copy_pristine(agent.workspace.prepared.eval_base, tree)
    shutil.copytree(agent.workspace.root / "__pycache__", tree / "__pycache__")
    scratch.mkdir()
    run = run_pytest(agent.workspace.task.eval_command, tree, scratch, venv=agent.workspace.venv,
                     drivers=agent.workspace.drivers, timeout=60, confinement=agent.confinement)
    result = score(run, COUNTED)
    assert result.tests == {"test_calc.py::test_add": "failed", "test_calc.py::test_mul": "passed"}, run.output
    assert sorted(p.name for p in (tree / "__pycache__").iterdir()) == sorted(
        p.name for p in (agent.workspace.root / "__pycache__").iterdir())  # nothing was read or written there


def test_binary_files_and_nested_repositories_are_named_and_left_out(agent):
    bash(agent, "printf 'x = 1\\n\\x00\\xff' > data.py && printf '\\xff\\xfe' > blob.txt && "
                "git init -q sub && echo 'x = 2' > sub/m.py")
    agent.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
    reward, observation, _ = evaluate(agent)
    assert reward == 1.0, observation
    for name in ("data.py", "blob.txt", "sub/"):
        assert name in observation, name
    diff = agent.diff()
    assert "+    return a + b" in diff
    assert "Binary file not scored: data.py" in diff and "Binary file not scored: blob.txt" in diff
    assert "File not scored: sub/ (a nested git repository)" in diff
    assert "\0" not in diff and "x = 1" not in diff


def test_gitattributes_cannot_hide_a_change_from_the_diff(agent):
    bash(agent, "printf '* -diff\\n*.py binary diff=hide\\n' > .gitattributes")
    agent.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
    plant_unchecked_pyc(agent)
    diff = agent.diff()
    assert "-    return a - b\n+    return a + b" in diff, diff
    assert "Binary files" not in diff
    assert "File not scored: __pycache__/calc.cpython-311.pyc (bytecode cache)" in diff
    assert evaluate(agent)[0] == 1.0


def test_the_diff_is_what_eval_scores(agent, calc, tmp_path):
    """Applied to the task's files with `git apply`, env.diff() gives the tree eval scored."""
    agent.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
    bash(agent, "printf 'VALUE = 3\\n' > extra.py && printf '\\x01\\x02\\xff' > extra.bin && chmod +x extra.py")
    plant_unchecked_pyc(agent)
    copy = tmp_path / "copy"
    shutil.copytree(calc / "repo", copy)
    (tmp_path / "patch").write_text(agent.diff())
    subprocess.run(["git", "apply", str(tmp_path / "patch")], cwd=copy, check=True)
    assert (copy / "calc.py").read_text() == textwrap.dedent(FIXED_CALC)
    assert (copy / "extra.py").read_text() == "VALUE = 3\n" and os.access(copy / "extra.py", os.X_OK)
    assert not (copy / "extra.bin").exists() and not (copy / "__pycache__").exists()
    assert evaluate(agent)[0] == 1.0


def test_a_task_can_let_named_binary_files_through(make_env, task_dir):
    """`binary = [...]` in task.toml: those files reach eval (and the diff says so); bytecode never does."""
    files = {"reader.py": "import pathlib\n\n\ndef first():\n    return pathlib.Path(__file__).with_name('data.bin')"
                          ".read_bytes()[0]\n",
             "test_reader.py": "from reader import first\n\n\ndef test_first():\n    assert first() == 0xff\n"}
    toml = ('description = "d"\neval = "python -m pytest -q"\nbinary = ["*.bin", "*.pyc"]\n'
            'tests = ["test_reader.py::test_first"]\n')
    env = make_env(task_dir(files, toml), bash=True)
    env.reset()
    bash(env, "printf '\\xff\\x00' > data.bin && printf '\\xff\\x00' > other.dat && cp data.bin x.pyc")
    reward, observation, _ = evaluate(env)
    assert reward == 1.0, observation
    assert "other.dat (binary)" in observation and "x.pyc (bytecode)" in observation
    assert "data.bin" not in observation
    diff = env.diff()
    assert "Binary file not scored: other.dat" in diff and "Binary file used by eval, not shown: data.bin" in diff
    assert "File not scored: x.pyc (bytecode)" in diff


def test_gitattributes_cannot_make_the_diff_show_other_text_than_eval_runs(agent):
    """`ident` would collapse `$Id: ...$` to `$Id$` in git's view of the file: the diff shows the bytes."""
    fix = 'exec("$Id: add = lambda a, b: a + b $"[4:-1].strip())'
    bash(agent, f"printf '* ident\\n' > .gitattributes && printf '%s\\n' '{fix}' >> calc.py")
    reward, observation, _ = evaluate(agent)
    assert reward == 1.0, observation
    assert f"+{fix}\n" in agent.diff()


PLANTING_CALC = '''\
import importlib.util, marshal, os, sys


def add(a, b):
    return a - b


def mul(a, b):
    return a * b


try:  # at import, while pytest collects test_a.py: a rewrite cache for test_b.py where pytest looks next
    from _pytest.assertion.rewrite import PYTEST_TAG

    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(here, "test_b.py")
    folder = os.path.join(sys.pycache_prefix, *source.split(os.sep)[1:-1]) if sys.pycache_prefix else \\
        os.path.join(here, "__pycache__")
    os.makedirs(folder, exist_ok=True)
    code = compile("def test_add():\\n    pass\\n", source, "exec")
    header = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little") + \\
        importlib.util.source_hash(open(source, "rb").read())[:8]
    with open(os.path.join(folder, "test_b." + PYTEST_TAG + ".pyc"), "wb") as out:
        out.write(header + marshal.dumps(code))
    print("PLANTED", folder)
except Exception as exc:
    print("NOT PLANTED", exc)
'''


@pytest.mark.parametrize("sandbox", [None, pytest.param("landlock", marks=needs_landlock),
                                     pytest.param("bwrap", marks=needs_bwrap)])
def test_bytecode_written_during_the_run_is_never_read(make_env, task_dir, sandbox):
    files = {"calc.py": CALC["calc.py"],
             "test_a.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
             "test_b.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}
    env = make_env(task_dir(files, CALC_TOML, CALC_PATCH, name="planted"), sandbox=sandbox)
    env.reset()
    (env.workspace.root / "calc.py").write_text(PLANTING_CALC)
    observation, reward, *_ = env.step({"name": "eval"})
    assert reward == UNFIXED, observation
    assert "FAILED test_b.py::test_add" in observation
