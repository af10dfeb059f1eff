"""What a program sees inside the sandbox: bwrap's mounts, and the Landlock ruleset that mirrors them.

A program sees the system directories and its interpreter read-only (with that interpreter's own
site-packages hidden; of /sys only the CPU folders, the rest counts for the whole machine what programs
move), the task's venv and minidebug's driver scripts read-only, the
folders it works in writable, and (under bwrap) a private `/tmp` and `/dev/shm` (the only other places it
can write: the sandbox's root and `/dev` are read-only), no network and no capabilities.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WorkspaceError

if TYPE_CHECKING:
    from .landlock import Ruleset

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
CPU_DIR = "/sys/devices/system/cpu"  # all of /sys a program sees: what `os.cpu_count()` and BLAS read
BWRAP_USER = ("--unshare-user", "--disable-userns", "--cap-drop", "ALL")
"""Every program runs in a user namespace of its own with no capabilities, root or not (bwrap run by root
would otherwise hand them on: `open_by_handle_at` alone reaches any file of a mounted file system), and
can make no further user namespace."""


def landlock_ruleset(*, readable: list[Path], writable: list[Path], venv: Path) -> Ruleset:
    """The Landlock twin of `bwrap_command`'s mounts: what a program may read and write."""
    from .landlock import Ruleset

    needed, hidden = interpreter_dirs(venv)
    system = [Path(d) for d in SYSTEM_DIRS] + [Path("/proc")] + [Path(CPU_DIR)] * os.path.isdir(CPU_DIR)
    read = system + [Path(d) for d in needed] + [venv, *readable]
    return Ruleset(read=read, write=writable, hide=[Path(d) for d in hidden], devices=[Path("/dev")])


@cache
def proc_writable() -> tuple[str, ...]:
    """The entries of /proc, other than the processes' own folders, that hold a file with a write bit: bwrap's
    /proc covers only a few of them, and run by root, a program in bwrap is uid 0, which the kernel lets
    write most of them (/proc/sys: the host's sysctls, `kernel.core_pattern` among them). They are bound
    read-only over the sandbox's /proc."""
    found = []
    for entry in sorted(os.listdir("/proc")):
        path = os.path.join("/proc", entry)
        if entry.isdigit() or os.path.islink(path):
            continue
        if _has_writable_file(path):
            found.append(path)
    return tuple(found)


def _has_writable_file(path: str) -> bool:
    if not os.path.isdir(path):
        return os.path.isfile(path) and bool(os.lstat(path).st_mode & 0o222)
    for folder, folders, files in os.walk(path):
        folders[:] = [name for name in folders if not os.path.islink(os.path.join(folder, name))]
        for name in files:
            try:
                if os.lstat(os.path.join(folder, name)).st_mode & 0o222:
                    return True
            except OSError:
                continue
    return False


@cache
def interpreter_dirs(venv: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(folders the venv's base interpreter needs, that interpreter's own site-packages folders to hide)."""
    home = ""
    for line in (venv / "pyvenv.cfg").read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home":
            home = value.strip()
    base = shutil.which("python3", path=home) or str(venv / "bin" / "python")
    out = subprocess.run([base, "-I", "-c", "import site, sys; print(sys.base_prefix); "
                          "print('\\n'.join(site.getsitepackages()))"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise WorkspaceError(f"cannot ask {base} for its folders: {out.stderr.strip()}")
    prefix, *site_dirs = out.stdout.split("\n")
    needed = [str(Path(prefix).resolve())]
    if home:
        needed.append(str(Path(home).resolve()))
    return tuple(dict.fromkeys(needed)), tuple(d for d in site_dirs if d and os.path.isdir(d))


def bwrap_command(argv: list[str], *, readable: list[Path], writable: list[Path], cwd: Path,
                  venv: Path, devices: Sequence[str] = (), counters: Sequence[str] = (),
                  init: bool = False) -> list[str]:
    """argv run inside bwrap: system folders, the interpreter, `readable` read-only; `writable` writable;
    `devices` the arguments that bind device nodes of the sandbox's own over `/dev`'s (see devices.py),
    `counters` those that bind frozen copies over /proc's counters of the machine (see counters.py). With
    `init`, argv is the PID namespace's first process (`--as-pid-1`), for a program started without the
    seccomp filter that installs it in each process it forks (a warm interpreter): else bwrap's own init,
    unfiltered then, would share its runs' namespace, and they could trace it."""
    command = [shutil.which("bwrap") or "bwrap", *BWRAP_USER, "--unshare-net", "--unshare-pid", "--unshare-ipc",
               "--unshare-uts", "--die-with-parent"]
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            command += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            command += ["--ro-bind", folder, folder]
    command += ["--proc", "/proc"]
    for entry in proc_writable():  # what uid 0 could write there: the host's sysctls above all
        command += ["--ro-bind", entry, entry]
    command += [*counters, "--remount-ro", "/proc"]  # no write to /proc: `/proc/self/mem` above all
    command += ["--dev", "/dev", *devices, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
                "--tmpfs", "/tmp", "--tmpfs", "/sys"]
    if os.path.isdir(CPU_DIR):
        command += ["--ro-bind", CPU_DIR, CPU_DIR]
    command += ["--dir", "/sys/fs/cgroup", "--remount-ro", "/sys"]  # a cgroup's counters outlive a program
    needed, hidden = interpreter_dirs(venv)
    for folder in needed:
        if not any(folder == d or folder.startswith(d + "/") for d in SYSTEM_DIRS):
            command += ["--ro-bind", folder, folder]
    for folder in hidden:
        command += ["--tmpfs", folder, "--remount-ro", folder]
    for path in [venv, *readable]:
        command += ["--ro-bind", str(path), str(path)]
    for path in writable:
        command += ["--bind", str(path), str(path)]
    return command + ["--remount-ro", "/", "--chdir", str(cwd), *(["--as-pid-1"] if init else []), "--", *argv]
