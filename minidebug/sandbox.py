"""The sandbox every program of an episode runs in: it sees only what it needs.

With bubblewrap (`bwrap`), a program sees the system directories and its interpreter read-only (with that
interpreter's own site-packages hidden), the task's venv and minidebug's driver scripts read-only, the
folders it works in writable, a private `/tmp`, and no network. Nothing of the host's home, the cache
beyond that venv, the task folders or minidebug's own checkout is there to read.

Where user namespaces are not available (some containers, Ubuntu's AppArmor restriction) a Landlock
ruleset gives the file-system part: the same folders readable, the same writable, nothing else, and (ABI 4+)
no TCP. It cannot hide a folder behind a mount, so there is no private /tmp; TMPDIR is the episode's own.

`sandbox="auto"` (the default) uses bwrap, else Landlock, else runs without a sandbox after a warning that
names the guarantees that are lost. `sandbox="bwrap"` or `"landlock"` never falls back: it raises instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Optional

from .errors import WorkspaceError

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
NO_SANDBOX_WARNING = (
    "minidebug: no sandbox (neither bubblewrap nor Landlock works here): the agent's programs "
    "can read any file the host user can (including solution.patch and hidden tests) and reach the network; "
    "what still holds is path confinement of the file tools, the environment allowlist, resource limits, "
    "process cleanup, task-owned scoring in a separate eval tree, and venv tamper detection. "
    "Install the bubblewrap package, or pass sandbox=None to silence this warning."
)


@lru_cache(maxsize=1)
def bwrap_works() -> bool:
    """True if bwrap is on PATH and can make the namespaces we need on this machine."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    try:
        probe = subprocess.run([exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net",
                                "--unshare-pid", "--die-with-parent", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


@lru_cache(maxsize=1)
def landlock_works() -> bool:
    """True if a Landlock ruleset can be made and applied to a child here."""
    from .landlock import Ruleset, abi

    if abi() < 1:
        return False
    try:
        ruleset = Ruleset(read=[Path("/usr"), Path("/lib"), Path("/lib64"), Path("/bin")], write=[])
    except OSError:
        return False
    try:
        probe = subprocess.run(["/bin/true"], preexec_fn=ruleset.restrict, capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        ruleset.close()
    return probe.returncode == 0


def resolve(choice: Optional[str]) -> Optional[str]:
    """The sandbox to use: "bwrap", "landlock" or None. "auto" takes the first that works, else None with
    a warning; an explicit "bwrap" or "landlock" never falls back.

    Raises:
        WorkspaceError: the sandbox asked for cannot run here.
    """
    if choice is None:
        return None
    if choice in ("auto", "bwrap") and bwrap_works():
        return "bwrap"
    if choice in ("auto", "landlock") and landlock_works():
        return "landlock"
    if choice == "bwrap":
        raise WorkspaceError("sandbox='bwrap' was asked for, but bwrap is not installed or cannot create "
                             "namespaces here (install the bubblewrap package, or use sandbox='auto')")
    if choice == "landlock":
        raise WorkspaceError("sandbox='landlock' was asked for, but this kernel has no usable Landlock "
                             "(Linux 5.13 or later with Landlock enabled); use sandbox='auto'")
    warnings.warn(NO_SANDBOX_WARNING, RuntimeWarning, stacklevel=3)
    return None


def landlock_ruleset(*, readable: list[Path], writable: list[Path], venv: Path):
    """The Landlock twin of `bwrap_command`'s mounts: what a program may read and write."""
    from .landlock import Ruleset

    needed, hidden = interpreter_dirs(venv)
    read = [Path(d) for d in SYSTEM_DIRS + ("/proc",)] + [Path(d) for d in needed] + [venv, *readable]
    return Ruleset(read=read, write=writable, hide=[Path(d) for d in hidden], devices=[Path("/dev")])


@lru_cache(maxsize=None)
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
                  venv: Path) -> list[str]:
    """argv run inside bwrap: system folders, the interpreter, `readable` read-only; `writable` writable."""
    command = [shutil.which("bwrap") or "bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc",
               "--unshare-uts", "--die-with-parent"]
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            command += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            command += ["--ro-bind", folder, folder]
    command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    needed, hidden = interpreter_dirs(venv)
    for folder in needed:
        if not any(folder == d or folder.startswith(d + "/") for d in SYSTEM_DIRS):
            command += ["--ro-bind", folder, folder]
    for folder in hidden:
        command += ["--tmpfs", folder]
    for path in [venv, *readable]:
        command += ["--ro-bind", str(path), str(path)]
    for path in writable:
        command += ["--bind", str(path), str(path)]
    return command + ["--chdir", str(cwd), "--", *argv]
