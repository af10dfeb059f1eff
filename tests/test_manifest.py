"""A guarded tree whose times alone changed is still intact; any change of what it holds is not."""

import os

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
    fingerprint = tree.with_name(tree.name + FINGERPRINT_SUFFIX).read_text()
    assert TreeGuard(tree).intact()  # the record follows: the next process need not read the files again
    assert tree.with_name(tree.name + FINGERPRINT_SUFFIX).read_text() == fingerprint


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


def test_a_tree_recorded_without_a_manifest_counts_any_change(tree):
    tree.with_name(tree.name + manifest.SUFFIX).unlink()
    after = checks(tree)
    os.utime(tree / "lib" / "plugin.py")
    assert after() == (False, False)


def test_a_manifest_records_only_what_was_read_whole(tree):
    """A file that changes while it is hashed is not taken as the tree's content."""
    entries = manifest.stat_entries(tree, (), 512, 10_000)
    plugin = str(tree / "lib" / "plugin.py")
    os.utime(plugin)  # after the stat: the file is no longer the one that was seen
    manifest.write(tree, entries)
    assert not TreeGuard(tree).intact()  # with a manifest read whole, a changed time alone is intact (above)


@pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")
def test_under_landlock_touching_the_shared_venv_rebuilds_nothing(make_env, task_dir):
    """Landlock has no rule for file times: a program can `touch` the venv it may only read. That alone must
    not make the venv be rebuilt (under every episode that uses it), nor count as tampering."""
    calc = task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc")
    env = make_env(calc, bash=True, sandbox="landlock")
    env.reset()
    venv = env.workspace.venv
    site = next(venv.glob("lib/python*/site-packages"))
    built = (site / "pluggy" / "__init__.py").stat().st_ino
    observation = env.step({"name": "bash", "arguments": {
        "command": f"touch {site}/pluggy/__init__.py {site} && echo touched; echo x >> {site}/pluggy/__init__.py"}})[0]
    assert "touched" in observation and "denied" in observation, observation
    observation, reward, _, _, info = env.step({"name": "eval"})
    assert reward == 0.5 and "tampered" not in info and "rebuilt" not in observation, observation
    assert (site / "pluggy" / "__init__.py").stat().st_ino == built  # the same venv, not a new one
