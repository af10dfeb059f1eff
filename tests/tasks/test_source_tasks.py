"""[source] tasks: a git repository at a commit, setup commands, a test patch, SWE-bench-style scoring."""

import subprocess
import textwrap

import pytest

import minidebug
from minidebug.agents.oracle import OracleAgent


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def project(tmp_path):
    """A repository whose second commit introduced a bug; returns (repo, buggy commit)."""
    repo = tmp_path / "upstream"
    (repo / "src" / "mathlib").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "src" / "mathlib" / "__init__.py").write_text("from .ops import double, negate\n")
    (repo / "src" / "mathlib" / "ops.py").write_text("def double(x):\n    return 2 * x\n\n\ndef negate(x):\n    return -x\n")
    (repo / "tests" / "test_ops.py").write_text(textwrap.dedent("""\
        import six
        from mathlib import negate

        def test_negate():
            assert negate(3) == -3 and six.PY3
        """))
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    (repo / "src" / "mathlib" / "ops.py").write_text("def double(x):\n    return x + x + 1\n\n\ndef negate(x):\n    return -x\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "faster double")
    return repo, _git(repo, "rev-parse", "HEAD")


def _task(tmp_path, repo, commit):
    task = tmp_path / "double_bug"
    task.mkdir()
    (task / "tests.patch").write_text(textwrap.dedent("""\
        --- /dev/null
        +++ b/tests/test_double.py
        @@ -0,0 +1,4 @@
        +from mathlib import double
        +
        +def test_double():
        +    assert double(4) == 8
        """))
    (task / "solution.patch").write_text(textwrap.dedent("""\
        --- a/src/mathlib/ops.py
        +++ b/src/mathlib/ops.py
        @@ -1,3 +1,3 @@
         def double(x):
        -    return x + x + 1
        +    return 2 * x
        \x20
        """))
    (task / "task.toml").write_text(textwrap.dedent(f"""\
        description = "double(4) gives 9."
        eval = "python -m pytest -q tests"
        readonly = ["tests/**"]
        fail_to_pass = ["tests/test_double.py::test_double"]
        pass_to_pass = ["tests/test_ops.py::test_negate"]

        [source]
        git = "{repo}"
        commit = "{commit}"
        setup = ["pip install --quiet six==1.16.0"]
        test_patch = "tests.patch"
        """))
    return task


def test_source_task_scores_like_swe_bench(project, tmp_path, cache_dir):
    repo, commit = project
    with minidebug.make(_task(tmp_path, repo, commit), cache_dir=cache_dir, terminate_on_success=False) as env:
        env.reset()
        assert (env.workspace.root / "tests" / "test_double.py").exists() and not (env.workspace.root / ".git").is_dir()
        _, reward, _, _, info = env.step({"name": "eval"})
        assert (reward, info["score"], info["max_score"]) == (0.0, 0, 1)
        env.step({"name": "edit", "arguments": {"path": "src/mathlib/ops.py", "old": "-x", "new": "x"}})
        env.step({"name": "edit", "arguments": {"path": "src/mathlib/ops.py", "old": "x + x + 1", "new": "2 * x"}})
        observation, reward, *_ = env.step({"name": "eval"})
        assert reward == 0.0 and "pass_to_pass test(s) do not pass: tests/test_ops.py::test_negate" in observation
        env.reset()
        observation, info = env.reset()
        agent = OracleAgent()
        agent.start(env, observation, info)
        for _ in range(3):
            observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        assert reward == 1.0 and info["score"] == 1


def test_bad_commit_is_a_task_error(project, tmp_path, cache_dir):
    repo, _ = project
    with minidebug.make(_task(tmp_path, repo, "0" * 40), cache_dir=cache_dir) as env:
        with pytest.raises(minidebug.TaskError, match="source.commit"):
            env.reset()


@pytest.mark.slow  # a venv of its own: run with `pytest -m slow`
def test_setup_commands_see_only_the_allowlisted_environment(project, tmp_path, cache_dir, monkeypatch):
    repo, commit = project
    task = _task(tmp_path, repo, commit)
    seen = tmp_path / "setup-env.txt"
    toml = (task / "task.toml").read_text().replace(
        'setup = ["pip install --quiet six==1.16.0"]',
        f'setup = ["pip install --quiet six==1.16.0", "sh -c \\"env > {seen}\\""]')
    (task / "task.toml").write_text(toml)
    monkeypatch.setenv("HOST_API_KEY", "sk-very-secret")
    with minidebug.make(task, cache_dir=cache_dir) as env:
        env.reset()
    text = seen.read_text()
    assert "sk-very-secret" not in text and "HOST_API_KEY" not in text
    assert "VIRTUAL_ENV=" in text


@pytest.mark.slow  # a venv of its own: run with `pytest -m slow`
def test_processes_the_tests_start_import_the_project_as_bash_does(project, tmp_path, cache_dir):
    """A test that runs `python -m <project>` sees the tree's code (not a deleted editable checkout), and the
    run's TMPDIR is no path below the tree, not even by string prefix."""
    repo, _ = project
    (repo / "src" / "mathlib" / "__main__.py").write_text("from . import double\n\nprint(double(4))\n")
    (repo / "tests" / "test_cli.py").write_text(textwrap.dedent("""\
        import os, subprocess, sys, tempfile

        def test_module_runs():
            done = subprocess.run([sys.executable, "-m", "mathlib"], capture_output=True, text=True)
            assert done.stdout.strip() == "8", done.stderr

        def test_tmpdir_is_not_in_the_tree():
            assert not tempfile.gettempdir().startswith(os.getcwd())
        """))
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "cli")
    task = _task(tmp_path, repo, _git(repo, "rev-parse", "HEAD"))
    toml = (task / "task.toml").read_text().replace(
        'pass_to_pass = ["tests/test_ops.py::test_negate"]',
        'pass_to_pass = ["tests/test_ops.py::test_negate", "tests/test_cli.py::test_tmpdir_is_not_in_the_tree"]')
    (task / "task.toml").write_text(toml.replace('fail_to_pass = ["tests/test_double.py::test_double"]',
                                                 'fail_to_pass = ["tests/test_double.py::test_double", '
                                                 '"tests/test_cli.py::test_module_runs"]'))
    with minidebug.make(task, cache_dir=cache_dir, bash=True) as env:
        env.reset()
        observation = env.step({"name": "bash", "arguments": {"command": "python -m mathlib"}})[0]
        assert observation.strip().endswith("9"), observation  # the buggy tree, as eval will see it
        observation, _, _, _, info = env.step({"name": "eval"})
        assert info["score"] == 0, observation
        env.step({"name": "edit", "arguments": {"path": "src/mathlib/ops.py", "old": "x + x + 1", "new": "2 * x"}})
        observation, reward, *_ = env.step({"name": "eval"})
        assert reward == 1.0, observation


