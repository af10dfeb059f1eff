"""Red team: no channel outside the score. Nothing a program sets on a file another program can read (its
times, mode, owner, extended attributes) survives into that program's view, within an episode or across two
episodes that share a venv; and the scored run of a task with hidden files comes after the shown one, its
duration padded to a bucket.
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time

import pytest

from minidebug.scoring.timing import buckets, padding
from tests.conftest import CALC, CALC_PATCH, CALC_TOML
from tests.security.test_redteam import bash, evaluate, needs_bwrap, needs_landlock, write

SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), pytest.param("landlock", marks=needs_landlock)]

# Tries every way to mark the venv's files, and prints what each call did.
SENDER = r"""
import json, os, sys
files = [os.path.join(sys.prefix, "pyvenv.cfg"), os.__file__.replace(sys.base_prefix, sys.prefix)]
files += [os.path.join(sys.prefix, "bin", name) for name in sorted(os.listdir(os.path.join(sys.prefix, "bin")))[:5]]
done = {}
for path in files:
    for name, call in [("utime now", lambda: os.utime(path)),
                       ("utime past", lambda: os.utime(path, ns=(10**9, 10**9))),
                       ("futimens", lambda: os.utime(os.open(path, os.O_RDONLY), None)),
                       ("chmod", lambda: os.chmod(path, 0o600)),
                       ("setxattr", lambda: os.setxattr(path, "user.bit", b"1"))]:
        try:
            call()
            done[f"{name} {os.path.basename(path)}"] = "done"
        except OSError as exc:
            done[f"{name} {os.path.basename(path)}"] = exc.__class__.__name__
print("SENT", json.dumps(done))
"""

# What another program sees of the same files: mtime, ctime, mode, size, extended attributes, many times.
RECEIVER = r"""
import json, os, sys, time
files = [os.path.join(sys.prefix, "pyvenv.cfg")]
files += [os.path.join(sys.prefix, "bin", name) for name in sorted(os.listdir(os.path.join(sys.prefix, "bin")))[:5]]
seen = set()
end = time.time() + float(sys.argv[1])
while True:
    for path in files:
        info = os.stat(path, follow_symlinks=False)
        try:
            attributes = tuple(os.listxattr(path, follow_symlinks=False))
        except OSError:
            attributes = ()
        seen.add((path, info.st_mtime_ns, info.st_ctime_ns, info.st_mode, info.st_size, attributes))
    if time.time() > end:
        break
    time.sleep(0.02)
