"""The host never hangs, never follows a path the agent made, and shows the program's output as it was."""

from __future__ import annotations

import os
import threading

import pytest

from minidebug.sandbox.choose import bwrap_works, landlock_works
from minidebug.sandbox.reaper import processes
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
    for stat in processes():
        try:
            with open(f"/proc/{stat.pid}/cmdline", "rb") as handle:
                if tag.encode() in handle.read() and stat.alive:
                    found.append(stat.pid)
        except OSError:
            pass
    return found


SANDBOXES = [pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="no bubblewrap")),
             pytest.param("landlock", marks=pytest.mark.skipif(not landlock_works(), reason="no Landlock")), None]


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("how", ["bash", "pdb"])
def test_a_process_that_changed_session_dies_with_the_reset(make_env, task_dir, how, sandbox):
    env = make_env(task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc"), bash=True, sandbox=sandbox)
    env.reset()
    tag = f"{4242 + len(how)}.{len(str(sandbox))}"
    if how == "bash":
        observation = bash(env, f"setsid sleep {tag} > /dev/null 2>&1 < /dev/null &")
    else:
        observation = step(env, "pdb", command=f"!import subprocess; subprocess.Popen(['sleep', '{tag}'], "
                                               "start_new_session=True)")[0]
    # In bwrap the escape works and dies with the namespace; elsewhere the seccomp filter refuses it.
    refused = "Operation not permitted" in observation
    assert how == "bash" or refused or finishes(lambda: _wait_started(tag)), observation
    env.reset()
    assert finishes(lambda: _wait_gone(tag))


def _wait_started(tag):
    import time

    while not _sleepers(tag):  # a loaded machine may show the new process a moment after Popen returned
        time.sleep(0.05)


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


HOSTILE_PROGRAMS = [
    "mkfifo pipe; ln -s /dev/zero zero; ln -s loop_a loop_b; ln -s loop_b loop_a; ln -s / root_link",
    "python -c \"open('big.txt', 'w').write('x' * 30_000_000)\"",
    "printf 'x = 1\\n\\xff\\xfe bad\\n' > bad.py",
    "rm -rf .git",
    "echo 'gitdir: /nonexistent' > .git",
    "setsid sleep 4244.5 > /dev/null 2>&1 < /dev/null & (sleep 4244.5 &) ; echo started",
    "yes 'endless output'",
    "python -c \"import os\nfor _ in range(20):\n    os.fork() or (__import__('time').sleep(3600))\" &",
    "chmod 000 calc.py; mkdir -p locked && chmod 000 locked",
    "python -c \"import os; os.makedirs('many', exist_ok=True); [open(f'many/f{i}.py', 'w').close() for i in range(3000)]\"",
    "ln -sf /etc/passwd test_calc.py; ln -s ../../.. up",
]
TOOL_CALLS = [
    ("view", {"path": "calc.py"}), ("view", {"path": "bad.py"}), ("view", {"path": "root_link/etc/passwd"}),
    ("grep", {"pattern": "return"}), ("grep", {"pattern": "x+", "regex": True}), ("listdir", {"depth": 3}),
    ("edit", {"path": "calc.py", "old": "a - b", "new": "a + b"}), ("edit", {"path": "bad.py", "old": "x", "new": "y"}),
    ("edit", {"path": "up/escape.txt", "start": 1, "end": 0, "new_code": "x"}), ("eval", {}),
    ("pdb", {"command": "b calc.py:2"}), ("pdb", {"command": "c"}), ("reset", {}),
]


@pytest.mark.parametrize("examples", [3, pytest.param(24, marks=pytest.mark.slow)])
def test_hostile_programs_then_random_tool_calls_leave_the_host_intact(make_env, task_dir, tmp_path, examples):
    """(`-m slow` tries more sequences.)"""
    from hypothesis import HealthCheck, given, settings, strategies as st

    from tests.conftest import processes_left

    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "keep.txt").write_text("unchanged")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in canary.iterdir())
    task = task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc")

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(programs=st.lists(st.sampled_from(HOSTILE_PROGRAMS), min_size=1, max_size=3),
           calls=st.lists(st.sampled_from(TOOL_CALLS), min_size=2, max_size=6))
    def run(programs, calls):
        env = make_env(task, bash=True, command_timeout=3, pdb_timeout=3, eval_timeout=20)
        env.reset()
        for program in programs:
            assert finishes(lambda: bash(env, program), 60)  # noqa: B023 (called here)
        for name, arguments in calls:
            if name == "reset":
                assert finishes(env.reset, 60)
                continue
            result = []
            assert finishes(lambda: result.append(env.step({"name": name, "arguments": arguments})), 120)  # noqa: B023 (called here)
            assert isinstance(result[0][0], str)
        env.reset()
        assert env.step({"name": "eval"})[1] == UNFIXED  # reset always brings back a clean base
        env.close()
        assert not processes_left()
        assert sorted((p.name, p.stat().st_mtime_ns) for p in canary.iterdir()) == before

    run()


