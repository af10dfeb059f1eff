"""A pdb session forked in an eval room (see runner/room_view.py), with a pty of the host's as its terminal.

The session's replies and breakpoints are the worktree's: paths are mapped both ways (see `RoomView`). The
room's warm interpreter sends the session Ctrl-C (SIGINT to its process group) and kills it when it ends.
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios

from .pdb_session import NOBODY, Breakpoint, PdbSession, Reply
from .room_view import RoomView

ROWS, COLUMNS = 50, 500  # the terminal's size, as a spawned session's


def _terminal() -> tuple[int, int]:
    """A pty (host end, child end): no echo, the size a spawned session's has; run by root, the child end's
    node goes to nobody with mode 0600 (see pdb_session._terminal_not_root)."""
    host, child = os.openpty()
    try:
        attributes = termios.tcgetattr(child)
        attributes[3] &= ~termios.ECHO
        termios.tcsetattr(child, termios.TCSANOW, attributes)
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        if os.geteuid() == 0:
            os.fchown(child, NOBODY, -1)
            os.fchmod(child, 0o600)
    except BaseException:
        os.close(host)
        os.close(child)
        raise
    return host, child


class RoomPdbSession(PdbSession):
    """A pdb session in a borrowed room; it gives the room back when closed."""

    def __init__(self, argv: list[str], view: RoomView, timeout: float):
        """Start the session; raises OSError (having given the room back) where it cannot."""
        import pexpect.fdpexpect

        self.view, self.tree = view, view.tree
        self._closed = False
        self._new_marker()
        self.preloaded = False
        self.child = None
        host = child = -1
        try:
            host, child = _terminal()
            if not view.warm.start_session(child, view.program("pdb", argv), timeout):
                raise OSError(f"the warm interpreter could not start the pdb session: {view.warm.reason}")
        except BaseException:
            if host >= 0:
                os.close(host)
            self.close()
            raise
        finally:
            if child >= 0:
                os.close(child)
        self.child = pexpect.fdpexpect.fdspawn(host, encoding="utf-8", codec_errors="replace", use_poll=True)

    def begin(self, breakpoints: list[Breakpoint]) -> bool:
        return super().begin([Breakpoint(**{**vars(bp), "file": self.view.to_room(bp.file)}) for bp in breakpoints])

    def send(self, command: str, timeout: float) -> Reply:
        return super().send(self.view.to_room(command), timeout)

    def read_reply(self, timeout: float) -> Reply:
        reply = super().read_reply(timeout)
        location = reply.location
        if location is not None:
            location = (self.view.to_worktree(location[0]), location[1])
        return Reply(self.view.to_worktree(reply.output), location, reply.status)

    @property
    def alive(self) -> bool:
        return not self._closed and not self.child.flag_eof and self.view.warm.in_session

    def interrupt(self) -> None:
        self.view.warm.interrupt_session()

    def exit_code(self) -> int | None:
        code = self.view.warm.end_session()
        self.close()
        return code

    def close(self) -> None:
        """End the session (the room's interpreter kills what is left of it) and give the room back.
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.view.warm.end_session()
        finally:
            if self.child is not None:
                self.child.close()
            self.view.give_back()
