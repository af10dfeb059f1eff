"""Red team, tools: a program under test, or the agent's arguments, must never make the host act on a path
they name, block it, exhaust it, or write bytes the text does not show.

Each test makes the attack for real (real pdb, real probe runs, real trees) and asserts that it fails with an
error observation, never an exception out of `step()`.
"""

from __future__ import annotations

import io
import json
import os
import tokenize

import pytest

from minidebug.runner import probe_run
from minidebug.sandbox.choose import bwrap_works, landlock_works
from minidebug.tools import files

needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed (.ci/run installs it)")
needs_landlock = pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")
ALL_SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), pytest.param("landlock", marks=needs_landlock),
                 pytest.param(None, id="none")]

SECRET = "TOPSECRET-3f9a1c"


def step(env, name, **arguments):
    return env.step({"name": name, "arguments": arguments})[0]


# -- 1. the pdb prompt cannot make the host read a file -------------------------------------------------


def forge_prompt(env, file, line=1):
    """Inside pdb, print minidebug's own prompt marker around a location of the program's choosing."""
    command = ('!import sys; m = sys.modules["minidebug_pdb"]._MARKER; '
               f'print(m + {str(file) + ":" + str(line)!r} + m)')
    return step(env, "pdb", command=command)


def forge_all(env, locations):
    """Forge each location in turn, then flush: pdb's own prompts that a forged one pushed back come next."""
    observations = [forge_prompt(env, file, line) for file, line in locations]
    observations += [step(env, "pdb", command="p 6 * 7") for _ in locations]
    return observations


@pytest.mark.parametrize("sandbox", ALL_SANDBOXES)
def test_a_forged_pdb_location_never_shows_a_host_file(make_env, calc_task, tmp_path, sandbox):
    """A secret file, the task's solution.patch and the host's environ are shown as bare locations only."""
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n" * 3)
    patch = calc_task / "solution.patch"
    env = make_env(calc_task, sandbox=sandbox)
    env.reset()
    locations = [(secret, 1), (secret, 2), ("/proc/self/environ", 1)]
    locations += [(patch, line) for line in range(1, len(patch.read_text().splitlines()) + 1)]
    observations = forge_all(env, locations)
    for observation in observations:
        assert SECRET not in observation and "a + b" not in observation, observation
    for file, line in locations:
        assert any(o.endswith(f"[at {file}:{line}]") for o in observations), (file, line, observations)


@pytest.mark.parametrize("sandbox", ALL_SANDBOXES)
def test_a_forged_pdb_location_shows_worktree_source_but_never_through_a_link(make_env, calc_task, tmp_path,
                                                                            sandbox):
    """A worktree file lends its source line; a link in the worktree to a host file lends nothing."""
    secret = tmp_path / "secret.py"
    secret.write_text(f"{SECRET} = 1\n")
    env = make_env(calc_task, sandbox=sandbox)
    env.reset()
    root = env.workspace.root
    os.symlink(secret, root / "link.py")
    os.symlink(tmp_path, root / "linkdir")
    forged = [(root / "link.py", 1), (root / "linkdir" / "secret.py", 1),
              (f"{root}/{os.path.relpath(secret, root)}", 1)]
    observations = forge_all(env, [(root / "calc.py", 2)] + forged)
    assert observations[0].endswith("[at calc.py:2] return a - b"), observations[0]
    for observation in observations:
        assert SECRET not in observation, observation
    shown = {"link.py", "linkdir/secret.py", os.path.relpath(secret, root)}  # the worktree's own path is cut
    for name in shown:
        assert any(o.endswith(f"[at {name}:1]") for o in observations), (name, observations)


# -- 2. the probe's result file: regular, capped, never blocking, never followed ------------------------

CALC_ORIGINAL = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def leave_in_result_file(env, setup: str):
    """Make calc.py, on import, put something at the probe's result path and end the program at once."""
    (env.workspace.root / "calc.py").write_text(  # all on line 1: the probe never reaches line 2
        f"import os; out = os.path.join(os.environ['TMPDIR'], {probe_run.RESULT_NAME!r}); {setup}; os._exit(0)\n"
        + CALC_ORIGINAL)


def inspect_calc(env):
    return step(env, "inspect", at="calc.py:2", expr=["a"])


def assert_probe_recovers(env):
    """After the attack, with calc.py back as it was, inspect works again: nothing was left behind."""
    (env.workspace.root / "calc.py").write_text(CALC_ORIGINAL)
    observation = inspect_calc(env)
    assert observation.startswith("reached calc.py:2"), observation


