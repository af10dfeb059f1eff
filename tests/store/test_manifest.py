"""A guarded tree whose times alone changed is still intact; any change of what it holds is not. Every guard of a
process watches on one inotify instance."""

import os
from pathlib import Path

import pytest

from minidebug.sandbox.choose import landlock_works
from minidebug.store import manifest
from minidebug.store.treeguard import FINGERPRINT_SUFFIX, TreeGuard, record
from tests.conftest import CALC, CALC_PATCH, CALC_TOML


@pytest.fixture
def tree(tmp_path):
    top = tmp_path / "venv"
    (top / "lib").mkdir(parents=True)
    (top / "lib" / "plugin.py").write_text("VALUE = 1\n")
    (top / "lib" / "data.bin").write_bytes(bytes(range(256)) * 4096)
    (top / "python").symlink_to("/usr/bin/python3")
    record(top)
    return top


def checks(top):
    """intact() of a guard that watched the tree before the change (inotify) and of a new one (a new process)."""
    watching = TreeGuard(top)
    assert watching.intact()

    def after_change():
        return watching.intact(), TreeGuard(top).intact()

    return after_change


def test_times_set_to_now_or_back_leave_the_tree_intact(tree):
    after = checks(tree)
    os.utime(tree / "lib" / "plugin.py")  # what `touch` does: times now, the change time moves too
    os.utime(tree / "lib" / "data.bin", ns=(0, 0))
    os.utime(tree / "lib", None)
    assert after() == (True, True)
    # the record follows: the next process need not read the files again
    recorded = tree.with_name(tree.name + FINGERPRINT_SUFFIX).read_text()
    record(tree)  # as the tree is now
    assert tree.with_name(tree.name + FINGERPRINT_SUFFIX).read_text() == recorded


