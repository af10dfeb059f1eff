"""The one /proc scanner and the one kill loop, on real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from minidebug.sandbox import reaper

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)


def test_finds_a_process_by_folder_and_environment_and_kills_it(tmp_path):
    child = subprocess.Popen(["sleep", "30"], cwd=tmp_path, env={**os.environ, "REAPER_TEST": "yes"})
    try:
        found = {stat.pid: stat for stat in reaper.processes()}
        assert child.pid in found and found[child.pid].comm == "sleep"
        assert reaper.working_in(child.pid, [tmp_path])
        assert not reaper.working_in(child.pid, [tmp_path / "elsewhere"])
        assert reaper.carries(child.pid, b"REAPER_TEST=yes")
        assert not reaper.carries(child.pid, b"REAPER_TEST=no")
        assert reaper.send([child.pid]) == 1
        assert child.wait(timeout=10) == -signal.SIGKILL
        assert reaper.start_time(child.pid) is None  # reaped: gone from /proc
        assert reaper.send([child.pid]) == 0  # gone: nothing to send, no error
    finally:
        child.kill()
        child.wait()


def test_never_signals_itself_and_leaves_out_zombies(tmp_path):
    assert reaper.send([os.getpid()], signal.SIGKILL) == 0
    child = subprocess.Popen(["true"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped: a zombie
    try:
        assert reaper.proc_stat(child.pid).state == "Z"
        assert child.pid not in {stat.pid for stat in reaper.processes()}
    finally:
        child.wait()


def test_a_stop_signal_waits_for_the_shielded_block_and_an_owned_folder_names_its_maker(tmp_path):
    from minidebug.sandbox.reaper import OWNER_FILE, interrupt, owned_temp_dir, shielded
    from minidebug.store.removal import remove_tree

    done = []
    before = signal.signal(signal.SIGUSR1, lambda *_: interrupt())
    try:
        with pytest.raises(KeyboardInterrupt):
            with shielded():
                with shielded():
                    os.kill(os.getpid(), signal.SIGUSR1)
                    time.sleep(0.05)  # the handler has run by now: its KeyboardInterrupt waits
                    done.append("inner")
                done.append("outer")
        assert done == ["inner", "outer"]
        with pytest.raises(KeyboardInterrupt):  # outside a shielded block, at once
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.05)
    finally:
        signal.signal(signal.SIGUSR1, before)
    folder = owned_temp_dir("minidebug-test-", tmp_path)
    assert (folder / OWNER_FILE).read_text().split()[0] == str(os.getpid())
    for name in ("a", "zz", OWNER_FILE + "2"):
        (folder / name).mkdir()
        (folder / name / OWNER_FILE).write_text("x")
    assert remove_tree(folder) and not folder.exists()