print("SEEN", len(seen), len(files))
"""


def run_python(env, script, *args):
    command = "python - " + " ".join(args) + " <<'EOF'\n" + script + "\nEOF"
    return bash(env, command)


@pytest.fixture
def two_tasks(task_dir):
    """Two tasks with the same requirements, so their episodes share one venv."""
    return (task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc"),
            task_dir({**CALC, "extra.py": "X = 1\n"}, CALC_TOML, CALC_PATCH, name="calc2"))


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_program_marks_a_file_of_the_shared_venv(make_env, two_tasks, sandbox):
    sender, receiver = (make_env(task, bash=True, sandbox=sandbox) for task in two_tasks)
    sender.reset()
    receiver.reset()
    assert sender.workspace.venv == receiver.workspace.venv
    seen: list[str] = []
    watching = threading.Thread(target=lambda: seen.append(run_python(receiver, RECEIVER, "1.5")))
    watching.start()
    time.sleep(0.3)
    sent = run_python(sender, SENDER)
    watching.join()
    done = json.loads(sent.split("SENT ", 1)[1].splitlines()[0])
    assert "done" not in done.values(), done
    counts = seen[0].split("SEEN ", 1)[1].split()
    assert counts[0] == counts[1], seen[0]  # one view per file, all the time


@needs_landlock
def test_under_landlock_touch_creates_a_file_and_says_it_cannot_set_times(make_env, two_tasks):
    env = make_env(two_tasks[0], bash=True, sandbox="landlock")
    env.reset()
    out = bash(env, "touch new.txt; echo code=$?; ls new.txt; touch calc.py; echo code=$?")
    assert "code=1" in out and "new.txt" in out and "Operation not permitted" in out, out


def test_a_scored_run_seems_to_last_a_whole_bucket():
    for timeout in (4, 60, 600):
        lasts = {round(elapsed + padding(elapsed, timeout), 6) for elapsed in
                 [i / 100 for i in range(1, 100 * (timeout + 2), 7)]}
        assert len(lasts) <= buckets(timeout), (timeout, sorted(lasts))
        assert all(padding(elapsed, timeout) >= 0 for elapsed in (0.0, 0.3, timeout, timeout + 50))
    assert buckets(60) == 9


HIDDEN_TOML = CALC_TOML + 'hidden = ["test_hidden.py"]\n'


def test_the_shown_run_comes_before_the_scored_one(make_env, task_dir, tmp_path):
    """Each run appends its kind and start time to a file outside the trees (no sandbox, so it can): the
    shown run (no hidden file) comes first."""
    log = tmp_path / "runs.log"
    files = {**CALC,
             "test_hidden.py": "def test_hidden():\n    assert True\n",
             "conftest.py": f"""\
                import os, time
                def pytest_sessionstart(session):
                    kind = "scored" if os.path.exists("test_hidden.py") else "shown"
                    with open({str(log)!r}, "a") as out:
                        out.write(kind + " " + repr(time.monotonic()) + "\\n")
                """}
    env = make_env(task_dir(files, HIDDEN_TOML, CALC_PATCH, name="hidden"), sandbox=None)
    env.reset()
    started = time.monotonic()
    evaluate(env)
    runs = [line.split() for line in log.read_text().splitlines()]
    assert [kind for kind, _ in runs][-2:] == ["shown", "scored"], runs
    assert started <= float(runs[-2][1]) <= float(runs[-1][1])


# Every way we know for one program to tell another something through a file both may only read: its locks,
# watches on it, and whether its pages are cached (evicted by one, probed by the other).
SHARED_FILE_PROBE = r"""
import ctypes, errno, fcntl, mmap, os, subprocess, sys
path = os.path.join(sys.prefix, "pyvenv.cfg")
found = {}
fd = os.open(path, os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
other = subprocess.run([sys.executable, "-c", f"import fcntl, os; fcntl.flock(os.open({path!r}, os.O_RDONLY), "
                        "fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')"], capture_output=True, text=True)
found["flock"] = other.stdout.strip() or other.stderr.strip()[-60:]
fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
found["lockf"] = "no-op"
try:
    fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)  # F_SETLEASE
    found["lease"] = "taken"
except OSError as exc:
    found["lease"] = errno.errorcode[exc.errno]
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
found["fadvise"] = "no-op"
try:
    os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)
    found["nowait"] = "read"
except OSError as exc:
    found["nowait"] = errno.errorcode[exc.errno]
libc = ctypes.CDLL(None, use_errno=True)
found["inotify"] = "made" if libc.inotify_init1(0) >= 0 else errno.errorcode[ctypes.get_errno()]
found["fanotify"] = "made" if libc.fanotify_init(0, 0) >= 0 else errno.errorcode[ctypes.get_errno()]
page = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
page.madvise(21)  # MADV_PAGEOUT
found["madvise"] = "no-op"
print("FOUND", found)
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_lock_watch_or_page_cache_state_of_a_shared_file_carries_a_bit(make_env, two_tasks, sandbox):
    env = make_env(two_tasks[0], bash=True, sandbox=sandbox)
    env.reset()
    venv_file = env.workspace.venv / "pyvenv.cfg"
    out = run_python(env, SHARED_FILE_PROBE)
    found = eval(out.split("FOUND ", 1)[1].splitlines()[0])  # a dict literal the probe printed
    assert found == {"flock": "free", "lockf": "no-op", "lease": "EPERM", "fadvise": "no-op",
                     "nowait": errno.errorcode[errno.EOPNOTSUPP],
                     "inotify": "ENOSYS", "fanotify": "ENOSYS", "madvise": "no-op"}, out
    with open(venv_file, "rb") as read:  # still in the page cache: the program's DONTNEED and PAGEOUT did nothing
        assert os.preadv(read.fileno(), [bytearray(16)], 0, os.RWF_NOWAIT) > 0


