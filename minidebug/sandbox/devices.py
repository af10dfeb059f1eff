"""Device nodes of a sandbox's own, for bwrap run by root.

bwrap's `/dev` binds the host's own device nodes (null, zero, full, random, urandom, tty). Run by root, a
program is uid 0 in its namespace, and uid 0 owns those nodes: it could change their mode, owner or times on
the host (`chmod 000 /dev/null` breaks the machine). So a confinement run by root makes nodes of its own
(mknod, in a folder of its own that no program sees) and bwrap binds them over its `/dev`: what a program
changes is theirs, and each is set back (mode 0666, owner root, no extended attribute, the times it was
made with) before every program the confinement starts.
"""

from __future__ import annotations

import os
import stat

from .reaper import owned_temp_dir, remove_owned_dir

NODES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8), "urandom": (1, 9), "tty": (5, 0)}
PREFIX = "minidebug-dev-"


class PrivateDevices:
    """The nodes, in a new temp folder (with the owner file `minidebug gc` looks for).

    Raises:
        OSError: the nodes cannot be made (no CAP_MKNOD), or the temp folder's file system does not allow
            device nodes (mounted `nodev`).
    """

    def __init__(self):
        self.dir = owned_temp_dir(PREFIX)
        try:
            if os.statvfs(self.dir).f_flag & os.ST_NODEV:
                raise OSError(f"{self.dir}: its file system does not allow device nodes (nodev)")
            for name, (major, minor) in NODES.items():
                os.mknod(self.dir / name, stat.S_IFCHR | 0o666, os.makedev(major, minor))
            self._times = os.lstat(self.dir / "null").st_mtime_ns
        except BaseException:
            self.close()
            raise

    def bwrap_args(self) -> list[str]:
        """bwrap's arguments that bind the nodes over `/dev`'s, each set back first."""
        args = []
        for name in NODES:
            node = self.dir / name
            os.chown(node, 0, 0)  # the folder is this process's alone: no program can put a link here
            os.chmod(node, 0o666)
            for attribute in os.listxattr(node):  # an ACL, say (no program can set one: see seccomp.py)
                os.removexattr(node, attribute)
            os.utime(node, ns=(self._times, self._times))
            args += ["--dev-bind", str(node), f"/dev/{name}"]
        return args

    def close(self) -> None:
        """Remove the folder and its nodes (the owner file last). Idempotent."""
        remove_owned_dir(self.dir)
