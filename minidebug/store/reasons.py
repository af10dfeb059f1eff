"""Why a step of a venv's build failed, in one line: the line `validate` and `check` show of a failed build.

The reason of a failed command (`reason`) is, in this order:

1. what the output shows missing that only the system can give (a compiler, a header, a system library), or
   a requirement pip has no release of for this Python, or one that needs another Python;
2. how the run was stopped, when it was (a timeout, a signal, a resource limit: the note the run adds);
3. the first line that states an error: a Python exception line (`ValueError: boom`), a line that starts
   with `error:`, `ERROR:`, `fatal:` (any case), a compiler's `file.c:1:2: error: ...`, a shell's
   `...: not found` or `...: No such file or directory` (pip's headings such as
   `error: subprocess-exited-with-error` are skipped: the lines under them say why);
4. else the last non-empty line of the output; with no output at all, the exit status.
"""

from __future__ import annotations

import re
import shlex

from ..errors import WorkspaceError

_MISSING = (
    (re.compile(r"fatal error: ([\w./+-]+\.h): No such file"), "the system header {0}"),
    (re.compile(r"error: command '(?:[^']*/)?([\w.+-]+)' failed: No such file"), "the program {0}"),
    (re.compile(r"unable to execute '([\w.+-]+)'"), "the program {0}"),
    (re.compile(r"\b(gcc|cc|g\+\+|clang|gfortran|cmake|rustc|cargo|pkg-config)\b: (?:command )?not found"),
     "the program {0}"),
    (re.compile(r"Package '?([\w.+-]+?)'?,? (?:required by '[^']*', )?(?:was )?not found"),
     "the system library {0} (as pkg-config names it)"),
    (re.compile(r"cannot find -l([\w.+-]+)"), "the system library lib{0}"),
    (re.compile(r"can't find (Rust) compiler"), "the {0} compiler (rustc)"),
)
_NO_DISTRIBUTION = re.compile(r"No matching distribution found for (\S+)")
_OTHER_PYTHON = re.compile(r"Package '([^']+)' requires a different Python: (\S+) not in '([^']+)'")
_STOPPED = re.compile(r"^\[(?:timed out|killed by signal|stopped:|(?:memory|process) limit)[^\]]*\]$")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception)(?::.*)?$")  # `ValueError: boom`
_STATES_WHY = re.compile(
    r"^(?:error|fatal)(?: error)?:"  # pip's, git's, a build tool's
    r"|:\d+(?::\d+)?: (?:fatal )?error:"  # a compiler's, at a file's line
    r"|: (?:command )?not found$|: No such file or directory$", re.IGNORECASE)
_HEADING = re.compile(r"^error: [a-z]+(?:-[a-z]+)+$")  # pip's `error: subprocess-exited-with-error`
LONGEST_REASON = 300  # characters
LONGEST_STEP = 200
LONGEST_WORD = 80


def reason(output: str) -> str:
    """Why a command failed, in one line, from its output (the rule is the module's docstring), or ""."""
    for pattern, what in _MISSING:
        found = pattern.search(output)
        if found:
            return (f"needs {what.format(found.group(1))}, which this machine lacks "
                    "(install it, or run this task in a container)")
    found = _NO_DISTRIBUTION.search(output)
    if found:
        return f"pip finds no release of {found.group(1)} for this Python"
    found = _OTHER_PYTHON.search(output)
    if found:
        return f"{found.group(1)} needs Python {found.group(3)}, not the venv's {found.group(2)}"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    stopped = [line for line in lines[-2:] if _STOPPED.match(line)]
    stated = [line for line in lines
              if _EXCEPTION.match(line) or (_STATES_WHY.search(line) and not _HEADING.match(line))]
    chosen = (stopped or stated or lines[-1:] or [""])[0]
    return chosen if len(chosen) <= LONGEST_REASON else chosen[:LONGEST_REASON - 3] + "..."


def shown(command: str) -> str:
    """A command as a message shows it, on one line: an argument of several lines or longer than a line (a
    `python -c` script) as its length, and the whole, when still long, as its start and its length."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: shown as written
        words = None
    if words is not None and any("\n" in word or len(word) > LONGEST_WORD for word in words):
        command = " ".join(f"<{len(word)} characters>" if "\n" in word or len(word) > LONGEST_WORD
                           else shlex.quote(word) for word in words)
    command = " ".join(command.split()) if "\n" in command else command
    return command if len(command) <= LONGEST_STEP else f"{command[:LONGEST_STEP // 2]} ... ({len(command)} characters)"


class SetupError(WorkspaceError):
    """A step of a venv's build failed: `step` says what ran (its command as `shown` gives it), `reason` why,
    in one line. The message's first line is "<step> failed: <reason>"; the end of the output follows."""

    def __init__(self, step: str, why: str, output: str = "") -> None:
        self.step, self.reason, self.output = step, why, output
        tail = output.strip()[-4000:]
        super().__init__(f"{step} failed: {why}" + (f"\n{tail}" if tail else ""))

    @classmethod
    def of(cls, step: str, output: str, returncode: int | None) -> SetupError:
        """The error of a step that ended with `returncode` after printing `output`."""
        return cls(step, reason(output) or f"exit status {returncode}, and no output", output)

    def blaming(self, why: str) -> SetupError:
        """The same failure with another reason (what the machine lacks, say)."""
        return SetupError(self.step, why, self.output)

    def __reduce__(self):
        return SetupError, (self.step, self.reason, self.output)