def test_how_a_hidden_test_did_not_pass_is_not_told(make_env, task_dir):
    """Skipped, xfailed, failed or not run: code under test chooses which, so the agent sees only "not passed"
    (as many bits as the score carries), and no note of the scored run's outcomes."""
    skipping = "import os\nimport pytest\n\nif os.path.exists('test_hidden.py'):\n    pytest.skip('x', allow_module_level=True)\n"
    files = {**CALC, "test_hidden.py": "from calc import add\n\n\ndef test_hidden():\n    assert add(1, 1) == 2\n"}
    env = make_env(task_dir(files, HIDDEN_TOML, CALC_PATCH, name="skips"), sandbox=None)
    env.reset()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 1, "end": 0, "new_code": skipping}})
    reward, observation, _ = evaluate(env)
    assert "hidden tests (outcomes only): 1 not passed" in observation, observation
    assert "skipped" not in observation.split("\n", 1)[0] and "did not run" not in observation, observation


@needs_bwrap
def test_under_bwrap_the_machines_counters_move_for_no_program(make_env, two_tasks):
    """Looking up names that do not exist moves the machine's count of negative dentries, which any program
    could read in /proc: under bwrap every program reads a frozen copy (and of /sys only the CPU folders)."""
    sender, receiver = (make_env(task, bash=True, sandbox="bwrap") for task in two_tasks)
    sender.reset()
    receiver.reset()
    read = "cut -f5 /proc/sys/fs/dentry-state; grep MemFree /proc/meminfo; ls /sys"
    before = bash(receiver, read)
    bash(sender, "python -c \"import os\nfor i in range(30000):\n    os.path.exists('/usr/lib/no-such-%d' % i)\"")
    assert bash(receiver, read) == before
    assert before.split()[-2:] == ["devices", "fs"], before


TIMER_SLACK = r"""
import ctypes, threading, time
ctypes.CDLL(None).prctl(29, 123456789, 0, 0, 0)  # PR_SET_TIMERSLACK: a width another program could read
threading.Thread(target=time.sleep, args=(3,)).start()
time.sleep(0.5)
"""


@needs_bwrap
def test_under_bwrap_no_file_of_the_machine_is_live_in_proc(make_env, two_tasks):
    """Every file of /proc's top level that is the machine's is a frozen copy or empty, every such folder empty:
    a program's timer slack (shown in /proc/timer_list, to a program run by root) reaches no other program."""
    sender, receiver = (make_env(task, bash=True, sandbox="bwrap") for task in two_tasks)
    sender.reset()
    receiver.reset()
    write(sender, "slack.py", TIMER_SLACK)
    read = ("wc -c < /proc/timer_list; wc -c < /proc/locks; ls /proc/irq /proc/driver | wc -l; "
            "head -c 40 /proc/version | wc -c")
    before = bash(receiver, read)
    bash(sender, "python slack.py & sleep 1; cat /proc/timer_list | wc -c")
    assert bash(receiver, read) == before
    assert before.split()[:3] == ["0", "0", "3"], before  # `ls` of two empty folders: their two headers, a line
    assert before.split()[3] == "40", before  # what describes the machine is there, as a copy


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_program_writes_its_own_memory_or_any_file_of_proc(make_env, two_tasks, sandbox):
    """bwrap's /proc is read-only (Landlock grants no write there): `/proc/self/mem`, however it is opened,
    cannot rewrite the interpreter's memory (a test's bytecode, say), and pty and AIO counts move for nobody."""
    env = make_env(two_tasks[0], bash=True, sandbox=sandbox)
    env.reset()
    probe = ("python -c \"import os\nfor path in ('/proc/self/mem', '/proc/self/oom_score_adj', '/proc/self/comm'):\n"
             "    try:\n        os.close(os.open(path, os.O_WRONLY)); print('WROTE', path)\n"
             "    except OSError as exc:\n        print('REFUSED', path, exc.errno)\"")
    observation = bash(env, probe)
    assert "WROTE" not in observation and observation.count("REFUSED") == 3, observation
    if sandbox == "bwrap":
        read = "cat /proc/sys/kernel/pty/nr /proc/sys/fs/aio-nr 2>&1; ls /proc/sys/kernel | wc -l"
        before = bash(env, read)
        held = bash(env, "python -c \"import pty, time\nfds = [pty.openpty() for _ in range(20)]\n"
                         "print(open('/proc/sys/kernel/pty/nr').read())\"")
        assert bash(env, read) == before and "No such file" in before, (before, held)