def test_times_set_past_what_inotify_queues_leave_the_tree_intact(tree):
    """A program that sets times in a loop overflows the kernel's event queue: with the events lost, the
    content is compared."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    plugin, data = tree / "lib" / "plugin.py", tree / "lib" / "data.bin"

    def storm():  # two files in turn: the kernel folds an event into the same one queued just before it
        for _ in range(limit // 2 + 100):
            os.utime(plugin)
            os.utime(data)

    probe = TreeGuard(tree)
    assert probe.intact()
    storm()
    assert probe.watch.seen() == "lost"  # the storm does overflow the queue

    after = checks(tree)
    storm()
    assert after() == (True, True)
    plugin.write_text("VALUE = 3\n")
    storm()
    assert after() == (False, False)


@pytest.mark.parametrize("change", ["same size, times put back", "mode", "added", "removed", "link"])
def test_any_other_change_is_one(tree, change):
    after = checks(tree)
    plugin = tree / "lib" / "plugin.py"
    if change == "same size, times put back":
        before = plugin.stat()
        plugin.write_text("VALUE = 2\n")
        os.utime(plugin, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif change == "mode":
        plugin.chmod(0o777)
    elif change == "added":
        (tree / "lib" / "forge.pth").write_text("import os\n")
    elif change == "removed":
        plugin.unlink()
    else:
        (tree / "python").unlink()
        (tree / "python").symlink_to("/bin/sh")
    assert after() == (False, False)


def test_a_tree_recorded_without_a_manifest_gets_one_while_it_matches_its_fingerprint(tree):
    tree.with_name(tree.name + manifest.SUFFIX).unlink()  # as a cache made before manifests were has it
    os.utime(tree / "lib" / "plugin.py", ns=(10**9, 10**9))
    assert not TreeGuard(tree).intact()  # no manifest to tell times from content: a change
    tree.with_name(tree.name + manifest.SUFFIX).unlink(missing_ok=True)
    record_fingerprint_only(tree)
    after = checks(tree)  # it matches its fingerprint: the manifest is written then
    os.utime(tree / "lib" / "plugin.py")
    assert after() == (True, True)


def record_fingerprint_only(top):
    record(top)
    top.with_name(top.name + manifest.SUFFIX).unlink()


def test_a_write_undone_again_is_a_change_where_it_was_seen(tree):
    """Written and put back, times and all: what is there is as built, but a program may have imported what
    was there meanwhile (a warm interpreter, say), so a guard that saw the write counts it. A guard that saw
    nothing (a new process) compares the content, which is as built."""
    plugin = tree / "lib" / "plugin.py"
    before = plugin.stat()
    after = checks(tree)
    plugin.write_text("VALUE = 2\n")
    plugin.write_text("VALUE = 1\n")
    os.utime(plugin, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert after() == (False, True)


def test_a_file_touched_without_end_is_still_as_built(tree):
    """Times that keep moving while the content is read (a program setting them in a loop) do not make the
    content count as changed."""
    for path, _ in manifest.stat_entries(tree, (), 512, 10_000):
        os.utime(path, ns=(10**9, 10**9), follow_symlinks=False)
    entries = manifest.stat_entries(tree, (), 512, 10_000)  # times moved since the manifest: content is read
    for path, _ in entries:
        os.utime(path, follow_symlinks=False)  # and they move again before it is
    assert manifest.as_built(tree, entries, read_content=True) is not None
    (tree / "lib" / "plugin.py").write_text("VALUE = 9\n")
    assert manifest.as_built(tree, manifest.stat_entries(tree, (), 512, 10_000), read_content=True) is None


def _inotify_instances() -> int:
    return sum(os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify" for fd in os.listdir("/proc/self/fd")
               if os.path.exists(f"/proc/self/fd/{fd}"))


def test_every_guard_of_a_process_shares_one_inotify_instance(tmp_path):
    """A user may hold 128 instances in all: one per tree would run out in a process that uses many tasks."""
    trees = []
    for number in range(150):
        top = tmp_path / f"tree{number}"
        (top / "sub").mkdir(parents=True)
        (top / "sub" / "module.py").write_text("x = 1\n")
        record(top)
        trees.append(top)
    guards = [TreeGuard(top) for top in trees]
    assert all(guard.intact() for guard in guards)
    assert _inotify_instances() == 1
    twin = TreeGuard(trees[7])  # two guards of one tree: each sees what happens to it
    assert twin.intact()
    (trees[7] / "sub" / "module.py").write_text("x = 2\n")
    assert [guard.intact() for guard in guards[6:9]] == [True, False, True] and not twin.intact()


def test_a_forked_child_does_not_take_its_parents_events(tree):
    guard = TreeGuard(tree)
    assert guard.intact()
    child = os.fork()
    if child == 0:  # the child checks (with the inherited guard, then a new one) and writes
        code = 0 if guard.intact() and TreeGuard(tree).intact() else 1
        (tree / "lib" / "plugin.py").write_text("VALUE = 5\n")
        code = code if not guard.intact() else 2
        os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not guard.intact()  # the parent saw the child's write: nothing of its queue was read by the child


@pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")
def test_under_landlock_touching_the_shared_venv_is_refused_and_rebuilds_nothing(make_env, task_dir):
    """Landlock has no rule for file times; the seccomp filter refuses setting them, so `touch` cannot mark
    the venv that other episodes share. The attempt makes the venv neither rebuilt nor counted as tampered."""
    calc = task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc")
    env = make_env(calc, bash=True, sandbox="landlock")
    env.reset()
    venv = env.workspace.venv
    site = next(venv.glob("lib/python*/site-packages"))
    built = (site / "pluggy" / "__init__.py").stat()
    observation = env.step({"name": "bash", "arguments": {
        "command": f"touch {site}/pluggy/__init__.py {site} && echo touched; echo x >> {site}/pluggy/__init__.py"}})[0]
    assert "touched" not in observation and "Operation not permitted" in observation, observation
    assert (site / "pluggy" / "__init__.py").stat().st_mtime_ns == built.st_mtime_ns
    observation, reward, _, _, info = env.step({"name": "eval"})
    assert reward == 0.5 and "tampered" not in info and "rebuilt" not in observation, observation
    assert (site / "pluggy" / "__init__.py").stat().st_ino == built.st_ino  # the same venv, not a new one
