"""The sandboxes: only the episode is there to write, the network is gone, and everything still works inside."""

import socket

import pytest

from minidebug.sandbox.choose import bwrap_works, landlock_works
from minidebug.taskcheck.check import check_task, format_reports
from minidebug.tasks.task import bundled_task_names, load_task

needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed (.ci/run installs it)")


@pytest.fixture
def env(make_env, calc_task):
    env = make_env(calc_task, bash=True, sandbox="bwrap", pdb_timeout=2)
    env.reset()
    return env


def bash(env, command):
    return env.step({"name": "bash", "arguments": {"command": command}})[0]


@needs_bwrap
def test_writes_outside_the_episode_fail(env, tmp_path):
    outside = tmp_path / "outside.txt"
    observation = bash(env, f"echo inside > inside.txt && cat inside.txt; echo x > {outside}; echo y > ~/home.txt; "
                            "echo z > $TMPDIR/tmp.txt; ls ~ $TMPDIR")
    assert "inside" in observation and f"{outside}: No such file or directory" in observation  # not mounted
    assert not outside.exists()
    assert "home.txt" in observation and "tmp.txt" in observation


@needs_bwrap
def test_no_network_not_even_loopback(env):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')"
        observation = bash(env, f'python -c "{code}"')
    finally:
        server.close()
    assert "connected" not in observation and ("ConnectionRefusedError" in observation or "OSError" in observation)


@needs_bwrap
def test_pdb_and_probes_work_inside(env):
    assert "Breakpoint 1 at calc.py:2" in env.step({"name": "pdb", "arguments": {"command": "b calc.py:2"}})[0]
    assert env.step({"name": "pdb", "arguments": {"command": "c"}})[0].endswith("[at calc.py:2] return a - b")
    observation = env.step({"name": "pdb", "arguments": {"command": "p __import__('time').sleep(30)"}})[0]
    assert "interrupted (SIGINT)" in observation or "killed" in observation
    assert "a = 2" in env.step({"name": "inspect", "arguments": {"at": "calc.py:2", "expr": ["a"]}})[0]


@pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")
@pytest.mark.parametrize("name", [name if index == 0 else pytest.param(name, marks=pytest.mark.slow)
                                  for index, name in enumerate(bundled_task_names()[::10])])  # more with -m slow
def test_bundled_tasks_pass_check_under_landlock(name, cache_dir):
    report = check_task(load_task(name), cache_dir=cache_dir, sandbox="landlock")
    assert report.ok, format_reports([report])


@pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")
def test_landlock_follows_the_folders_that_reset_makes_anew(make_env, calc_task):
    env = make_env(calc_task, bash=True, sandbox="landlock")
    for _ in range(2):
        env.reset()
        observation = env.step({"name": "bash", "arguments": {"command": "echo a > $TMPDIR/t && echo b > ~/h && "
                                                                         "echo c > w && cat $TMPDIR/t ~/h w"}})[0]
        assert observation.split() == ["a", "b", "c"], observation
        assert env.step({"name": "eval"})[2] is False and "score 1/2" in env.step({"name": "eval"})[0]


@pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")
def test_landlock_lets_devices_be_used_but_not_made(make_env, calc_task):
    env = make_env(calc_task, bash=True, sandbox="landlock")
    env.reset()
    observation = env.step({"name": "bash", "arguments": {"command": "echo x > /dev/null && echo used; "
                                                                     "mknod /dev/raw_disk b 8 0"}})[0]
    assert "used" in observation and "Permission denied" in observation
