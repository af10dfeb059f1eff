"""Shared fixtures: a session-wide cache dir (venvs are built once per run) and a task-folder builder.

Each test process (each pytest-xdist worker) gets a temp folder of its own as TMPDIR, so that a test that
checks "no episode dir is left" sees only its own process's episodes, never another worker's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

import minidebug
from minidebug.sandbox.reaper import processes

pytest_plugins = ["pytester", "tests.leftovers"]

_OWN_TMPDIR: list[str] = []


def pytest_configure(config):
    # Short names in the machine's own temp folder: Ray and Chromium put Unix sockets in TMPDIR (at most 107
    # bytes of path), and the tests that run programs as an unprivileged user need to reach it, as in /tmp.
    base = os.environ.setdefault("MINIDEBUG_TESTS_TMP_BASE", tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix=f"mdt-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-", dir=base)
    os.chmod(folder, 0o1777)
    _OWN_TMPDIR.append(folder)
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: half as many workers again as cores. Much of the suite waits (on subprocesses, pdb prompts,
    timeouts it provokes), so with a worker per core the cores sit idle part of the time."""
    cores = os.cpu_count() or 1
    return max(2, cores + cores // 2)


def pytest_unconfigure(config):
    for folder in _OWN_TMPDIR:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("minidebug-cache")


@pytest.fixture
def make_env(cache_dir):
    """make_env(task, **options) -> a reset-ready DebugEnv that is closed after the test."""
    envs = []

    def factory(task, **options):
        env = minidebug.make(task, cache_dir=cache_dir, **options)
        envs.append(env)
        return env

    yield factory
    for env in envs:
        env.close()


@pytest.fixture
def task_dir(tmp_path):
    """task_dir(files, toml=..., patch=None, name="t") -> a task folder written under tmp_path."""

    def factory(files: dict[str, str], toml: str | None = None, patch: str | None = None, name: str = "t") -> Path:
        root = tmp_path / name
        for rel, text in files.items():
            path = root / "repo" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        toml = toml if toml is not None else 'description = "fix it"\neval = "python -m pytest -q"\n'
        (root / "task.toml").write_text(textwrap.dedent(toml))
        if patch is not None:
            (root / "solution.patch").write_text(textwrap.dedent(patch))
        return root

    return factory


CALC = {
    "calc.py": """\
        def add(a, b):
            return a - b


        def mul(a, b):
            return a * b
        """,
    "test_calc.py": """\
        from calc import add, mul


        def test_add():
            assert add(2, 3) == 5


        def test_mul():
            assert mul(2, 3) == 6
        """,
}

CALC_PATCH = """\
    --- a/calc.py
    +++ b/calc.py
    @@ -1,5 +1,5 @@
     def add(a, b):
    -    return a - b
    +    return a + b
     
     
     def mul(a, b):
    """  # noqa: W293 (a diff's blank context lines hold a space)

CALC_TOML = """\
    description = "add() gives wrong sums"
    eval = "python -m pytest -q"
    readonly = ["test_*.py"]
    """


@pytest.fixture
def calc_task(task_dir) -> Path:
    return task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc")


@pytest.fixture
def imports_colorsys_task(task_dir) -> Path:
    """A task whose test imports `colorsys` (a module a process started ahead may import, as it would a venv
    module the tests load) and whose entrypoint is pytest."""
    files = {
        "calc.py": "def one():\n    return 1\n",
        "test_calc.py": "import colorsys\nfrom calc import one\n\n\ndef test_one():\n    assert one() == 1\n",
    }
    toml = 'description = "x"\neval = "python -m pytest -q"\nentrypoint = "python -m pytest -q test_calc.py"\n' \
           'readonly = ["test_*.py"]\n'
    return task_dir(files, toml, name="colorsys")


def with_a_package_of_the_agents(env):
    """The env, reset, with a package of the agent's in its pip layer (the episode's, which no eval room has):
    its pdb sessions and probe runs start in the worktree, and once used, the next is started ahead."""
    env.reset()
    layer = env.workspace.pip_layer
    layer.mkdir(parents=True, exist_ok=True)
    (layer / "extra.py").write_text("VALUE = 1\n")
    return env


@pytest.fixture(autouse=True)
def _no_shared_rooms_between_tests():
    """Each test starts with an empty shared pool: the warm interpreters one test's envs left in it (they
    outlive envs, see `minidebug.shared_pool`) end with that test."""
    yield
    minidebug.shared_pool().close()


def processes_left() -> set[int]:
    """The live descendants of this process once the shared pool's idle rooms ended: what envs left."""
    minidebug.shared_pool().close()
    return descendants()


def descendants(pid: int | None = None) -> set[int]:
    """PIDs of every live descendant of pid (default: this process), from /proc."""
    pid = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for stat in processes():
        if stat.state != "Z":
            children.setdefault(stat.ppid, []).append(stat.pid)
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return {p for p in found if not _is_resource_tracker(p)}


def _is_resource_tracker(pid: int) -> bool:
    """multiprocessing's own helper, which lives as long as the test process: not ours to clean up."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"multiprocessing.resource_tracker" in handle.read()
    except OSError:
        return False


@pytest.fixture
def server():
    """server(*replies) -> a ChatServer (tests/chat_server.py) on 127.0.0.1, stopped after the test. The llm
    agent talks to it through the OpenAI SDK, so the test needs the [llm] extra."""
    pytest.importorskip("openai", reason="the [llm] extra is part of the test extra; install it")
    from .chat_server import ChatServer

    servers = []

    def factory(*replies):
        servers.append(ChatServer(replies[0] if len(replies) == 1 and callable(replies[0]) else replies))
        return servers[-1]

    yield factory
    for s in servers:
        s.close()


def cmdlines(pids) -> list[str]:
    """The command lines of the processes `pids` that still run."""
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                found.append(handle.read().replace(b"\0", b" ").decode())
        except OSError:
            pass
    return found


def wait_reading_stdin(pid: int) -> None:
    """Wait until the python started ahead (`pid`, or a process under it in a sandbox) blocks reading its
    stdin: its imports are done."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for process in descendants(pid) | {pid}:
            try:
                if Path(f"/proc/{process}/syscall").read_text().startswith("0 0x0 "):
                    return
            except OSError:
                pass
        time.sleep(0.01)
    raise AssertionError("the process started ahead never waited for its stdin")
