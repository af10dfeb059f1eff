"""Sandboxes with no way out: a confined program keeps no capability, makes no system call through a second
ABI, and (under Landlock) neither signals the host nor reaches its abstract sockets. Each test first shows
the attack working where nothing stops it, then fails it confined, as root and as an unprivileged user."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from minidebug.sandbox import landlock
from minidebug.sandbox.choose import bwrap_works, landlock_works
from minidebug.sandbox.confinement import Confinement
from minidebug.sandbox.mounts import BWRAP_USER, bwrap_command
from minidebug.sandbox.reaper import processes

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed or has no user namespaces")
needs_landlock = pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")
needs_scoping = pytest.mark.skipif(landlock.abi() < 6, reason="Landlock scoping needs ABI 6 (Linux 6.12)")
x86_64 = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the attack uses x86-64's other ABIs")
# As root, a second run as nobody: what holds must not depend on who runs minidebug.
USERS = ["self", pytest.param("nobody", marks=pytest.mark.skipif(os.getuid() != 0, reason="needs root to "
                                                                    "become nobody (as non-root, 'self' is it)"))]
NOBODY = 65534
PATH = {"PATH": "/usr/local/bin:/usr/bin:/bin"}

ATTACKS = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static long other_abi_setsid(const char *abi) {
    long ret;
#if defined(__x86_64__)
    if (strcmp(abi, "i386") == 0) {  /* the 32-bit entry: eax = 66 is setsid there */
        int r;
        __asm__ volatile ("int $0x80" : "=a"(r) : "a"(66) : "memory");
        return r;
    }
    __asm__ volatile ("syscall" : "=a"(ret) : "a"(0x40000000L | 112) : "rcx", "r11", "memory");  /* x32 */
#else
    ret = -ENOSYS;
#endif
    return ret;
}

int main(int argc, char **argv) {
    if (strcmp(argv[1], "handle") == 0) {          /* handle PATH: print PATH's file handle */
        struct file_handle *h = malloc(sizeof *h + MAX_HANDLE_SZ);
        int mount_id;
        h->handle_bytes = MAX_HANDLE_SZ;
        if (name_to_handle_at(AT_FDCWD, argv[2], h, &mount_id, 0) != 0) { perror("name_to_handle_at"); return 1; }
        printf("%d ", h->handle_type);
        for (unsigned i = 0; i < h->handle_bytes; i++) printf("%02x", h->f_handle[i]);
        printf("\n");
        return 0;
    }
    if (strcmp(argv[1], "open") == 0) {            /* open MOUNT TYPE HEX: print the file the handle names */
        size_t n = strlen(argv[4]) / 2;
        struct file_handle *h = malloc(sizeof *h + n);
        h->handle_bytes = n;
        h->handle_type = atoi(argv[3]);
        for (size_t i = 0; i < n; i++) sscanf(argv[4] + 2 * i, "%2hhx", &h->f_handle[i]);
        int mount_fd = open(argv[2], O_RDONLY | O_DIRECTORY);
        int fd = open_by_handle_at(mount_fd, h, O_RDONLY);
        if (fd < 0) { perror("open_by_handle_at"); return 1; }
        char buf[4096];
        ssize_t got;
        while ((got = read(fd, buf, sizeof buf)) > 0) fwrite(buf, 1, got, stdout);
        return 0;
    }
    if (strcmp(argv[1], "escape") == 0) {          /* escape ABI TAG: a child leaves the group and lingers */
        int done[2];
        if (pipe2(done, O_CLOEXEC) != 0) return 1;
        if (fork() == 0) {
            long sid = other_abi_setsid(argv[2]);
            printf("setsid %ld\n", sid);
            fflush(stdout);
            if (sid > 0) {                         /* out of the group: no token, no working folder of its own */
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0); dup2(null, 1); dup2(null, 2);
                if (chdir("/") != 0) _exit(1);
                char *args[] = {"sleep", argv[3], NULL}, *env[] = {NULL};
                execve("/bin/sleep", args, env);
            }
            _exit(0);
        }
        close(done[1]);
        char c;
        while (read(done[0], &c, 1) > 0) {}        /* EOF: the child has exec'd or is gone */
        return 0;
    }
    if (strcmp(argv[1], "connect") == 0) {         /* connect NAME: reach the abstract socket NAME */
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        size_t n = strlen(argv[2]);
        memcpy(addr.sun_path + 1, argv[2], n);
        if (connect(s, (struct sockaddr *)&addr, sizeof(sa_family_t) + 1 + n) != 0) { perror("connect"); return 1; }
        printf("connected\n");
        return 0;
    }
    return 2;
}
"""


