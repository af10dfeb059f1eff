"""Resource limits, the environment allowlist, and death with the host — each tried for real, on small sizes."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from minidebug.run.cleanup import collect
from minidebug.sandbox.reaper import proc_stat
from tests.conftest import CALC, CALC_PATCH, CALC_TOML, descendants, processes_left


@pytest.fixture
def env(make_env, calc_task):
    env = make_env(calc_task, bash=True, processes=40, cpu_seconds=2, file_size_mb=5, command_timeout=20)
    env.reset()
    return env


def bash(env, command):
    return env.step({"name": "bash", "arguments": {"command": command}})[0]


@pytest.mark.parametrize("command, note", [
    ('python -c "bytearray(8 * 1024**3)"', "[memory limit of 4096 MB reached]"),
    ("python -c \"open('big', 'wb').write(b'x' * 20_000_000)\"", "[stopped: file size limit of 5 MB reached]"),
    ('python -c "while True: pass"', "[stopped: CPU time limit of 2 s reached]"),
    ('python -c "import os\nfor i in range(500): os.fork() or os._exit(0)"', "[process limit of 40 reached]"),
])
def test_each_limit_stops_the_program_and_says_so(env, command, note):
    assert note in bash(env, command)
    assert env.step({"name": "eval"})[4]["max_score"] == 2  # the env still works


def test_a_fork_loop_in_the_tests_is_contained(make_env, task_dir):
    files = dict(CALC, **{"test_fork.py": textwrap.dedent("""\
        import os, time

        def test_forks():
            children = 0
            try:
                while True:
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                    children += 1
            except OSError:
                pass
            assert children < 100
        """)})
    env = make_env(task_dir(files, CALC_TOML, CALC_PATCH), processes=60, eval_timeout=30)
    env.reset()
    observation, _, _, _, info = env.step({"name": "eval"})
    assert (info["score"], info["max_score"]) == (2, 3)  # test_forks passed: fewer than 100 children
    assert "FAILED test_fork.py" not in observation
    env.close()
    time.sleep(0.2)
    assert not processes_left()


def test_no_secret_of_the_host_reaches_the_program(make_env, task_dir, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_fake_github")
    files = dict(CALC, **{"test_env.py": "import os\n\ndef test_show():\n    print(dict(os.environ))\n    assert False\n",
                          "show.py": "import os\nprint(sorted(os.environ))\n"})
    toml = CALC_TOML + 'entrypoint = "python show.py"\n'
    env = make_env(task_dir(files, toml, CALC_PATCH), bash=True)
    env.reset()
    observations = [env.step({"name": "eval"})[0], bash(env, "env; python show.py"),
                    env.step({"name": "pdb", "arguments": {"command": "c"}})[0],
                    env.step({"name": "inspect", "arguments": {"at": "show.py:2", "expr": ["dict(os.environ)"]}})[0]]
    for observation in observations:
        assert "PATH" in observation
        for secret in ("sk-fake-openai", "ghp_fake_github", "OPENAI_API_KEY", "GITHUB_TOKEN"):
            assert secret not in observation


HOST = """
import sys, time
import minidebug
env = minidebug.make(sys.argv[1], cache_dir=sys.argv[2], pdb_timeout=60)
env.reset()
env.step({"name": "pdb", "arguments": {"command": "b calc.py:2"}})
print("ready", flush=True)
env.step({"name": "pdb", "arguments": {"command": "p __import__('time').sleep(600)"}})
"""


# A warm episode at rest after an eval and a pdb session: the warm interpreter of its next eval and session
# waits (in a room of the pool), no session of the env's own.
WARM_HOST = """
import sys, time
import minidebug
env = minidebug.make(sys.argv[1], cache_dir=sys.argv[2])
env.reset()
env.step({"name": "eval"})
env.step({"name": "pdb", "arguments": {"command": "b calc.py:2"}})
env.step({"name": "pdb", "arguments": {"command": "q"}})
tool = env.tools["pdb"]
print("ready", env.rooms.ready, tool.spare is None and tool.session is None, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("script, ready", [(HOST, "ready"), (WARM_HOST, "ready True True")],
                         ids=["pdb session", "warm interpreter waiting after a pdb session"])
def test_sigkill_of_the_host_takes_its_children_along(calc_task, cache_dir, tmp_path, script, ready):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    host = subprocess.Popen([sys.executable, "-c", script, str(calc_task), str(cache_dir)], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert host.stdout.readline().strip() == ready
    time.sleep(0.5)
    children = descendants(host.pid)
    assert children  # the pdb session busy in its sleep; or the warm interpreter and the waiting pdb session
    host.send_signal(signal.SIGKILL)
    host.wait()
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" for pid in children):
        assert time.monotonic() < deadline, "the pdb child outlived its host"
        time.sleep(0.1)
    removed = collect(temp_dir=tmp_path, cache_dir=cache_dir)  # what the killed host left: its episode dir
    assert any("minidebug-ep-" in line for line in removed) and not list(tmp_path.glob("minidebug-ep-*"))


def _state(pid):
    stat = proc_stat(pid)
    return stat.state if stat is not None else "gone"
