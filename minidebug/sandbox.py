"""The optional namespace sandbox: bubblewrap with the host read-only and no network.

Only the worktree's episode dir (worktree, HOME, TMPDIR) and the venv are writable; `--unshare-net`
leaves the program a loopback-less network namespace; `--die-with-parent` ends it with the host.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Optional

from .errors import WorkspaceError

CHOICES = (None, "bwrap", "auto")


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


def resolve(choice: Optional[str]) -> Optional[str]:
    """"auto" to "bwrap" where it works (else None); "bwrap" checked.

    Raises:
        WorkspaceError: bwrap was asked for but cannot run here.
    """
    if choice not in CHOICES:
        raise ValueError(f"unknown sandbox {choice!r}; choose None, 'bwrap' or 'auto'")
    if choice is None:
        return None
    if bwrap_works():
        return "bwrap"
    if choice == "bwrap":
        raise WorkspaceError("sandbox='bwrap' was asked for, but bwrap is not installed or cannot create "
                             "namespaces here (install the bubblewrap package, or use sandbox='auto')")
    return None


def bwrap_prefix(writable: list[Path], chdir: Path) -> list[str]:
    """The bwrap command line that runs a program with only `writable` writable."""
    argv = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-net", "--unshare-pid", "--die-with-parent"]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    return argv + ["--chdir", str(chdir), "--"]