def test_what_the_install_builds_is_in_every_tree_and_never_the_agents_change(project, tmp_path, cache_dir):
    """A file the install writes into its checkout (setuptools_scm's `_version.py`, an extension built in
    place) is in the worktree after every reset and in every eval tree, as SWE-bench's images have it, and
    is never part of the agent's changes."""
    repo, _ = project
    (repo / "src" / "mathlib" / "__init__.py").write_text(
        "from ._version import version\nfrom .ops import double, negate\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "version from the build")
    task = _task(tmp_path, repo, _git(repo, "rev-parse", "HEAD"))
    toml = (task / "task.toml").read_text().replace(
        'setup = ["pip install --quiet six==1.16.0"]',
        'setup = ["pip install --quiet six==1.16.0", "sh -c \'echo version = 7 > src/mathlib/_version.py\'"]')
    (task / "task.toml").write_text(toml)
    with minidebug.make(task, cache_dir=cache_dir, bash=True) as env:
        env.reset()
        show = {"name": "bash", "arguments": {"command": "python -c 'import mathlib; print(mathlib.version)'"}}
        assert env.step(show)[0].strip().endswith("7")
        observation, _, _, _, info = env.step({"name": "eval"})
        assert info["score"] == 0 and "test_negate" not in observation.split("FAILED")[-1], observation
        env.step({"name": "edit", "arguments": {"path": "src/mathlib/ops.py", "old": "x + x + 1", "new": "2 * x"}})
        observation, reward, *_ = env.step({"name": "eval"})
        assert reward == 1.0, observation
        assert "_version" not in env.diff()
        env.reset()
        assert env.step(show)[0].strip().endswith("7")