@pytest.fixture(scope="module")
def lab():
    """A folder anyone may use, holding the compiled attacks and a stand-in venv (a pyvenv.cfg naming the
    system's python3, which everyone can read)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    root = Path(tempfile.mkdtemp(prefix="minidebug-redteam-"))  # pytest's tmp_path is root's alone
    os.chmod(root, 0o755)
    (root / "attacks.c").write_text(ATTACKS)
    subprocess.run(["gcc", "-O0", "-o", str(root / "attacks"), str(root / "attacks.c")], check=True)
    venv = root / "venv"
    venv.mkdir()
    home = os.path.dirname(shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "/usr/bin/python3")
    (venv / "pyvenv.cfg").write_text(f"home = {home}\n")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def work(lab):
    """A working folder the program may write, writable by nobody too, holding the attacks."""
    folder = Path(tempfile.mkdtemp(prefix="work-", dir=lab))
    os.chmod(folder, 0o777)
    shutil.copy(lab / "attacks", folder / "attacks")
    return folder


def as_user(user, call):
    """call() as the current user, or in a forked child that has become nobody; its JSON-able result."""
    if user == "self":
        return call()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            with os.fdopen(write, "w") as out:
                json.dump(call(), out)
            code = 0
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as got:
        text = got.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the run as nobody failed (see its traceback above)"
    return json.loads(text)


def confined(sandbox, lab, work, argv):
    """argv's output, run confined as an episode runs it; stray processes are killed and the confinement
    closed after, as an episode's reset and close do."""
    confinement = Confinement(2048, 60, 64, 64, sandbox, venv=lab / "venv")
    try:
        completed, _ = confinement.run(argv, cwd=work, env=PATH, timeout=60, writable=[work])
        confinement.kill_strays([work])
    finally:
        confinement.close()
    return completed.output


def capabilities(status: str) -> dict[str, int]:
    return {line.split(":")[0]: int(line.split()[1], 16) for line in status.splitlines() if line.startswith("Cap")}


def bwrap_without_user_namespace(lab, work, argv):
    """The bwrap command line an episode gets, less its user namespace and capability drop."""
    command = bwrap_command(argv, readable=[], writable=[work], cwd=work, venv=lab / "venv")
    for flag in BWRAP_USER:
        command.remove(flag)
    return command


# 1. Capabilities under bwrap.

@needs_bwrap
@pytest.mark.parametrize("user", USERS)
def test_a_program_in_bwrap_has_no_capabilities(lab, work, user):
    """Root's bwrap hands on every capability unless it runs the program in a user namespace; ours has none."""
    if os.getuid() == 0 and user == "self":
        leaked = subprocess.run(bwrap_without_user_namespace(lab, work, ["grep", "Cap", "/proc/self/status"]),
                                capture_output=True, text=True, check=True).stdout
        assert capabilities(leaked)["CapEff"] != 0, leaked
    status = as_user(user, lambda: confined("bwrap", lab, work, ["grep", "Cap", "/proc/self/status"]))
    caps = capabilities(status)
    assert caps["CapEff"] == caps["CapPrm"] == caps["CapBnd"] == 0, status