@pytest.mark.parametrize("sandbox", ALL_SANDBOXES)
def test_a_fifo_at_the_result_path_does_not_block_the_host(make_env, calc_task, sandbox):
    """A FIFO with no writer would block a plain read forever; the host refuses it at once."""
    env = make_env(calc_task, sandbox=sandbox)
    env.reset()
    leave_in_result_file(env, "os.mkfifo(out)")
    observation = inspect_calc(env)
    assert observation.startswith("error:") and "not a regular file (a FIFO)" in observation, observation
    assert_probe_recovers(env)


@pytest.mark.parametrize("sandbox", ALL_SANDBOXES)
def test_a_symlink_at_the_result_path_is_not_followed(make_env, calc_task, tmp_path, sandbox):
    """A link to a host file in the driver's format would show that file's contents; it is never opened."""
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"reached": True, "where": SECRET, "stack": [], "locals": {}, "values": {}}))
    env = make_env(calc_task, sandbox=sandbox)
    env.reset()
    leave_in_result_file(env, f"os.symlink({str(secret)!r}, out)")
    observation = inspect_calc(env)
    assert SECRET not in observation and observation.startswith("error:"), observation
    assert "symbolic link" in observation, observation
    assert_probe_recovers(env)


@pytest.mark.parametrize("sandbox", ALL_SANDBOXES)
def test_a_huge_result_file_is_not_read(make_env, calc_task, sandbox):
    """A file past the size cap is refused from its size, without reading it."""
    env = make_env(calc_task, sandbox=sandbox)
    env.reset()
    leave_in_result_file(env, f"f = open(out, 'wb'); f.truncate({probe_run.MAX_RESULT_BYTES + 1}); f.close()")
    observation = inspect_calc(env)
    assert observation.startswith("error:") and f"{probe_run.MAX_RESULT_BYTES} byte limit" in observation, observation
    assert_probe_recovers(env)


@pytest.mark.parametrize("tool, forged", [("trace", '{"calls": 5, "total": 1}'),
                                          ("inspect", '{"reached": true, "stack": 3}')])
def test_a_result_of_the_wrong_shape_is_an_error(make_env, calc_task, tool, forged):
    """JSON the program wrote itself, in a shape the driver never writes, is an error observation."""
    env = make_env(calc_task, sandbox=None)
    env.reset()
    leave_in_result_file(env, f"open(out, 'w').write({forged!r})")
    arguments = {"target": "add"} if tool == "trace" else {"at": "calc.py:2"}
    observation = step(env, tool, **arguments)
    assert observation.startswith("error:") and "not in the driver's format" in observation, observation


def test_a_folder_at_the_result_path_does_not_stop_the_probe(make_env, calc_task):
    """A folder left where the result goes is removed before the next run."""
    env = make_env(calc_task, sandbox=None)
    env.reset()
    (env.workspace.tmp / probe_run.RESULT_NAME / "sub").mkdir(parents=True)
    observation = inspect_calc(env)
    assert observation.startswith("reached calc.py:2"), observation


# -- 3. host-side walks: iterative, with depth and entry caps --------------------------------------------

DEPTH = 1500


def deep_tree(root, depth=DEPTH):
    """Folders d/d/d/... `depth` levels below root, with needle.txt at the bottom, made without recursion."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with os.fdopen(os.open("needle.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as handle:
            handle.write("needle at the bottom\n")
    finally:
        os.close(fd)


def test_grep_and_listdir_survive_a_1500_level_tree(make_env, calc_task):
    """No RecursionError: the walk stops at its depth cap and says so."""
    env = make_env(calc_task, sandbox=None)
    env.reset()
    deep_tree(env.workspace.root)
    (env.workspace.root / "top.txt").write_text("needle at the top\n")
    found = step(env, "grep", pattern="needle")
    assert "top.txt:1: needle at the top" in found, found
    assert "needle at the bottom" not in found and f"more than {files.MAX_WALK_DEPTH} levels deep" in found, found
    listing = step(env, "listdir", depth=DEPTH + 10)
    assert "calc.py" in listing and f"more than {files.MAX_WALK_DEPTH} levels deep" in listing, listing
    assert listing.count("d/") == files.MAX_WALK_DEPTH, listing
    shallow = step(env, "listdir")
    assert "levels deep" not in shallow and shallow.count("d/") == 2, shallow


def test_a_deep_tree_made_by_the_program_does_not_break_grep(make_env, calc_task):
    """The same tree made by the agent's own shell command."""
    env = make_env(calc_task, bash=True, sandbox=None)
    env.reset()
    made = step(env, "bash", command="python -c \"import os\nfor _ in range(1500):\n os.mkdir('e'); os.chdir('e')\n"
                                     "open('n.txt', 'w').write('needle')\" && echo made")
    assert "made" in made, made
    found = step(env, "grep", pattern="needle", path="e")
    assert found.startswith("no matches") and "levels deep were not searched" in found, found


