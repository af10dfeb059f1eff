"""Which sandbox an episode runs in: the one place a sandbox name ("auto", "bwrap", "landlock", None) is
resolved.

bubblewrap (`bwrap`) gives a program its own namespaces: only the folders it needs mounted, a private `/tmp`
and no network (see mounts.py). Where user namespaces are not available (some containers, Ubuntu's AppArmor
restriction) a Landlock ruleset gives the file-system part: the same folders readable, the same writable,
nothing else, and (ABI 4+) no TCP. It cannot hide a folder behind a mount, so there is no private /tmp;
TMPDIR is the episode's own.

`sandbox="auto"` (the default) uses bwrap, else Landlock, else runs without a sandbox after a warning that
names the guarantees that are lost. `sandbox="bwrap"` or `"landlock"` never falls back: it raises instead.
"""

from __future__ import annotations

import shutil
import subprocess
import warnings
from functools import lru_cache
from pathlib import Path

from ..errors import WorkspaceError

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
    from .mounts import BWRAP_USER

    exe = shutil.which("bwrap")
    if exe is None:
        return False
    try:
        probe = subprocess.run([exe, *BWRAP_USER, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                "--unshare-net", "--unshare-pid", "--die-with-parent", "true"],
                               capture_output=True, timeout=20)
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


COMMAND_LINE_NAMES = ("auto", "bwrap", "landlock", "none")
"""The sandbox names as command lines take them: "none" stands for None."""


def from_command_line(name: str) -> str | None:
    """The sandbox choice a command line's `--sandbox NAME` stands for."""
    return None if name == "none" else name


def require(choice: str | None) -> None:
    """Fail now if an explicit choice ("bwrap" or "landlock") cannot run here; "auto" and None always can.

    Raises:
        WorkspaceError: the sandbox asked for cannot run here.
    """
    if choice in ("bwrap", "landlock"):
        resolve(choice)


def resolve(choice: str | None) -> str | None:
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
