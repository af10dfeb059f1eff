import os
import subprocess
from pathlib import Path

import pytest

import minidebug
from tests.conftest import CALC, CALC_TOML, processes_left


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts
    }


def test_reset_restores_the_worktree_byte_for_byte(make_env, calc_task):
    env = make_env(calc_task, bash=True)
    env.reset()
    root = env.workspace.root
    original = _snapshot(root)
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 1, "end": 2, "new_code": "x = 1\n"}})
    env.step({"name": "edit", "arguments": {"path": "pkg/new.py", "start": 1, "end": 0, "new_code": "y = 2\n"}})
    env.step({"name": "bash", "arguments": {"command": "rm test_calc.py && mkdir -p build && touch build/out .env"}})
    assert _snapshot(root) != original
    env.reset()
    assert _snapshot(root) == original
    assert not (root / "pkg").exists() and not (root / "build").exists()


def test_reset_removes_a_nested_repository_the_agent_made(make_env, calc_task):
    env = make_env(calc_task, bash=True)
    env.reset()
    root = env.workspace.root
    observation = env.step({"name": "bash", "arguments": {
        "command": "git init -q notes && echo kept > notes/answer.txt && git -C notes add . && echo made"}})[0]
    assert observation.strip() == "made" and (root / "notes" / ".git").is_dir()
    env.reset()
    assert not (root / "notes").exists()