@pytest.mark.parametrize("escape", ["setsid sleep {tag} > /dev/null 2>&1 < /dev/null &",
                                    "python3 -c 'import os, time; os.setpgid(0, 0); time.sleep({tag})' &",
                                    "cd / && env -i setsid sleep {tag} > /dev/null 2>&1 &"])
def test_without_a_pid_namespace_programs_cannot_leave_their_group(tmp_path, escape):
    """What runs without bwrap (Landlock or no sandbox): setsid and setpgid fail, so the group kill ends all."""
    from minidebug.sandbox import seccomp
    from minidebug.sandbox.confinement import Confinement

    if not seccomp.available():
        pytest.skip("no seccomp filter for this architecture")
    confinement = Confinement(4096, 60, 64, 64, None)
    tag = f"4250.{len(escape)}"
    try:
        _, output = confinement.run(["bash", "-c", escape.format(tag=tag) + " sleep 0.5"], cwd=tmp_path,
                                    env={"PATH": "/usr/bin:/bin"}, timeout=10, writable=[tmp_path])
        assert "Operation not permitted" in output or not _sleepers(tag), output
        assert finishes(lambda: _wait_gone(tag))
    finally:
        confinement.close()


def test_strays_are_found_by_token_or_working_folder(tmp_path):
    """The net behind the filter: a process that did leave its group is found by the episode's token in its
    environment, or by its working folder."""
    import subprocess

    from minidebug.sandbox.confinement import STRAY_VARIABLE, Confinement, PidsCgroup

    confinement = Confinement(4096, 60, 64, 64, None)
    confinement.cgroup.close()
    confinement.cgroup = PidsCgroup.existing(None)  # as where no cgroup can be made
    started = [subprocess.Popen(["sleep", "4253.1"], env={STRAY_VARIABLE: confinement.token}, cwd="/",
                                start_new_session=True),
               subprocess.Popen(["sleep", "4253.2"], env={}, cwd=tmp_path, start_new_session=True)]
    try:
        confinement.kill_strays([tmp_path])
        for proc in started:
            assert proc.wait(timeout=20) == -9
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
        confinement.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="drops privileges, so it must start as root")
def test_as_a_non_root_user_strays_die_too():
    """As a user who can make no cgroup: a program that tries to leave its group does not outlive it."""
    import shutil
    import tempfile
    from pathlib import Path

    from minidebug.sandbox.confinement import Confinement

    work = Path(tempfile.mkdtemp(prefix="minidebug-nonroot-"))  # pytest's tmp_path is root's alone
    os.chmod(work, 0o777)
    tag = "4251.5"
    pid = os.fork()
    if pid == 0:  # the child: nobody, from here on
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            confinement = Confinement(4096, 60, 64, 64, None)
            try:
                no_cgroup = confinement.cgroup.path is None
                confinement.run(["bash", "-c", f"setsid sleep {tag} > /dev/null 2>&1 < /dev/null & sleep 0.5"],
                                cwd=work, env={"PATH": "/usr/bin:/bin"}, timeout=10, writable=[work])
                confinement.kill_strays([work])
                gone = finishes(lambda: _wait_gone(tag), 20)
                code = 0 if (no_cgroup and gone) else 2
            finally:
                confinement.close()
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert os.waitstatus_to_exitcode(status) == 0
