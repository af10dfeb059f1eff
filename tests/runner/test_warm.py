"""Eval forked from a warm interpreter: the same outcomes as a fresh one, in every sandbox mode; nothing a
run starts outlives it; a run that hangs or kills the interpreter costs only its own eval; close ends the
interpreter."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time

import pytest

from minidebug.runner.warm import learned_modules
from minidebug.sandbox.choose import bwrap_works, landlock_works
from minidebug.tasks.task import bundled_task_names

from ..conftest import cmdlines, descendants, processes_left

SANDBOXES = [None, pytest.param("landlock", marks=pytest.mark.skipif(not landlock_works(), reason="no Landlock")),
             pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="no usable bubblewrap"))]

# A failing test shows (in the eval's output) what started it: a warm interpreter's child or a fresh one.
WHO = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": """\
        import os

        from calc import add


        def test_add():
            assert add(2, 3) == 5


        def test_parent():
            with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
                parent = handle.read().replace(b"\\0", b" ").decode()
            print("parent:", parent)
            assert False
        """,
}


def settled(count, expected, seconds: float = 10.0):
    """count() once it equals `expected`, or its last value after `seconds` (a warm interpreter is started in
    the background: under bwrap its command line shows once bwrap has set up the sandbox)."""
    deadline = time.monotonic() + seconds
    while (value := count()) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def warm_interpreters() -> list[str]:
    """The command lines of the warm interpreters running (bwrap's own process, where there is one, left out)."""
    return [line for line in cmdlines(descendants())
            if "minidebug_eval.py --warm" in line and not line.startswith(("bwrap", "/usr/bin/bwrap"))]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_evals_after_the_first_fork_from_a_warm_interpreter_with_the_same_outcomes(make_env, task_dir, sandbox):
    task = task_dir(WHO)
    fresh = make_env(task, sandbox=sandbox, eval_mode="fresh")
    fresh.reset()
    first = fresh.evaluate()
    assert not first.forked and "--warm" not in first.output
    env = make_env(task, sandbox=sandbox)
    env.reset()  # the task's tests are known now: its warm interpreter starts here
    second = env.evaluate()
    assert second.forked and "minidebug_eval.py --warm" in second.output
    assert second.tests == first.tests == {"test_calc.py::test_add": "failed", "test_calc.py::test_parent": "failed"}
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b"}})
    third = env.evaluate()
    assert third.forked and third.tests["test_calc.py::test_add"] == "passed"


def test_eval_mode_fresh_never_forks(make_env, task_dir):
    env = make_env(task_dir(WHO), eval_mode="fresh")
    env.reset()
    results = [env.evaluate() for _ in range(2)]
    assert [r.forked for r in results] == [False, False]
    assert warm_interpreters() == []


def test_a_task_can_turn_fork_mode_off(make_env, task_dir):
    env = make_env(task_dir(WHO, 'description = "d"\neval = "python -m pytest -q"\neval_mode = "fresh"\n'))
    env.reset()
    assert [env.evaluate().forked for _ in range(2)] == [False, False]


def test_no_warm_interpreter_is_started_after_an_eval_that_ends_the_episode(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()  # where the task's tests were measured before, one is started here, for the next eval
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b"}})
    before = settled(lambda: len(warm_interpreters()), 1 if env.rooms.ready else 0)
    *_, terminated, _, _ = env.step({"name": "eval"})
    assert terminated and len(warm_interpreters()) == before <= 1


def test_one_warm_interpreter_waits_between_evals_and_none_outlives_close(make_env, task_dir):
    env = make_env(task_dir(WHO))
    env.reset()
    env.evaluate()
    assert settled(lambda: len(warm_interpreters()), 1) == 1
    env.evaluate()
    assert settled(lambda: len(warm_interpreters()), 1) == 1  # the one that served waits for the next run
    env.reset()
    env.evaluate()
    env.close()
    assert processes_left() == set()


def waiting_interpreter() -> int | None:
    """The host pid of the one warm interpreter waiting (inside bwrap's, where there is one), once it shows."""
    def pids() -> list[int]:
        return [pid for pid in descendants() for line in cmdlines([pid])
                if "minidebug_eval.py --warm" in line and not line.startswith(("bwrap", "/usr/bin/bwrap"))]
    settled(lambda: len(pids()), 1)
    found = pids()
    return found[0] if len(found) == 1 else None


def rooms(env, count: int) -> tuple[list, set]:
    """`count` evals, each forked; and the warm interpreters (host pids) that served them."""
    served, results = set(), []
    for _ in range(count):
        served.add(waiting_interpreter())
        results.append(env.evaluate())
        assert results[-1].forked
    return results, served


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_one_warm_interpreter_serves_run_after_run(make_env, task_dir, sandbox):
    env = make_env(task_dir(WHO), sandbox=sandbox)
    env.reset()
    env.evaluate()
    _, served = rooms(env, 3)
    assert len(served) == (3 if sandbox is None and os.geteuid() == 0 else 1)  # root, no sandbox: one run each


LEAVE_BEHIND = """\
    import ctypes
    import os
    import subprocess

    with open("places") as listed:  # what the run may write outside the eval tree, besides its HOME and TMPDIR
        PLACES = listed.read().split() + [os.path.join(os.environ["TMPDIR"], "left"), os.path.expanduser("~/left")]


    def test_leave_behind():
        seen = [path for path in PLACES if os.path.exists(path)]
        running = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if handle.read().startswith(b"sleep\\x001001"):
                        running.append(pid)
            except OSError:
                pass
        for path in PLACES:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write("for the next run")
        try:
            subprocess.Popen(["sleep", "1001"], start_new_session=True)
        except OSError:  # the seccomp filter keeps a program in its group where no PID namespace holds it
            subprocess.Popen(["sleep", "1001"])
        libc = ctypes.CDLL(None, use_errno=True)
        refused = [libc.shmget(0, 4096, 0o1600) == -1 and ctypes.get_errno() == 1,
                   libc.msgget(0, 0o1600) == -1 and ctypes.get_errno() == 1]
        assert (seen, running, refused) == ([], [], [True, True])
        assert False, "shows the output"
"""


def leave_behind(make_env, task_dir, sandbox, places: list[str]) -> set:
    """Four evals (the last three forked) of a test that looks for what an earlier run left (in `places`, its
    HOME and TMPDIR, a process, System V IPC objects) and leaves it; returns the warm interpreters that served."""
    files = dict(WHO, **{"test_calc.py": LEAVE_BEHIND, "places": "\n".join(places)})
    env = make_env(task_dir(files), sandbox=sandbox)
    env.reset()
    first = env.evaluate()
    results, served = rooms(env, 3)
    for run in [first, *results]:
        assert "AssertionError: shows the output" in run.output, run.output[-3000:]
    time.sleep(0.3)
    assert [line for line in cmdlines(descendants()) if "sleep 1001" in line] == []
    return served


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_nothing_a_forked_run_leaves_reaches_the_next_run(make_env, task_dir, sandbox):
    places = ["/tmp/minidebug-test-left", "/dev/shm/minidebug-test-left/in-a-folder"] if sandbox == "bwrap" else []
    served = leave_behind(make_env, task_dir, sandbox, places)
    assert len(served) == (3 if sandbox is None and os.geteuid() == 0 else 1)  # the same one served each run
    assert not any(os.path.exists(path) for path in places)  # never the host's own


METADATA = """\
    import fcntl
    import os
    import struct


    def test_metadata():
        folders = [".", os.path.dirname(os.environ["HOME"])]  # the eval tree's folder, the run's scratch folder
        os.mkdir("empty")
        empty = os.stat("empty").st_size
        seen = [(os.listxattr(folder), oct(os.stat(folder).st_mode & 0o7777), os.stat(folder).st_mtime,
                 os.stat(folder).st_size <= 2 * empty) for folder in folders]
        refused = []
        for folder in folders:
            for change in (lambda: os.setxattr(folder, "user.note", b"for the next run"),
                           lambda: os.chmod(folder, 0o751), lambda: os.utime(folder, (12345, 12345))):
                try:
                    change()
                except OSError:
                    pass
            handle = os.open(folder, os.O_RDONLY)
            for request in (0x40087602, 0x40086602):  # FS_IOC_SETVERSION, FS_IOC_SETFLAGS
                try:
                    fcntl.ioctl(handle, request, struct.pack("q", 1337))
                except OSError as exc:
                    refused.append(exc.errno)
            os.close(handle)
            names = [os.path.join(folder, f"{number:0200}") for number in range(300)]
            for name in names:  # a folder that grew stays grown on most file systems
                open(name, "w").close()
            for name in names:
                os.unlink(name)
        assert refused == [1, 1, 1, 1]
        assert all(note == [] and mode != "0o751" and mtime != 12345 and small for note, mode, mtime, small in seen), seen
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_run_passes_nothing_on_through_its_folders_attributes_mode_or_times(make_env, task_dir, sandbox):
    env = make_env(task_dir(dict(WHO, **{"test_calc.py": METADATA})), sandbox=sandbox, terminate_on_success=False)
    env.reset()
    results = [env.evaluate(), *rooms(env, 2)[0]]
    assert [run.tests for run in results] == [{"test_calc.py::test_metadata": "passed"}] * 3, results[-1].output


ORPHANS = """\
    import os


    def test_orphans():
        for _ in range(30):  # each leaves a child that ends after its parent: an orphan, a zombie until reaped
            pid = os.fork()
            if pid == 0:
                if os.fork() == 0:
                    os._exit(0)
                os._exit(0)
            os.waitpid(pid, 0)
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_runs_orphans_do_not_use_up_the_next_runs_process_limit(make_env, task_dir, sandbox):
    env = make_env(task_dir(dict(WHO, **{"test_calc.py": ORPHANS})), sandbox=sandbox, processes=48,
                   terminate_on_success=False)
    env.reset()
    env.evaluate()
    results, _ = rooms(env, 3)
    assert [run.tests for run in results] == [{"test_calc.py::test_orphans": "passed"}] * 3


READ_ONLY = """\
    import os
    import sys


    def test_read_only():
        site = [path for path in sys.path if "/site-packages" in path and "/venv" not in path][:1]
        refused = []
        for path in ["/left", "/dev/left", "/sys/fs/cgroup/left"] + [os.path.join(site, "left") for site in site]:
            try:
                open(path, "w").close()
            except OSError as exc:
                refused.append(exc.errno)
        null = os.stat("/dev/null")  # each change would leave the host's node as it is, were it allowed
        for change in (lambda: os.chmod("/dev/null", null.st_mode & 0o7777),
                       lambda: os.utime("/dev/null", ns=(null.st_atime_ns, null.st_mtime_ns))):
            try:
                change()
            except OSError as exc:
                refused.append(exc.errno)
        print("refused:", refused)
        assert os.listdir("/sys/fs/cgroup") == []
        assert len(refused) >= (3 if os.getuid() == 0 else 5) and set(refused) <= {1, 13, 30}
"""


@pytest.mark.skipif(not bwrap_works(), reason="no usable bubblewrap")
def test_under_bwrap_a_run_can_write_only_its_folders_tmp_and_dev_shm(make_env, task_dir):
    env = make_env(task_dir(dict(WHO, **{"test_calc.py": READ_ONLY})), sandbox="bwrap", terminate_on_success=False)
    env.reset()
    fresh = env.evaluate()
    assert fresh.tests == {"test_calc.py::test_read_only": "passed"}, fresh.output[-2000:]
    assert rooms(env, 1)[0][0].tests == fresh.tests


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_what_a_forked_run_starts_does_not_outlive_it(make_env, task_dir, sandbox, tmp_path):
    files = dict(WHO, **{"test_calc.py": """\
        import subprocess


        def test_daemon():
            subprocess.Popen(["sleep", "1000"])
        """})
    env = make_env(task_dir(files), sandbox=sandbox, terminate_on_success=False)
    env.reset()
    env.evaluate()
    assert env.evaluate().forked
    time.sleep(0.3)
    left = [line for line in cmdlines(descendants()) if "sleep 1000" in line]
    assert left == []


def test_a_forked_run_that_hangs_is_stopped_at_the_timeout_and_the_next_eval_works(make_env, task_dir):
    files = dict(WHO, **{"test_calc.py": """\
        import os
        import time

        from calc import add


        def test_add():
            if os.path.exists("hang"):
                time.sleep(1000)
            assert add(2, 3) == 5
        """})
    env = make_env(task_dir(files), eval_timeout=4)
    env.reset()
    env.evaluate()
    (env.workspace.root / "hang").write_text("")
    hung = env.evaluate()
    assert hung.forked and "timed out after 4 s" in hung.output and hung.score == 0
    assert [line for line in cmdlines(descendants()) if "minidebug_eval.py" in line and "--warm" not in line] == []
    (env.workspace.root / "hang").unlink()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b"}})
    fixed = env.evaluate()
    assert fixed.forked and fixed.score == 1


def test_a_run_that_kills_the_warm_interpreter_scores_nothing_and_the_next_eval_works(make_env, task_dir):
    files = dict(WHO, **{"calc.py": """\
        import os
        import signal
        import time

        if os.path.exists("kill-parent"):
            os.kill(os.getppid(), signal.SIGKILL)
            time.sleep(10)  # the parent's death ends this run (else it might finish first, and count)


        def add(a, b):
            return a + b
        """, "test_calc.py": """\
        from calc import add


        def test_add():
            assert add(2, 3) == 5
        """})
    # Without bwrap: there the interpreter is its PID namespace's init, which no signal from a run reaches.
    env = make_env(task_dir(files), terminate_on_success=False, sandbox=None)  # else a pass ends the episode
    env.reset()
    assert env.evaluate().score == 1
    (env.workspace.root / "kill-parent").write_text("")
    killed = env.evaluate()
    assert killed.forked and killed.score == 0
    (env.workspace.root / "kill-parent").unlink()
    assert env.evaluate().score == 1


@pytest.mark.skipif(not bwrap_works(), reason="no usable bubblewrap")
def test_under_bwrap_a_run_cannot_write_the_warm_interpreters_memory(make_env, task_dir):
    files = dict(WHO, **{"test_calc.py": """\
        import os


        def test_write_parent():
            with open(f"/proc/{os.getppid()}/mem", "r+b") as handle:
                handle.seek(0)
        """})
    env = make_env(task_dir(files), sandbox="bwrap", terminate_on_success=False)
    env.reset()
    env.evaluate()
    result = env.evaluate()
    assert result.forked and result.tests == {"test_calc.py::test_write_parent": "failed"}
    assert "PermissionError" in result.output or "Read-only file system" in result.output  # /proc is read-only


def _outcomes_fresh_and_forked(make_env, name: str) -> tuple[dict, dict, dict]:
    env = make_env(name)
    env.reset()
    fresh, forked = env.evaluate(), env.evaluate()
    patch = (env.task.root / "solution.patch").read_text()
    subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=env.workspace.root, check=True)
    return fresh.tests, forked.tests if forked.forked else {"not forked": True}, env.evaluate().tests


@pytest.mark.parametrize("name", ["sum_tree", pytest.param("moving_average", marks=pytest.mark.slow)])  # all: -m slow
def test_forked_outcomes_equal_fresh_ones_on_bundled_tasks(make_env, name):
    fresh, forked, gold = _outcomes_fresh_and_forked(make_env, name)
    assert forked == fresh
    assert set(gold.values()) == {"passed"}


@pytest.mark.slow
@pytest.mark.parametrize("name", bundled_task_names())
def test_forked_outcomes_equal_fresh_ones_on_every_bundled_task(make_env, name):
    fresh, forked, gold = _outcomes_fresh_and_forked(make_env, name)
    assert forked == fresh
    assert set(gold.values()) == {"passed"}


TOUCH_WARM = """\
import os
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            line = handle.read()
    except OSError:
        continue
    if b"--warm" in line and not line.startswith((b"bwrap", b"/usr/bin/bwrap")):
        try:
            with open(f"/proc/{pid}/mem", "r+b"):
                print("opened the warm interpreter's memory")
        except OSError as exc:
            print("refused:", type(exc).__name__)
"""


@pytest.mark.parametrize("sandbox", [s for s in SANDBOXES if s is not None])
def test_another_program_of_the_episode_cannot_write_the_waiting_warm_interpreters_memory(make_env, task_dir, sandbox,
                                                                                          tmp_path):
    env = make_env(task_dir(WHO), sandbox=sandbox)
    env.reset()
    env.evaluate()
    assert settled(lambda: len(warm_interpreters()), 1) == 1
    (env.workspace.root / "touch.py").write_text(TOUCH_WARM)
    result = env.exec(["python", "touch.py"])
    assert "opened" not in result.output
    if sandbox == "landlock":  # under bwrap the interpreter's PID namespace is not even visible
        assert "refused: PermissionError" in result.output


def test_the_warm_interpreter_imports_the_venvs_modules_the_tests_use(make_env):
    env = make_env("moving_average", terminate_on_success=False)
    env.reset()
    env.evaluate()
    assert "numpy" in learned_modules(env.workspace.prepared.entry)
    assert not any(name.startswith(("moving", "test_")) for name in learned_modules(env.workspace.prepared.entry))


@pytest.mark.parametrize("mode", ["fork", "fresh"])  # both import the learned modules ahead, with pytest
def test_a_module_the_agent_adds_never_shadows_one_of_the_venv(make_env, task_dir, mode):
    files = {"test_shadow.py": "import pygments\n\n\ndef test_shadow():\n    assert getattr(pygments, 'SHADOW', False)\n"}
    env = make_env(task_dir(files, name=f"shadow-{mode}"), terminate_on_success=False, eval_mode=mode)
    env.reset()
    assert env.evaluate().tests == {"test_shadow.py::test_shadow": "failed"}  # the venv's pygments
    assert "pygments" in learned_modules(env.workspace.prepared.entry)
    env.step({"name": "edit", "arguments": {"path": "pygments.py", "start": 1, "end": 0, "new_code": "SHADOW = True"}})
    shadowed = env.evaluate()
    assert shadowed.forked == (mode == "fork") and shadowed.score == 0  # the import of it fails
    assert any("pygments" in finding for finding in shadowed.suspicious), shadowed.suspicious


@pytest.mark.parametrize("mode", ["fork", "fresh"])
def test_what_the_agents_code_imports_is_never_learned(make_env, task_dir, mode):
    # The modules imported ahead are learned from the task's own tree (its tests collected, no agent change,
    # no hidden file), so an agent's code cannot choose them: not to shadow a module of the project, nor to
    # carry what it read through their names.
    files = {"calc.py": "def add(a, b):\n    return a - b\n",
             "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}
    env = make_env(task_dir(files, name=f"learn-{mode}"), terminate_on_success=False, eval_mode=mode)
    env.reset()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 1, "end": 0,
                                            "new_code": "import pip._vendor.idna"}})
    assert env.evaluate().tests == {"test_calc.py::test_add": "failed"}
    assert not [name for name in learned_modules(env.workspace.prepared.entry) if name.startswith("pip")]


