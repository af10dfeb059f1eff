"""The patch routine places and applies hunks exactly as `git apply` does: compared with real git on diffs whose
target file has moved (lines added or removed around the hunks), including repeated lines where the nearest match
is the one git picks, and files without a final newline."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minidebug.agents.oracle import edits_for
from minidebug.tasks.patch import apply_file_patch, parse_patch, place, relocated

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)

GIT = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.autocrlf=false"]
WORDS = st.sampled_from(["a", "b", "c", "x = 1", "    return x", "", "\tpass", "\x0cpage"])


def git_diff(tmp: Path, before: str, after: str) -> str:
    (tmp / "old").mkdir(exist_ok=True)
    (tmp / "new").mkdir(exist_ok=True)
    (tmp / "old" / "f.py").write_text(before)
    (tmp / "new" / "f.py").write_text(after)
    run = subprocess.run([*GIT, "diff", "--no-index", "--text", "old/f.py", "new/f.py"], cwd=tmp,
                         capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    return run.stdout.replace("a/old/f.py", "a/f.py").replace("b/new/f.py", "b/f.py")


def git_apply(tmp: Path, target: str, patch: str) -> str | None:
    """What `git apply` makes of f.py holding `target`, or None where it refuses."""
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    (work / "f.py").write_text(target)
    (tmp / "p.diff").write_text(patch)
    run = subprocess.run([*GIT, "apply", "--unsafe-paths", str(tmp / "p.diff")], cwd=work, capture_output=True,
                         text=True, env={"GIT_CEILING_DIRECTORIES": str(tmp), "PATH": "/usr/bin:/bin", "HOME": str(tmp)})
    return (work / "f.py").read_text() if run.returncode == 0 else None


def ours(target: str, patch: str) -> str | None:
    (file_patch,) = parse_patch(patch)
    try:
        return apply_file_patch(target, file_patch)
    except ValueError:
        return None


def text_of(lines: list[str], newline_at_end: bool) -> str:
    return "\n".join(lines) + ("\n" if newline_at_end and lines else "")


@st.composite
def moved_patches(draw):
    base = draw(st.lists(WORDS, min_size=1, max_size=30))
    after = list(base)
    for _ in range(draw(st.integers(1, 3))):  # a few changes: replace, insert or delete a line
        at = draw(st.integers(0, len(after)))
        kind = draw(st.sampled_from(["replace", "insert", "delete"]))
        if kind == "insert" or not after or at == len(after):
            after.insert(at, draw(WORDS) + " # new")
        elif kind == "replace":
            after[at] = draw(WORDS) + " # changed"
        else:
            del after[at]
    target = list(base)
    for _ in range(draw(st.integers(0, 4))):  # the file the patch meets has moved on
        at = draw(st.integers(0, len(target)))
        kind = draw(st.sampled_from(["lines of its own", "lines of its own", "more of the same", "one less"]))
        if kind == "one less" and at < len(target):
            del target[at]
        elif kind == "more of the same":
            target[at:at] = draw(st.lists(WORDS, min_size=1, max_size=3))
        else:
            target[at:at] = [f"# moved {n}" for n in range(draw(st.integers(1, 12)))]
    final = draw(st.booleans())
    return text_of(base, final), text_of(after, draw(st.booleans()) if not final else final), text_of(target, final)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moved_patches())
def test_ours_does_what_git_apply_does_on_moved_files(tmp_path, case):
    base, after, target = case
    patch = git_diff(tmp_path, base, after)
    if not patch:
        return
    applied = git_apply(tmp_path, target, patch)
    assert ours(target, patch) == applied, patch
    if applied is not None:  # the header numbers, relocated, name where each hunk's old lines are in the target
        lines = re.findall(r"[^\n]*\n|[^\n]+\Z", target)  # only \n ends a line, as for git
        for hunk in relocated(target, parse_patch(patch)[0]).hunks:
            if hunk.old_count:
                found = "".join(lines[hunk.old_start - 1:hunk.old_start - 1 + hunk.old_count])
                assert found.startswith("".join(hunk.old_text())), patch


OFFSET_PATCH = "".join(line + "\n" for line in [
    "--- a/calc.py", "+++ b/calc.py", "@@ -2,3 +2,3 @@", " def add(a, b):", "-    return a - b", "+    return a + b", " ",
])


def test_an_offset_hunk_lands_on_its_context_not_its_stated_line(tmp_path):
    target = "# one\n# two\n# three\n# four\n\ndef add(a, b):\n    return a - b\n\n"
    (file_patch,) = parse_patch(OFFSET_PATCH)
    assert [spot.line for spot in place(target, file_patch)] == [6]
    assert apply_file_patch(target, file_patch) == git_apply(tmp_path, target, OFFSET_PATCH.replace("calc.py", "f.py"))
    assert relocated(target, file_patch).hunks[0].old_start == 6


def test_the_oracles_edits_follow_where_the_hunk_applies():
    target = "# one\n# two\n# three\n# four\n\ndef add(a, b):\n    return a - b\n\n"
    (file_patch,) = parse_patch(OFFSET_PATCH)
    (call,) = list(edits_for(file_patch, target))
    assert (call.arguments["start"], call.arguments["end"]) == (6, 8)
    lines = target.splitlines(keepends=True)
    lines[5:8] = [call.arguments["new_code"]]
    assert "".join(lines) == apply_file_patch(target, file_patch)


@pytest.mark.parametrize("target, why", [("x\ny\n", "does not apply"), (None, "does not exist")])
def test_what_git_refuses_is_refused_with_the_reason(target, why):
    (file_patch,) = parse_patch(OFFSET_PATCH)
    with pytest.raises(ValueError, match=why):
        apply_file_patch(target, file_patch)


def test_a_new_file_over_an_existing_one_is_refused():
    (file_patch,) = parse_patch("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n")
    assert apply_file_patch(None, file_patch) == "x = 1\n"
    with pytest.raises(ValueError, match="already exists"):
        apply_file_patch("", file_patch)


@pytest.mark.parametrize("path", ["../x.py", "d/../x.py", "d/./x.py", ".git/new", ".GIT/hooks/pre-commit"])
def test_a_path_git_refuses_is_refused(tmp_path, path):
    text = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n"
    (tmp_path / "p.diff").write_text(text)
    subprocess.run([*GIT, "init", "-q"], cwd=tmp_path, check=True)
    git = subprocess.run([*GIT, "apply", "--check", "p.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert git.returncode != 0 and "invalid path" in git.stderr
    with pytest.raises(ValueError, match="not a path inside the project"):
        parse_patch(text)


def test_an_absolute_path_is_refused():
    """Stricter than git, which would strip the first component: the host never acts on a path a patch names
    outside the project."""
    with pytest.raises(ValueError, match="not a path inside the project"):
        parse_patch("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n")


def test_every_bundled_gold_patch_applies_as_git_applies_it(tmp_path):
    from minidebug.tasks.task import bundled_task_names, load_task

    for name in bundled_task_names():
        task = load_task(name)
        work = tmp_path / name
        shutil.copytree(task.repo, work)
        subprocess.run([*GIT, "apply", str(task.solution)], cwd=work, check=True, capture_output=True,
                       env={"GIT_CEILING_DIRECTORIES": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        for file_patch in parse_patch(task.solution.read_text()):
            before = (task.repo / file_patch.old_path).read_text() if file_patch.old_path else None
            after = (work / file_patch.new_path).read_text() if file_patch.new_path else None
            assert apply_file_patch(before, file_patch) == after, (name, file_patch.new_path)