@needs_bwrap
@pytest.mark.parametrize("user", USERS)
def test_a_program_in_bwrap_cannot_open_files_by_handle(lab, work, user):
    """A file handle made outside names a file that is not mounted inside; open_by_handle_at needs a
    capability the program no longer has."""
    hidden = Path(tempfile.mkdtemp(prefix="hidden-", dir=lab))  # mounted nowhere inside
    (hidden / "answer.txt").write_text("THE-ANSWER-42")
    if os.stat("/usr").st_dev != (hidden / "answer.txt").stat().st_dev:
        pytest.skip("/usr and the temporary folder lie on different file systems here")
    handle = subprocess.run([str(work / "attacks"), "handle", str(hidden / "answer.txt")], capture_output=True,
                            text=True, check=True).stdout.split()
    attack = [str(work / "attacks"), "open", "/usr", *handle]
    if os.getuid() == 0 and user == "self":
        leaked = subprocess.run(bwrap_without_user_namespace(lab, work, attack), capture_output=True, text=True,
                                check=False)
        assert "THE-ANSWER-42" in leaked.stdout, leaked
    observation = as_user(user, lambda: confined("bwrap", lab, work, attack))
    assert "open_by_handle_at: Operation not permitted" in observation and "THE-ANSWER" not in observation


@needs_bwrap
def test_a_program_in_bwrap_can_make_no_user_namespace(lab, work):
    """No nested user namespace either: in one a program would hold every capability over it."""
    observation = confined("bwrap", lab, work, ["unshare", "--user", "--map-root-user", "true"])
    assert "unshare failed" in observation, observation


# 2. Only the native system call ABI.

def _lingering(tag):
    return [stat.pid for stat in processes() if _cmdline(stat.pid) == ["sleep", tag]]


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def _gone(tag, seconds=30):
    """True once no `sleep tag` is left (a liveness wait, not a timing check)."""
    done = threading.Event()

    def wait():
        while _lingering(tag):
            threading.Event().wait(0.05)
        done.set()

    threading.Thread(target=wait, daemon=True).start()
    return done.wait(seconds)


@x86_64
@needs_gcc
@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("sandbox", [None, pytest.param("landlock", marks=needs_landlock)])
@pytest.mark.parametrize("abi", ["i386", "x32"])
def test_setsid_through_another_abi_fails_and_nothing_outlives_close(lab, work, abi, sandbox, user):
    """setsid made through the 32-bit entry or as an x32 call leaves the group unconfined; confined, it
    fails (or the process dies) and no process of the run outlives the confinement."""
    tag = f"{secrets.randbelow(10**6) + 10**6}.{secrets.randbelow(90) + 10}"
    unconfined = subprocess.run([str(work / "attacks"), "escape", abi, tag], capture_output=True, text=True,
                                start_new_session=True, timeout=60, check=False).stdout
    lingering = _lingering(tag)
    for pid in lingering:
        os.kill(pid, 9)
    if abi == "x32" and "setsid -38" in unconfined:
        pytest.skip("this kernel has no x32 ABI (ENOSYS): the attack cannot be made here")
    assert int(unconfined.split()[1]) > 0 and lingering, unconfined

    try:
        observation = as_user(user, lambda: confined(sandbox, lab, work, [str(work / "attacks"), "escape", abi,
                                                                          tag]))
        sid = observation.split()[1] if observation.startswith("setsid ") else None
        assert sid is None or int(sid) < 0, observation  # killed before it could print, or refused
        assert _gone(tag), "a process outlived the confinement"
    finally:
        for pid in _lingering(tag):
            os.kill(pid, 9)


# 2b. Landlock: no capability, no handle on the ruleset, no host environment.

@needs_landlock
@pytest.mark.parametrize("user", USERS)
def test_under_landlock_a_program_has_no_capabilities_and_no_handle_on_its_ruleset(lab, work, user):
    """Root keeps every capability unless they are dropped; a ruleset descriptor left open would let a program
    add rules (`/`, all access) to the ruleset the episode's next programs get."""
    def check():
        command = ["bash", "-c", "grep ^Cap /proc/self/status; ls -l /proc/self/fd/"]
        return confined("landlock", lab, work, command)

    observation = as_user(user, check)
    assert capabilities(observation)["CapEff"] == 0 and capabilities(observation)["CapPrm"] == 0, observation
    assert capabilities(observation)["CapBnd"] == 0 or user != "self" or os.getuid() != 0, observation
    assert "landlock" not in observation, observation