def test_the_entry_caps_are_named(make_env, calc_task, monkeypatch):
    """A search or listing cut short by its entry cap says so."""
    monkeypatch.setattr(files, "MAX_WALK_ENTRIES", 50)
    monkeypatch.setattr(files, "MAX_LISTING", 30)
    env = make_env(calc_task, sandbox=None)
    env.reset()
    many = env.workspace.root / "many"
    many.mkdir()
    for number in range(100):
        (many / f"f{number:03}.txt").write_text("needle\n")
    found = step(env, "grep", pattern="needle")
    assert "stopped after 50 files and folders" in found and found.count(": needle") < 50, found
    listing = step(env, "listdir", path="many")
    assert "listing stopped at 30 entries" in listing and listing.count(".txt") == 30, listing


# -- 4. edit never writes bytes chosen through an encoding declaration -----------------------------------

EXOTIC = ["unicode_escape", "raw_unicode_escape", "utf-7", "utf-16", "rot13"]


@pytest.mark.parametrize("codec", EXOTIC)
def test_edit_refuses_a_file_that_declares_an_exotic_encoding(make_env, calc_task, codec):
    """A file whose cookie names a codec outside the allowlist is not rewritten."""
    env = make_env(calc_task, sandbox=None)
    env.reset()
    target = env.workspace.root / "calc.py"
    original = f"# -*- coding: {codec} -*-\n".encode() + CALC_ORIGINAL.encode()
    target.write_bytes(original)
    observation = step(env, "edit", path="calc.py", old="a - b", new="a + b")
    assert observation.startswith("error:") and "which edit does not write" in observation, observation
    assert target.read_bytes() == original


@pytest.mark.parametrize("codec", EXOTIC)
def test_edit_cannot_add_a_cookie_that_smuggles_bytes(make_env, calc_task, codec):
    """Text that reads as a harmless string but that an escape codec would turn into other source is refused."""
    env = make_env(calc_task, sandbox=None)
    env.reset()
    target = env.workspace.root / "calc.py"
    before = target.read_bytes()
    smuggled = f"# -*- coding: {codec} -*-\n" + 'X = "\\n__import__(\\x27os\\x27)"\n'
    observation = step(env, "edit", path="calc.py", start=1, end=0, new_code=smuggled)
    assert observation.startswith("error:") and "which edit does not write" in observation, observation
    assert target.read_bytes() == before
    created = step(env, "edit", path="new_module.py", start=1, end=0, new_code=smuggled)
    assert created.startswith("error:") and not (env.workspace.root / "new_module.py").exists(), created


def test_a_cookie_behind_a_lone_carriage_return_is_seen(make_env, calc_task):
    """`#a\\r#b\\n# coding: utf-7` is line 2 for tokenize.detect_encoding (which imports use): refused too."""
    env = make_env(calc_task, sandbox=None)
    env.reset()
    observation = step(env, "edit", path="sneaky.py", start=1, end=0, new_code="#a\r#b\n# coding: utf-7\nX = 1\n")
    assert observation.startswith("error:") and "'utf-7'" in observation, observation
    assert not (env.workspace.root / "sneaky.py").exists()


def test_edit_writes_an_allowed_declared_encoding_as_python_reads_it(make_env, calc_task):
    """A latin-1 cookie added by the edit gets latin-1 bytes: what Python decodes is the text that was shown."""
    env = make_env(calc_task, sandbox=None)
    env.reset()
    observation = step(env, "edit", path="calc.py", start=1, end=0, new_code="# -*- coding: latin-1 -*-\nNAME = 'café'\n")
    assert "+NAME = 'café'" in observation, observation
    data = (env.workspace.root / "calc.py").read_bytes()
    assert "NAME = 'café'".encode("latin-1") in data
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)  # as Python's own tokenizer reads it
    assert "NAME = 'café'" in data.decode(encoding)
