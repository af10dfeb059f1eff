"""eval and submit: run the task's tests and score them."""

from __future__ import annotations

from .base import Episode, Tool
from .output import ToolOutput


def _report(episode: Episode, header: str) -> ToolOutput:
    result = episode.evaluate()
    lines = [f"{header}: {result.summary()}"]
    lines += [f"note: {note}" for note in result.notes]
    if not result.success:
        lines.append(result.output.rstrip())
    if result.suspicious:
        lines.append(f"suspicious: {len(result.suspicious)} sign(s) that changed code reached into the test "
                     f"runner: {'; '.join(result.suspicious[:5])}{' ...' if len(result.suspicious) > 5 else ''}")
    return ToolOutput("\n".join(lines), score=result.score, max_score=result.max_score,
                      suspicious=result.suspicious)


class Eval(Tool):
    name = "eval"
    description = "Run the project's tests; shows how many pass and the failure output."

    def run(self, episode: Episode, args) -> ToolOutput:
        return _report(episode, "eval")


class Submit(Tool):
    name = "submit"
    description = "Run the tests one last time and end the episode. Call it when you believe the bug is fixed."

    def run(self, episode: Episode, args) -> ToolOutput:
        episode.end_programs()  # so that what eval reads is what the episode leaves
        output = _report(episode, "submitted")
        return ToolOutput(output.text, output.score, output.max_score, submitted=True, suspicious=output.suspicious)