@needs_landlock
@pytest.mark.parametrize("user", USERS)
def test_under_landlock_a_program_cannot_read_the_hosts_environment(lab, work, user):
    """The host's /proc/<pid>/environ holds the variables the allowlist keeps from programs (API keys)."""
    def check():
        command = ["bash", "-c", f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ | grep -c = && echo read"]
        return confined(None, lab, work, command), confined("landlock", lab, work, command)

    unconfined, observation = as_user(user, check)
    assert "read" in unconfined or user != "self", unconfined  # a host that became nobody is not dumpable
    assert "Permission denied" in observation and "read" not in observation, observation


# 3. Landlock scoping.

@needs_landlock
@needs_scoping
@pytest.mark.parametrize("user", USERS)
def test_under_landlock_a_program_cannot_signal_the_host(lab, work, user):
    """kill -0 on the process that started the program: allowed unconfined, refused under Landlock."""
    def check():
        host = os.getpid()
        command = ["bash", "-c", f"kill -0 {host} && echo signalled"]
        return confined(None, lab, work, command), confined("landlock", lab, work, command)

    unconfined, observation = as_user(user, check)
    assert "signalled" in unconfined, unconfined
    assert "Operation not permitted" in observation and "signalled" not in observation, observation


@needs_landlock
@needs_scoping
@needs_gcc
@pytest.mark.parametrize("user", USERS)
def test_under_landlock_a_program_cannot_reach_the_hosts_abstract_sockets(lab, work, user):
    """An abstract unix socket the host listens on: reachable unconfined, refused under Landlock."""
    name = f"minidebug-redteam-{secrets.token_hex(6)}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(8)
    try:
        attack = [str(work / "attacks"), "connect", name]
        unconfined, observation = as_user(user, lambda: (confined(None, lab, work, attack),
                                                         confined("landlock", lab, work, attack)))
    finally:
        server.close()
    assert "connected" in unconfined, unconfined
    assert "connect:" in observation and "connected" not in observation, observation


SOCKETS = r"""
import socket, sys
kind, where = sys.argv[1], sys.argv[2]
try:
    if kind == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"hello", ("127.0.0.1", int(where)))
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(where)
        s.sendall(b"hello")
    print("reached")
except OSError as exc:
    print("refused:", exc)
left, right = socket.socketpair()
left.sendall(b"x")
print("socketpair", right.recv(1) == b"x")
"""


@needs_landlock
@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("kind", ["udp", "unix"])
def test_under_landlock_no_socket_reaches_the_host(lab, work, user, kind):
    """A UDP datagram to the host's loopback and a unix socket the host listens on by path: reachable
    unconfined, refused under Landlock (as in bwrap, which has no network); socketpair() still works."""
    (work / "sockets.py").write_text(SOCKETS)
    os.chmod(work / "sockets.py", 0o644)
    if kind == "udp":
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        server.bind(("127.0.0.1", 0))
        where = str(server.getsockname()[1])
    else:
        folder = Path(tempfile.mkdtemp(prefix="host-", dir=lab))
        os.chmod(folder, 0o777)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(folder / "host.sock"))
        os.chmod(folder / "host.sock", 0o777)
        server.listen(8)
        where = str(folder / "host.sock")
    python = shutil.which("python3", path=PATH["PATH"])
    try:
        attack = [python, str(work / "sockets.py"), kind, where]
        unconfined, observation = as_user(user, lambda: (confined(None, lab, work, attack),
                                                         confined("landlock", lab, work, attack)))
    finally:
        server.close()
    assert "reached" in unconfined, unconfined
    assert "refused: [Errno 13] Permission denied" in observation and "reached" not in observation, observation
    assert "socketpair True" in observation, observation


