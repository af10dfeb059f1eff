import os
import sys
import time

import pytest

from minidebug.sandbox import process
from tests.conftest import descendants

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)


def _env(tmp_path):
    return process.episode_environ(tmp_path / "venv", tmp_path, tmp_path)


def test_output_and_exit_code(tmp_path):
    done = process.run(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path, env=_env(tmp_path), timeout=10)
    assert done.returncode == 3 and not done.timed_out
    assert "out" in done.output and "err" in done.output


def test_timeout_kills_the_whole_group_and_keeps_partial_output(tmp_path):
    script = "sleep 300 & echo started; sleep 300"
    done = process.run(["sh", "-c", script], cwd=tmp_path, env=_env(tmp_path), timeout=0.5)
    assert done.timed_out and done.returncode is None
    assert "started" in done.output
    assert "timed out after 0.5 s" in done.describe(0.5)
    time.sleep(0.1)
    assert not descendants()


def test_background_child_does_not_outlive_the_command(tmp_path):
    done = process.run(["sh", "-c", "sleep 300 & echo bye"], cwd=tmp_path, env=_env(tmp_path), timeout=10)
    assert done.returncode == 0 and "bye" in done.output
    assert done.seconds < 5
    time.sleep(0.1)
    assert not descendants()


def test_endless_output_is_capped(tmp_path):
    done = process.run([sys.executable, "-c", "while True: print('x' * 1000)"], cwd=tmp_path,
                       env={"PATH": "/usr/bin:/bin"}, timeout=1, max_output=10_000)
    assert done.timed_out
    assert len(done.output) < 12_000
    assert done.dropped_bytes > 0 and "bytes of output dropped" in done.output


def test_environment_is_an_allowlist(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_456")
    done = process.run([sys.executable, "-c", "import os; print(sorted(os.environ.items()))"],
                       cwd=tmp_path, env=_env(tmp_path), timeout=10)
    assert "secret" not in done.output
    assert "OPENAI_API_KEY" not in done.output and "GITHUB_TOKEN" not in done.output
    assert f"'HOME', '{tmp_path}'" in done.output
    assert os.environ["OPENAI_API_KEY"] == "sk-secret-123"