@pytest.mark.parametrize("mode", ["fork", "fresh"])
def test_a_standard_module_a_learned_one_imports_does_not_hide_the_projects(make_env, task_dir, mode):
    # urllib3 (in the venv, under pip) imports the standard library's queue; imported ahead, it must not make
    # the tests get that queue where a plain run gives them the project's (whose LIFO bug then shows).
    files = {
        "queue.py": "LifoQueue = Empty = Full = None  # what urllib3 reads at import\n\n\nclass Queue:\n    def __init__(self):\n        self.items = []\n\n"
                    "    def put(self, item):\n        self.items.append(item)\n\n"
                    "    def get(self):\n        return self.items.pop()\n",
        "test_queue.py": "import pip._vendor.urllib3  # noqa: F401\nfrom queue import Queue\n\n\n"
                         "def test_first_in_first_out():\n    q = Queue()\n    q.put(1)\n    q.put(2)\n"
                         "    assert q.get() == 1\n",
    }
    env = make_env(task_dir(files, name=f"queue-{mode}"), terminate_on_success=False, eval_mode=mode)
    env.reset()
    env.evaluate()
    assert "pip._vendor.urllib3" in learned_modules(env.workspace.prepared.entry)
    result = env.evaluate()
    assert result.forked == (mode == "fork")
    assert result.tests == {"test_queue.py::test_first_in_first_out": "failed"}, result.output[-800:]


