"""What a warm eval interpreter (minidebug_eval.py --warm) ends or checks after each run it served, so that
nothing of one run reaches the next: under bwrap, the sandbox's other processes and what the run left on the
sandbox's own file systems; everywhere, the run's orphans, which it reaps."""

import os


def in_own_pid_namespace(host_namespace):
    """Whether this process runs in a PID namespace other than the host's (`host_namespace`, the host's
    /proc/self/ns/pid link, sent only under bwrap)."""
    try:
        return bool(host_namespace) and os.readlink("/proc/self/ns/pid") != host_namespace
    except OSError:
        return False


class SandboxState:
    """What a run could leave in the bwrap sandbox the warm interpreter serves from, which outlives each run:
    processes (its PID namespace) and files on the sandbox's own file systems (its tmpfs mounts; of those
    only /tmp and /dev/shm are writable, the root, /dev and the hidden folders are read-only). `restore()`
    after each run kills every other process of the namespace, removes what the run added under /tmp and
    /dev/shm, sets each folder's mode and times back, and checks that those file systems hold exactly what
    they held when the interpreter became ready, and that the interpreter and the sandbox's init still have
    the settings a run's uid 0 could write through /proc (`oom_score_adj`, `coredump_filter`, `autogroup`;
    the seccomp filter lets no program change another's limits, priority or scheduling). (System V IPC,
    message queues, keys and extended attributes are refused to every program by the seccomp filter, so
    nothing else a run could leave stays there.)"""

    EMPTIED = ("/tmp/", "/dev/shm/")
    DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
    MAX_ENTRIES = 10000
    PROCESS_FILES = ("oom_score_adj", "oom_adj", "coredump_filter", "autogroup")

    def __init__(self):
        with open("/proc/self/mounts") as mounts:
            self.mounts = sorted({fields[1] for fields in (line.split() for line in mounts) if fields[2] == "tmpfs"})
        self._entries()  # a folder's access time moves when it is first listed: the baseline is the second look
        self.baseline = self._entries()
        self.settings = self._settings()

    def restore(self):
        """Whether the sandbox is as it was (else the interpreter must not serve another run)."""
        import stat

        if self.baseline is None or not self._end_other_processes() or self._settings() != self.settings:
            return False
        entries = self._entries()
        if entries is None:
            return False
        added = sorted(set(entries) - set(self.baseline), key=lambda path: path.count("/"), reverse=True)
        try:
            for path in added:
                if not path.startswith(self.EMPTIED):
                    return False
                os.rmdir(path) if entries[path][0] == stat.S_IFDIR else os.unlink(path)
            for path, (kind, mode, *times) in self._folders(self.baseline):
                now = entries.get(path)
                if now is not None and now[0] == kind and now != self.baseline[path]:
                    os.chmod(path, mode, follow_symlinks=False)
                    os.utime(path, ns=tuple(times), follow_symlinks=False)
        except OSError:
            return False
        return self._entries() == self.baseline

    def _settings(self):
        """This process's and the namespace init's settings that /proc lets their owner write, and this
        process's limits and priority."""
        import resource

        found = {}
        for pid in ("self", "1"):
            for name in self.PROCESS_FILES:
                try:
                    with open(f"/proc/{pid}/{name}") as file:
                        found[pid, name] = file.read()
                except OSError:
                    found[pid, name] = None
        for name in dir(resource):
            if name.startswith("RLIMIT_"):
                found[name] = resource.getrlimit(getattr(resource, name))
        found["priority"] = os.getpriority(os.PRIO_PROCESS, 0)
        return found

    def _end_other_processes(self):
        """SIGKILL every process of the namespace but this one and its init (pid 1, which the kernel spares),
        reap ours, and wait (up to a second) until the others are gone."""
        import signal
        import time

        deadline = time.monotonic() + 1.0
        me = os.getpid()
        while True:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
            reap()
            if not [name for name in os.listdir("/proc") if name.isdigit() and int(name) not in (1, me)]:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)

    def _entries(self):
        """Every entry on the sandbox's tmpfs mounts, the mounts' own folders included: its kind and mode,
        and a folder's access and modification times, or another entry's status change time (which no program can
        set back) and link target; None if more than MAX_ENTRIES or one cannot be read."""
        import stat

        found = {}
        for mount in self.mounts:
            try:
                device = os.lstat(mount).st_dev
                stack = [mount]
                found[mount] = self._entry(mount, os.lstat(mount))
                while stack:
                    for entry in os.scandir(stack.pop()):
                        info = entry.stat(follow_symlinks=False)
                        if info.st_dev != device:
                            continue  # another mount: a tmpfs is walked on its own, the others are read-only
                        found[entry.path] = self._entry(entry.path, info)
                        if stat.S_ISDIR(info.st_mode):
                            stack.append(entry.path)
                        if len(found) > self.MAX_ENTRIES:
                            return None
            except OSError:
                return None
        for device in self.DEVICES:  # their mode and times, which a run as root could change
            try:
                found[device] = self._entry(device, os.lstat(device))
            except OSError:
                found[device] = None
        return found

    @staticmethod
    def _folders(entries):
        import stat

        return [(path, entry) for path, entry in entries.items() if entry is not None and entry[0] == stat.S_IFDIR]

    @staticmethod
    def _entry(path, info):
        import stat

        kind = stat.S_IFMT(info.st_mode)
        if kind == stat.S_IFDIR:
            return kind, stat.S_IMODE(info.st_mode), info.st_atime_ns, info.st_mtime_ns
        return kind, stat.S_IMODE(info.st_mode), info.st_ctime_ns, os.readlink(path) if kind == stat.S_IFLNK else ""


def reap():
    """Collect every child of this process that has ended."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