@pytest.mark.parametrize("sandbox", [None, *SANDBOXES])
def test_a_folders_mode_and_times_do_not_outlive_the_reset(make_env, task_dir, sandbox):
    """git tracks neither: a program that sets a folder's mode bits (setgid, sticky, 0311) or times would
    pass them to the next episode of the env, and a folder its owner may not read stopped the next reset."""
    task = task_dir(dict(CALC, **{"pkg/mod.py": "X = 1\n"}), CALC_TOML, CALC_PATCH, name="calc-folders")
    env = make_env(task, bash=True, sandbox=sandbox)
    env.reset()
    bash(env, "chmod 3751 pkg; touch -d @1000000000 pkg; chmod 311 .")
    env.reset()
    again = bash(env, "stat -c '%n %a %Y' . pkg")
    assert again.split()[1::3] == ["755", "755"], again
    assert len({line.split()[2] for line in again.splitlines()}) == 1 and "1000000000" not in again, again


# Puts the hidden file's text in a child's command line, in the scored run only (where the file is).
BEACON = """\
import os, subprocess

if os.path.exists("test_hidden.py"):
    subprocess.Popen(["/bin/sh", "-c", "sleep 3", "BEACON", open("test_hidden.py").read().encode().hex()])
"""

# In a live pdb program: a thread that looks for that command line among every process's.
SAMPLER = """\
import os, sys, threading, time, types

found = sys.modules.setdefault("sampled", types.ModuleType("sampled"))
found.text = "nothing"


def _sample():
    while True:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
            except OSError:
                continue
            if b"BEACON" in argv:
                found.text = bytes.fromhex(argv[argv.index(b"BEACON") + 1].decode()).decode()
                return
        time.sleep(0.005)


threading.Thread(target=_sample, daemon=True).start()
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_program_of_the_episode_runs_beside_a_scored_run(make_env, task_dir, sandbox):
    """Under Landlock every process of the machine is in /proc: a pdb program that ran on beside the scored run
    read a child's command line there, a whole hidden file (an outside round's attack; under bwrap, through free
    blocks). The episode's programs stop first."""
    files = {**CALC, "test_hidden.py": "SECRET = 'the hidden text'\n\n\ndef test_hidden():\n    assert SECRET\n"}
    env = make_env(task_dir(files, HIDDEN_TOML, CALC_PATCH, name="hidden"), sandbox=sandbox,
                   terminate_on_success=False)
    env.reset()
    env.step({"name": "edit", "arguments": {"path": "sampler.py", "start": 1, "end": 0, "new_code": SAMPLER}})
    old = (env.workspace.root / "calc.py").read_text()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "old": old, "new": BEACON + "\n\n" + old}})
    observation = env.step({"name": "pdb", "arguments": {
        "command": "p __import__('runpy').run_path('sampler.py') and __import__('sys').modules['sampled'].text"}})[0]
    assert "'nothing'" in observation, observation
    observation = env.step({"name": "eval"})[0]
    assert "were stopped before the scored run" in observation, observation
    time.sleep(0.5)
    observation = env.step({"name": "pdb", "arguments": {
        "command": "p getattr(__import__('sys').modules.get('sampled'), 'text', 'a new session')"}})[0]
    assert "hidden text" not in observation and "'a new session'" in observation, observation


# The fix imports a venv module nothing else does.
GOLD_WITH_IMPORT = """\
--- a/calc.py
+++ b/calc.py
@@ -1,3 +1,6 @@
+import pygments.lexers.lisp
+
+
 def add(a, b):
-    return a - b
+    return a + b
 
"""  # noqa: W293 (a diff's blank context line holds a space)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_nothing_of_the_gold_patch_shows_in_what_programs_start_from(make_env, task_dir, sandbox):
    """Warm interpreters import ahead the venv modules the task's tests load, learned once a task: learned from
    the gold-patched run that measures the counted tests, they showed in a pdb session's `sys.modules` which
    modules the fix imports (an outside round's finding). They are learned from the task's base."""
    task = task_dir(CALC, CALC_TOML, GOLD_WITH_IMPORT, name="hint")
    env = make_env(task, sandbox=sandbox)
    env.reset()
    env.step({"name": "eval"})  # measures the counted tests, on the gold-patched tree
    env.close()
    env = make_env(task, sandbox=sandbox)  # a new episode of the task: what its programs start from is learned
    env.reset()
    observation = env.step({"name": "pdb", "arguments": {"command": "p sorted(m for m in __import__('sys').modules "
                                                                     "if m.startswith('pygments.lexers.l'))"}})[0]
    assert "[]" in observation, observation
