"""Red team, host side: with `sandbox=None` a program can write anything the host user can. Each test makes a
program (or a leftover of one) name something for the host to act on, and checks the host never does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minidebug.run.cleanup import collect
from tests.conftest import CALC, CALC_PATCH, CALC_TOML

DEPTH = 1500


def bash(env, command):
    return env.step({"name": "bash", "arguments": {"command": command}})[0]


@pytest.fixture
def calc(task_dir):
    return task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc_host")


# -- host-side git -----------------------------------------------------------------------------------------

FORGED_GIT = r"""
    set -e
    admin=$(sed 's/^gitdir: //' .git)
    repo=$(cd "$admin" && cd "$(cat commondir)" && pwd)
    run() { printf 'touch %s/%s' "$MARKS" "$1"; }
    cat >> "$repo/config" <<EOF
    [core]
        fsmonitor = $(run fsmonitor); echo
        hooksPath = $MARKS/hooks
        pager = $(run pager); cat
        attributesFile = $MARKS/attributes
    [filter "evil"]
        clean = $(run clean); cat
        smudge = $(run smudge); cat
        required = true
    [filter "evilproc"]
        process = $(run process)
    [diff "evil"]
        textconv = $(run textconv); cat
        command = $(run diffcommand)
    [diff]
        external = $(run external)
    [extensions]
        worktreeConfig = true
    [include]
        path = $MARKS/included
    EOF
    printf '[filter "evil"]\n\tclean = %s; cat\n' "$(run included)" > "$MARKS/included"
    printf '[filter "evil"]\n\tsmudge = %s; cat\n' "$(run worktreeconfig)" > "$admin/config.worktree"
    mkdir -p "$MARKS/hooks" "$repo/hooks" "$repo/info"
    for hook in post-checkout post-index-change reference-transaction pre-auto-gc; do
        for dir in "$MARKS/hooks" "$repo/hooks"; do
            printf '#!/bin/sh\ntouch %s/hook-%s\n' "$MARKS" "$hook" > "$dir/$hook"
            chmod +x "$dir/$hook"
        done
    done
    printf '*.py filter=evil diff=evil\ntest_*.py filter=evilproc\n' | tee .gitattributes "$repo/info/attributes" \
        "$MARKS/attributes" > /dev/null
    echo '# changed' >> calc.py
    echo forged
"""


def test_host_side_git_runs_no_program_that_a_program_wrote_into_the_repository(make_env, calc, tmp_path):
    """Filters, textconv, fsmonitor, hooks, pager, external diff, includes and worktree config written into the
    cached repository by a program: none runs on the host across diff, eval, reset and close; the eval after
    it is not scored and reset() rebuilds the repository."""
    marks = tmp_path / "marks"
    marks.mkdir()
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    repo = env.workspace.prepared.bare_repo
    for round_ in range(2):
        assert "forged" in bash(env, f"export MARKS='{marks}'\n" + textwrap.dedent(FORGED_GIT)), round_
        assert "evil" in (repo / "config").read_text()
        assert "# changed" in env.diff()
        observation, reward, _, _, info = env.step({"name": "eval"})
        assert reward == 0 and info.get("tampered") is True, observation
        _, info = env.reset()
        assert info.get("tampered") is True and "evil" not in (repo / "config").read_text()
        assert "# changed" not in (env.workspace.root / "calc.py").read_text()
        assert sorted(p.name for p in marks.iterdir()) == ["attributes", "hooks", "included"], round_
    with make_env(calc, sandbox=None) as clean:  # the next episode finds the repository as it was made
        clean.reset()
        _, reward, *_ = clean.step({"name": "eval"})
        assert reward == 0.5
    env.close()
    assert "evil" not in (repo / "config").read_text()
    assert sorted(p.name for p in marks.iterdir()) == ["attributes", "hooks", "included"]


# -- gc --------------------------------------------------------------------------------------------------


def test_gc_follows_no_link_named_like_an_episode_dir(tmp_path):
    """A `minidebug-ep-*` symlink to a folder where a process works: gc leaves the folder and the process."""
    temp = tmp_path / "temp"
    target = tmp_path / "precious"
    temp.mkdir()
    target.mkdir()
    (target / "owner").write_text("1 1")  # looks like an episode's, whose owner is gone
    (target / "data.txt").write_text("keep me")
    (temp / "minidebug-ep-evil").symlink_to(target)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], cwd=target)
    try:
        removed = collect(temp_dir=temp, cache_dir=tmp_path / "cache")
        assert [line for line in removed if "pids cgroup" not in line] == []  # (cgroups are machine-wide)
        assert sleeper.poll() is None, "gc killed a process working outside any episode dir"
        assert (target / "data.txt").read_text() == "keep me"
        assert (temp / "minidebug-ep-evil").is_symlink()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_gc_removes_only_folders_with_minidebugs_owner_file(tmp_path):
    """A folder named like an episode dir without an owner file, or with a link as one, is not minidebug's."""
    temp = tmp_path / "temp"
    temp.mkdir()
    (temp / "minidebug-ep-noowner").mkdir()
    (temp / "minidebug-ep-linkowner").mkdir()
    (tmp_path / "elsewhere").write_text("1 1")
    (temp / "minidebug-ep-linkowner" / "owner").symlink_to(tmp_path / "elsewhere")
    (temp / "minidebug-ep-real").mkdir()
    (temp / "minidebug-ep-real" / "owner").write_text("1 1")  # pid 1's start time differs: a dead owner
    removed = collect(temp_dir=temp, cache_dir=tmp_path / "cache")
    assert [Path(line).name for line in removed if "pids cgroup" not in line] == ["minidebug-ep-real"]
    assert sorted(p.name for p in temp.iterdir()) == ["minidebug-ep-linkowner", "minidebug-ep-noowner"]


# -- deep trees ------------------------------------------------------------------------------------------


def _deep_tree(env, name="d", files_every=100):
    """A DEPTH-level folder tree made by a program in the worktree (some levels hold a file, one is locked)."""
    script = (f"import os\nfor i in range(1, {DEPTH} + 1):\n    os.mkdir('{name}')\n    os.chdir('{name}')\n"
              f"    if i % {files_every} == 0:\n        open('f', 'w').write('x')\nos.chmod('.', 0)\nprint('made')\n")
    out = bash(env, f"python -c \"{script}\"")
    assert "made" in out, out


@pytest.mark.parametrize("name", ["d", "longer-folder-name"])  # paths shorter, and far longer, than PATH_MAX
def test_a_very_deep_tree_is_removed_by_reset_and_close(make_env, calc, name):
    """reset() and close() succeed on a 1,500-level tree the program made, and leave nothing behind."""
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    _deep_tree(env, name)
    root = env.workspace.root
    env.reset()
    assert not (root / name).exists()
    assert sorted(p.name for p in root.iterdir()) == sorted([".git", *CALC])
    _deep_tree(env, name)
    episode = env.workspace.dir
    env.close()
    assert not os.path.lexists(episode)


def test_a_very_deep_tree_in_the_eval_base_is_noticed_and_rebuilt(make_env, calc):
    """A program that plants a deep tree in the pristine eval tree: the check and the rebuild both cope."""
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    _, reward, *_ = env.step({"name": "eval"})
    assert reward == 0.5
    eval_base = env.workspace.prepared.eval_base
    _deep_tree(env, "d")
    assert "moved" in bash(env, f"mv d '{eval_base}/d' && echo moved")
    _, reward, _, _, info = env.step({"name": "eval"})
    assert reward == 0.5 and info.get("tampered")
    assert not (eval_base / "d").exists()