def test_reset_undoes_deep_trees_links_and_swapped_kinds_inside_tracked_folders(make_env, task_dir, tmp_path):
    """What reset removes itself before git restores the rest: a 1,500-level tree inside a tracked folder, a
    tracked folder swapped for a link to a folder outside (whose files stay), a tracked file swapped for a
    folder, untracked and ignored files next to tracked ones."""
    files = dict(CALC, **{"pkg/__init__.py": "", "pkg/sub/mod.py": "X = 1\n", "lib/util.py": "Y = 2\n",
                          ".gitignore": "*.log\n"})
    env = make_env(task_dir(files, CALC_TOML, name="nested"), bash=True, sandbox=None)
    env.reset()
    root = env.workspace.root
    original = _snapshot(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    script = ("import os\nos.chdir('pkg/sub')\nfor i in range(1500):\n    os.mkdir('d')\n    os.chdir('d')\n"
              "os.chmod('.', 0)\nprint('deep')")
    out = env.step({"name": "bash", "arguments": {"command": f"python -c \"{script}\""}})[0]
    assert "deep" in out, out
    out = env.step({"name": "bash", "arguments": {"command": (
        f"rm -r lib && ln -s {outside} lib && rm calc.py && mkdir -p calc.py/inner && touch calc.py/inner/f "
        "&& echo x > pkg/sub/extra.py && echo y > pkg/run.log && echo made")}})[0]
    assert "made" in out, out
    env.reset()
    assert _snapshot(root) == original
    assert not (root / "lib").is_symlink() and (root / "calc.py").is_file()
    assert sorted(p.name for p in (root / "pkg" / "sub").iterdir()) == ["mod.py"]  # the deep tree went too
    assert not (root / "pkg" / "run.log").exists()
    assert (outside / "keep.txt").read_text() == "kept"
    out = env.step({"name": "bash", "arguments": {"command": f"python -c \"{script}\""}})[0]
    assert "deep" in out, out
    env.reset()
    assert _snapshot(root) == original and sorted(p.name for p in (root / "pkg" / "sub").iterdir()) == ["mod.py"]


def test_worktree_and_temp_dirs_are_gone_after_close(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    episode_dir = env.workspace.dir
    bare = env.workspace.prepared.bare_repo
    env.step({"name": "eval"})
    env.close()
    env.close()  # idempotent
    assert not episode_dir.exists()
    listing = subprocess.run(["git", "--git-dir", str(bare), "worktree", "list"], capture_output=True, text=True)
    assert str(episode_dir) not in listing.stdout
    assert len(listing.stdout.strip().splitlines()) == 1  # only the bare repo itself
    assert not processes_left()


def test_context_manager_closes(calc_task, cache_dir):
    with minidebug.make(calc_task, cache_dir=cache_dir) as env:
        env.reset()
        episode_dir = env.workspace.dir
    assert not episode_dir.exists()
    with pytest.raises(minidebug.MinidebugError, match="closed"):
        env.reset()


def test_hidden_files_are_absent_but_evaluated(make_env, task_dir):
    files = dict(CALC)
    files["secret_test.py"] = "def test_secret():\n    assert False, 'hidden test ran'\n"
    toml = CALC_TOML + 'hidden = ["secret_*.py"]\n'
    env = make_env(task_dir(files, toml))
    env.reset()
    assert not (env.workspace.root / "secret_test.py").exists()
    for action in ({"name": "view", "arguments": {"path": "secret_test.py"}},
                   {"name": "edit", "arguments": {"path": "secret_test.py", "old": "a", "new": "b"}}):
        observation, *_ , info = env.step(action)
        assert "no such file" in observation
    assert "secret" not in env.step({"name": "listdir"})[0]
    assert "hidden test ran" not in env.step({"name": "grep", "arguments": {"pattern": "hidden test"}})[0]
    observation, _, _, _, info = env.step({"name": "eval"})
    assert info["max_score"] == 3 and info["score"] == 1
    assert "hidden tests (outcomes only): 1 not passed" in observation
    assert "hidden test ran" not in observation and "secret" not in observation
    assert not (env.workspace.root / "secret_test.py").exists()  # taken away again after eval


def test_readonly_files_are_restored_before_eval(make_env, calc_task):
    env = make_env(calc_task, bash=True)
    env.reset()
    env.step({"name": "bash", "arguments": {"command": "printf 'def test_x(): pass\\n' > test_calc.py"}})
    observation, _, _, _, info = env.step({"name": "eval"})
    assert "read-only files restored before eval: test_calc.py" in observation
    assert info["max_score"] == 2


@pytest.mark.parametrize("path, message", [
    ("../outside.py", "'..' is not allowed"),
    ("/etc/passwd", "absolute paths are not allowed"),
    ("a/../../x", "'..' is not allowed"),
    ("bad\0name", "NUL byte"),
    ("a\nb/conftest.py", "line break"),
    ("\udcff.py", "not UTF-8 text"),
    (".git/config", "no such file"),
    ("escape/passwd", "resolves outside the project"),
    ("loop", "cannot resolve"),
])
def test_paths_are_confined_to_the_worktree(make_env, calc_task, path, message):
    env = make_env(calc_task)
    env.reset()
    root = env.workspace.root
    os.symlink("/etc", root / "escape")
    os.symlink("loop", root / "loop")
    for action in ({"name": "view", "arguments": {"path": path}},
                   {"name": "edit", "arguments": {"path": path, "start": 1, "end": 0, "new_code": "x"}}):
        observation, _, _, _, info = env.step(action)
        assert observation.startswith("error:") and message in observation, observation
        assert "error" in info


def test_grep_does_not_follow_symlinks_out_of_the_worktree(make_env, calc_task, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("needle outside\n")
    env = make_env(calc_task)
    env.reset()
    os.symlink(outside, env.workspace.root / "link.txt")
    assert env.step({"name": "grep", "arguments": {"pattern": "needle"}})[0] == "no matches for 'needle'"


def test_venvs_are_keyed_by_the_interpreter_itself(tmp_path):
    """A link to the interpreter and a wrapper script that execs it (as version managers' shims do) name one
    interpreter, so they share one venv; another version does not."""
    import os
    import sys

    from minidebug.store.venv import venv_key

    real = os.path.realpath(sys.executable)
    (tmp_path / "python-link").symlink_to(real)
    shim = tmp_path / "python-shim"
    shim.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    keys = {venv_key(str(path), ["pytest"]) for path in (real, tmp_path / "python-link", shim)}
    assert len(keys) == 1
    assert venv_key(real, ["pytest", "six"]) not in keys


def test_a_line_break_in_a_name_does_not_hide_a_harness_file_from_eval(make_env, calc_task):
    """A program may make a file whose folder's name holds a line break (the file tools refuse such paths):
    eval still knows a conftest.py or a test file by its name, and takes neither from the agent."""
    env = make_env(calc_task, bash=True)
    env.reset()
    root = env.workspace.root
    (root / "a\nb").mkdir()
    (root / "a\nb" / "conftest.py").write_text("raise SystemExit('the agent's conftest ran')\n")
    (root / "c\nd").mkdir()
    (root / "c\nd" / "test_zz.py").write_text("def test_zz():\n    pass\n")
    observation, _, _, _, info = env.step({"name": "eval"})
    assert "the agent's conftest ran" not in observation
    assert (info["score"], info["max_score"]) == (1, 2), observation


def test_a_name_that_is_not_utf8_is_never_scored_and_never_breaks_text(make_env, calc_task):
    """A program may name a file with bytes that are not UTF-8 (the file tools refuse such paths): it is left
    out of the text patch, and the diff, observations and errors stay UTF-8 text (an outside round's name
    made env.diff() raise, so an export held no patch to review)."""
    env = make_env(calc_task)
    env.reset()
    with open(os.path.join(os.fsencode(env.workspace.root), b"\xff.py"), "wb") as handle:
        handle.write(b"import sys\n")
    diff = env.diff()
    assert "File not scored: \\udcff.py (a name that is not UTF-8 text)" in diff
    observation, _, _, _, info = env.step({"name": "listdir"})
    assert "\\udcff.py" in observation
    observation, _, _, _, info = env.step({"name": "view", "arguments": {"path": "\udcff.py"}})
    assert "not UTF-8 text" in observation and "not UTF-8 text" in info["error"]
    observation, _, _, _, info = env.step({"name": "eval"})
    assert info["max_score"] == 2, observation
    for text in (diff, observation, info["error"] if "error" in info else ""):
        text.encode("utf-8")


def test_more_changed_files_than_a_text_patch_may_hold_are_none_of_them_scored(make_env, calc_task):
    """A program that writes tens of thousands of files would hold each eval up while they were read and laid
    (an outside round's 320,000 files: minutes past eval_timeout): past the limit none is scored."""
    from minidebug.workspace.worktree import MAX_CHANGED_FILES

    env = make_env(calc_task)
    env.reset()
    folder = env.workspace.root / "many"
    folder.mkdir()
    for number in range(MAX_CHANGED_FILES + 1):
        (folder / f"f{number}.py").write_text("")
    (env.workspace.root / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n")
    observation, _, _, _, info = env.step({"name": "eval"})
    assert "10,002 changed files, more than a text patch may hold (10,000): none is scored" in observation
    assert (info["score"], info["max_score"]) == (1, 2), observation
    assert "none is scored" in env.diff()
