"""The host never hangs, never follows a path the agent made, and shows the program's output as it was."""

from __future__ import annotations

import os
import threading

import pytest

from minidebug.process import all_processes
from minidebug.sandbox import bwrap_works
from tests.conftest import CALC, CALC_PATCH, CALC_TOML

UNFIXED = 0.5


@pytest.fixture
def env(make_env, task_dir):
    env = make_env(task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc"), bash=True, command_timeout=3, pdb_timeout=3)
    env.reset()
    return env


def step(env, name, **arguments):
    return env.step({"name": name, "arguments": arguments})


def bash(env, command):
    return step(env, "bash", command=command)[0]


def finishes(call, seconds=60):
    """Run call in a thread; True if it returned within `seconds` (a liveness check, not a timing one)."""
    done = threading.Event()
    threading.Thread(target=lambda: (call(), done.set()), daemon=True).start()
    return done.wait(seconds)


def test_a_catastrophic_regex_costs_its_own_time_limit_only(env):
    bash(env, "python -c \"print('a' * 40 + '!')\" > many_a.txt")
    observation = step(env, "grep", pattern="(a+)+$", regex=True)[0]
    assert observation.startswith("error: grep: the regex search ran past 3 s")
    assert "calc.py:1" in step(env, "grep", pattern="def add")[0]


def test_grep_never_opens_a_fifo_or_a_device(env):
    bash(env, "mkfifo pipe && ln -s /dev/zero zero && ln -s /dev/stdin input")
    observations = []
    assert finishes(lambda: observations.append(step(env, "grep", pattern="return")[0]))
    assert "calc.py:2" in observations[0] and "pipe" not in observations[0]


@pytest.mark.parametrize("damage", [
    "rm -rf .git",
    "rm -rf .git && echo 'gitdir: /etc' > .git",
    "rm -rf .git && mkdir .git && printf '[core]\\n\\tfsmonitor = touch /tmp/minidebug-fsmonitor-ran\\n' > .git/config",
])
def test_a_damaged_dot_git_is_an_observation_and_reset_repairs_it(env, damage):
    bash(env, damage)
    _, reward, _, _, info = env.step({"name": "eval"})
    assert reward == UNFIXED and "error" not in info
    step(env, "edit", path="calc.py", old="a - b", new="a + b")
    assert "+    return a + b" in env.diff()
    env.reset()
    assert (env.workspace.root / ".git").is_file() and env.diff() == ""
    assert not os.path.exists("/tmp/minidebug-fsmonitor-ran")


def test_observations_are_the_programs_own_output(env):
    observation = bash(env, "echo 'build finished in 3.5s'; python -c 'print(hex(3735928559))'")
    assert "build finished in 3.5s" in observation and "0xdeadbeef" in observation
    assert "0xdeadbeef" in step(env, "pdb", command="p hex(3735928559)")[0]


def test_the_pdb_marker_cannot_be_read_or_spoofed_from_outside_memory(env):
    step(env, "pdb", command="b calc.py:2")
    step(env, "pdb", command="c")
    environ = step(env, "pdb", command="p open('/proc/self/environ', 'rb').read()")[0]
    cmdline = step(env, "pdb", command="p open('/proc/self/cmdline', 'rb').read()")[0]
    assert "<md" not in environ and "<md" not in cmdline
    fake = step(env, "pdb", command="p print('\\x1f<md0000>/etc/passwd:1\\x1f<md0000>')")[0]
    assert fake.rstrip().endswith("[at calc.py:2] return a - b")
    assert step(env, "pdb", command="p a")[0].startswith("2\n")  # the next reply is in step, not off by one


def _sleepers(tag: str) -> list[int]:
    found = []
    for stat in all_processes():
        try:
            with open(f"/proc/{stat.pid}/cmdline", "rb") as handle:
                if tag.encode() in handle.read() and stat.alive:
                    found.append(stat.pid)
        except OSError:
            pass
    return found


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed (.ci/run installs it)")
@pytest.mark.parametrize("how", ["bash", "pdb"])
def test_a_process_that_changed_session_dies_with_the_reset(env, how):
    tag = "4242.5" if how == "bash" else "4243.5"
    if how == "bash":
        bash(env, f"setsid sleep {tag} > /dev/null 2>&1 < /dev/null &")
    else:
        step(env, "pdb", command=f"!import subprocess; subprocess.Popen(['sleep', '{tag}'], start_new_session=True)")
    assert how == "bash" or _sleepers(tag)
    env.reset()
    assert finishes(lambda: _wait_gone(tag))


def _wait_gone(tag):
    import time

    while _sleepers(tag):
        time.sleep(0.05)


def test_edit_keeps_encoding_newlines_and_refuses_invalid_text(env):
    root = env.workspace.root
    (root / "latin.py").write_bytes("# -*- coding: latin-1 -*-\nname = 'café'\nother = 'naïve'\n".encode("latin-1"))
    (root / "crlf.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    (root / "broken.py").write_bytes(b"x = '\xff\xfe'\n")
    step(env, "edit", path="latin.py", old="café", new="cafe")
    assert (root / "latin.py").read_bytes() == "# -*- coding: latin-1 -*-\nname = 'cafe'\nother = 'naïve'\n".encode("latin-1")
    step(env, "edit", path="crlf.py", start=2, end=2, new_code="b = 3")
    assert (root / "crlf.py").read_bytes() == b"a = 1\r\nb = 3\r\n"
    observation = step(env, "edit", path="broken.py", old="x", new="y")[0]
    assert observation.startswith("error:") and "not valid utf-8 text" in observation
    assert (root / "broken.py").read_bytes() == b"x = '\xff\xfe'\n"