DEVICE_NODES = ("null", "zero", "full", "random", "urandom", "tty")


def _host_nodes() -> dict[str, os.stat_result]:
    return {name: os.stat(f"/dev/{name}") for name in DEVICE_NODES}


def _unchanged(before: dict[str, os.stat_result]) -> bool:
    after = _host_nodes()
    return all((after[n].st_mode, after[n].st_mtime_ns, after[n].st_uid) ==
               (before[n].st_mode, before[n].st_mtime_ns, before[n].st_uid) for n in DEVICE_NODES)


@needs_bwrap
def test_under_bwrap_a_program_run_by_root_changes_device_nodes_of_its_own_never_the_hosts(make_env, calc_task):
    # Run by root, bwrap's /dev would bind the host's nodes, which the program's uid 0 owns. The commands only
    # ever change a node that is not the host's (device and inode differ), so a regression damages nothing.
    host = _host_nodes()
    ids = " ".join(f"{info.st_dev}:{info.st_ino}" for info in host.values())
    env = make_env(calc_task, sandbox="bwrap", bash=True)
    env.reset()
    change = ("for n in null zero full random urandom tty; do case ' " + ids + " ' in "
              "*\" $(stat -c %d:%i /dev/$n) \"*) echo host-$n;; *) chmod 600 /dev/$n && touch -d 2001-01-01 /dev/$n "
              "&& echo changed-$n;; esac; done; echo x > /dev/null && head -c 4 /dev/zero | wc -c")
    seen = env.step({"name": "bash", "arguments": {"command": change}})[0].split()
    expected = "changed" if os.geteuid() == 0 else "host"  # as a plain user the host's nodes are not its own
    assert seen == [f"{expected}-{n}" for n in DEVICE_NODES] + ["4"]
    after = env.step({"name": "bash", "arguments": {"command": "stat -c '%a %Y' /dev/null /dev/zero"}})[0].split()
    assert after[0::2] == ["666", "666"] and "2001" not in " ".join(after)  # the next program finds them as made
    assert _unchanged(host)


@needs_bwrap
def test_under_bwrap_a_run_that_changes_a_device_node_leaves_it_to_no_later_run(make_env, task_dir):
    host = _host_nodes()["null"]
    test = f"""\
        import os
        import stat


        def test_null():
            info = os.stat("/dev/null")
            assert stat.S_IMODE(info.st_mode) == 0o666, oct(info.st_mode)
            if (info.st_dev, info.st_ino) != ({host.st_dev}, {host.st_ino}):  # never the host's own
                os.chmod("/dev/null", 0o600)
                os.utime("/dev/null", (0, 0))
        """
    env = make_env(task_dir({"test_null.py": test}, toml='description = "d"\neval = "python -m pytest -q"\n'),
                   sandbox="bwrap", terminate_on_success=False)
    env.reset()
    results = [env.evaluate() for _ in range(3)]
    assert [r.tests for r in results] == [{"test_null.py::test_null": "passed"}] * 3, results[-1].output[-2000:]
    assert _unchanged({"null": host, **{n: os.stat(f"/dev/{n}") for n in DEVICE_NODES[1:]}})


PROC_WRITES = """
import os
for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness", "/proc/sys/kernel/hostname",
             "/proc/mtrr", "/proc/pressure/cpu"):
    try:
        os.close(os.open(path, os.O_WRONLY))  # opened for writing, never written
        print(path, "opened")
    except OSError:
        print(path, "refused")
"""
SANDBOXED = [pytest.param("bwrap", marks=needs_bwrap), pytest.param("landlock", marks=needs_landlock)]


