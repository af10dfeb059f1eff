"""`minidebug synth`'s progress: a bar on a terminal (tasks kept of --max; candidates tried, kept and dropped;
ETA), a plain line per candidate otherwise."""

from __future__ import annotations

import sys
import time
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..synth.build import SynthReport


class SynthProgress:
    """Called with the report once the candidates are known and after each candidate (`synthesize`'s
    `on_trial`); `line` prints a line of its own (`-v`) above the bar, or as it is."""

    def __init__(self, max_tasks: int, stream: IO[str] | None = None, terminal: bool | None = None):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.max_tasks = max(1, max_tasks)
        self.started: float | None = None
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[eta]}"),
                            console=Console(file=self.stream, force_terminal=self.terminal or None),
                            disable=not self.terminal, transient=False, auto_refresh=False)
        self.task = self.bar.add_task("kept", total=self.max_tasks, eta="")

    def __enter__(self) -> SynthProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.bar.__exit__(*exc_info)

    def line(self, text: str) -> None:
        if self.terminal:
            self.bar.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)

    def __call__(self, report: SynthReport) -> None:
        now = time.monotonic()
        if self.started is None:
            self.started = now
        kept, dropped = len(report.kept), sum(report.dropped.values())
        eta = self.eta(report, now - self.started)
        counts = f"tried {report.tried} of {report.reachable}, kept {kept}, dropped {dropped}"
        if self.terminal:
            self.bar.update(self.task, completed=min(kept, self.max_tasks), description=counts,
                            eta=f"ETA {eta}", refresh=True)
        elif report.tried:
            print(f"{counts} (--max {self.max_tasks}); ETA {eta}", file=self.stream, flush=True)

    def eta(self, report: SynthReport, elapsed: float) -> str:
        """The time left at the pace of the candidates run so far (those judged by an earlier run took none):
        until --max tasks are kept, at the share kept so far, or the candidates run out, whichever comes first."""
        run = report.tried - report.resumed
        kept = len(report.kept)
        if run <= 0:
            return "-"
        left = report.reachable - report.tried
        if kept:
            left = min(left, round((self.max_tasks - kept) * report.tried / kept))
        seconds = max(0, round(elapsed / run * max(0, left)))
        return f"{seconds // 60}:{seconds % 60:02d}"