def test_a_pytest_file_left_above_the_eval_tree_stops_the_score(make_env, calc_task, tmp_path, monkeypatch):
    # Without a sandbox a program can write anywhere its user can: a pytest.ini or conftest.py above the eval
    # tree would be pytest's. In the env's own folder they are removed; higher up, the eval is not scored.
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where the env makes its folders
    env = make_env(calc_task, sandbox=None, terminate_on_success=False)
    env.reset()
    env.evaluate()
    room = env.rooms.pool.idle_rooms[0].dir
    (room / "pytest.ini").write_text("[pytest]\n")
    (room / "conftest.py").write_text("raise SystemExit('planted')\n")
    result = env.evaluate()
    assert result.tests["test_calc.py::test_add"] == "failed" and not (room / "conftest.py").exists()
    (temp / "pytest.ini").write_text("[pytest]\n")
    refused = env.evaluate()
    assert refused.score == 0 and not refused.tests and "not scored: pytest would read" in refused.notes[-1]


REHEARSED = {
    "readline.py": "MARK = 'the project'\n",
    "test_clean.py": """\
        import sys


        def test_nothing_of_the_rehearsal_is_left():
            assert "minidebug_rehearsal" not in sys.modules
            assert not any(entry.rstrip("/").endswith("drivers") for entry in sys.path[1:])


        def test_a_module_the_rehearsal_imported_is_the_projects_where_the_project_has_one():
            import readline

            assert readline.MARK == "the project"


        def test_the_runs_own_failure_is_reported_as_in_a_fresh_run():
            assert {"a": [1, 2]} == {"a": [1, 3]}
        """,
}


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_forked_run_starts_from_the_rehearsal_as_from_nothing(make_env, task_dir, sandbox):
    """The warm interpreter runs pytest once on tests of its own before it is ready
    (drivers/minidebug_rehearsal.py): a forked run sees neither that run's module nor its path, a standard
    module it imported (readline, as pdb loads it) is the project's where the project has one, and the
    outcomes and failure output are a fresh run's. (Run by root without a sandbox an interpreter serves one run
    and does not rehearse: there this checks the forked run alone.)"""
    task = task_dir(REHEARSED, name=f"rehearsed-{sandbox}")
    fresh = make_env(task, sandbox=sandbox, eval_mode="fresh", terminate_on_success=False)
    fresh.reset()
    first = fresh.evaluate()
    env = make_env(task, sandbox=sandbox, terminate_on_success=False)
    env.reset()
    second = env.evaluate()
    assert not first.forked and second.forked
    expected = {"test_clean.py::test_nothing_of_the_rehearsal_is_left": "passed",
                "test_clean.py::test_a_module_the_rehearsal_imported_is_the_projects_where_the_project_has_one": "passed",
                "test_clean.py::test_the_runs_own_failure_is_reported_as_in_a_fresh_run": "failed"}
    assert first.tests == second.tests == expected, second.output[-1500:]
    assert "AssertionError: assert {'a': [1, 2]} == {'a': [1, 3]}" in second.output