@pytest.mark.parametrize("sandbox", SANDBOXED)
@pytest.mark.parametrize("user", USERS)
def test_a_program_cannot_open_the_hosts_sysctls_for_writing(lab, work, sandbox, user):
    """Run by root, a program in bwrap is uid 0, which the kernel lets write most of /proc/sys (the host's
    `kernel.core_pattern`: a command root runs at the next crash) and the UTS namespace's hostname (a message
    to the next run of a warm interpreter); bwrap's own /proc covers none of it (minidebug's is read-only, and
    its /proc/sys a folder of copies)."""
    seen = as_user(user, lambda: confined(sandbox, lab, work, ["python3", "-c", PROC_WRITES]))
    assert "opened" not in seen and seen.count("refused") == 5, seen


IO_URING = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); params = ctypes.create_string_buffer(120); "
            "fd = libc.syscall(425, 4, params); print('made' if fd >= 0 else os.strerror(ctypes.get_errno()))")


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="io_uring_setup's number is 425 there")
@pytest.mark.parametrize("sandbox", [None, *SANDBOXED])
def test_no_program_can_set_up_io_uring(lab, work, sandbox):
    """io_uring's operations (setxattr among them) never pass through a seccomp filter."""
    unconfined = subprocess.run(["python3", "-c", IO_URING], capture_output=True, text=True).stdout.strip()
    if unconfined != "made":
        pytest.skip(f"this kernel gives no io_uring to anyone ({unconfined})")
    assert confined(sandbox, lab, work, ["python3", "-c", IO_URING]).strip() == "Operation not permitted"


# Lists the descriptors of the process that are one of the host's device nodes (device and inode as the host
# sees them, given as IDS): through one, a program whose uid owns the node changes it (fchmod, futimens).
HOST_NODE_FDS = """
import os
ids = set(IDS)
held = []
for fd in sorted(int(name) for name in os.listdir("/proc/self/fd")):
    try:
        info = os.fstat(fd)
    except OSError:
        continue
    if (info.st_dev, info.st_ino) in ids:
        held.append(fd)
print("HOST-NODE-FDS", held)
"""


@needs_bwrap
def test_under_bwrap_no_program_holds_a_device_node_of_the_host(make_env, task_dir):
    # A bash command's stdin, and a forked eval run's descriptors from its warm interpreter, were the host's
    # /dev/null: run by root, fchmod on it broke the machine and every later eval. (Under Landlock /dev is the
    # host's, which any program opens by path; there the seccomp filter refuses changing a file's mode.)
    sandbox = "bwrap"
    probe = HOST_NODE_FDS.replace("IDS", repr([(i.st_dev, i.st_ino) for i in _host_nodes().values()]))
    test = "def test_fds():\n    exec(" + repr(probe) + ")\n    assert False\n"
    env = make_env(task_dir({"test_fds.py": test}, toml='description = "d"\neval = "python -m pytest -q"\n'),
                   sandbox=sandbox, bash=True, terminate_on_success=False)
    env.reset()
    results = [env.evaluate() for _ in range(3)]  # fresh (the task's first), then forked
    assert [r.forked for r in results][1:] == [True, True]
    for result in results:
        assert "HOST-NODE-FDS []" in result.output, result.output[-1500:]
    env.step({"name": "edit", "arguments": {"path": "probe.py", "start": 1, "end": 0, "new_code": probe}})
    shown = env.step({"name": "bash", "arguments": {"command": "python probe.py < /dev/null; python probe.py"}})[0]
    assert shown.count("HOST-NODE-FDS []") == 2, shown


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="as a plain user the terminal is that user's own")
def test_under_bwrap_a_pdb_program_run_by_root_cannot_change_its_terminal(make_env, calc_task):
    # The pdb session's terminal is a pty of the host's; the sandbox's uid 0 owned it and made it mode 0777
    # (any user of the machine could then read the session or type into it). Same mode asked: changes nothing.
    env = make_env(calc_task, sandbox="bwrap")
    env.reset()
    env.step({"name": "pdb", "arguments": {"command": "b calc.py:2"}})
    shown = env.step({"name": "pdb", "arguments": {"command":
                      "p __import__('os').system('python -c \"import os; os.fchmod(0, os.fstat(0).st_mode & 0o7777)\"')"}})[0]
    assert "PermissionError" in shown and "Operation not permitted" in shown, shown
