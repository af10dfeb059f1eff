"""Trajectory files as typed records: what a real episode writes reads back losslessly, files written before
the format version existed still read, and a file of a newer format is a clear error."""

import json
import re

import pytest

from minidebug.core.trajectory import (
    FORMAT,
    HeaderRecord,
    ResultRecord,
    StepRecord,
    TrajectoryError,
    read_result,
    read_trajectory,
    trajectories,
)
from minidebug.report import load
from minidebug.run.batch import finished_results
from minidebug.run.cli import main
from minidebug.run.episode import run_episode
from minidebug.run.export import predictions
from minidebug.tasks.task import load_task

CALC_DIFF = """\
diff --git a/calc.py b/calc.py
index 5a8ac82..8ae4b2b 100644
--- a/calc.py
+++ b/calc.py
@@ -1,5 +1,5 @@
 def add(a, b):
-    return a - b
+    return a + b
 
 
 def mul(a, b):
"""  # noqa: W293 (a diff's blank context lines hold a space)


def old_format_records(task_root):
    """A trajectory of the calc task exactly as minidebug wrote them before `format` existed (no such key in
    the header), with a key no record declares on the header and on a step."""
    return [
        {"type": "header", "task": "calc", "task_path": str(task_root), "task_hash": "0123456789abcdef",
         "task_set": "old", "agent": "oracle", "strategy": "debug", "model": None, "seed": 0,
         "limits": {"max_steps": 10, "max_tokens": 100000}, "tools": ["view", "edit", "eval", "submit"],
         "observation": "add() gives wrong sums", "tokens_used": 500, "note": "kept"},
        {"type": "step", "step": 1, "action": {"name": "edit", "arguments": {
            "path": "calc.py", "start": 1, "end": 5,
            "new_code": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n"}},
         "observation": "--- a/calc.py\n+++ b/calc.py", "reward": 0.0, "terminated": False, "truncated": False,
         "info": {"task": "calc", "step": 1, "tokens_used": 540, "tokens_left": 99460, "tool": "edit"},
         "seconds": 0.0007, "annotation": {"by": "hand"}},
        {"type": "step", "step": 2, "action": {"name": "eval", "arguments": {}},
         "observation": "eval: 2 passed (score 2/2)", "reward": 1.0, "terminated": True, "truncated": False,
         "info": {"task": "calc", "step": 2, "tokens_used": 552, "tokens_left": 99448, "tool": "eval",
                  "score": 2, "max_score": 2}, "seconds": 0.45},
        {"type": "result", "task": "calc", "agent": "oracle", "seed": 0, "solved": True, "reward": 1.0, "steps": 2,
         "tokens": 552, "seconds": 0.7, "error": None, "strategy": "debug", "model": None, "task_set": "old",
         "diff": CALC_DIFF},
    ]


def write_lines(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_a_real_episode_reads_back_as_typed_records_and_rewrites_byte_for_byte(calc_task, cache_dir, tmp_path):
    result = run_episode(load_task(calc_task), "oracle", tmp_path, cache_dir=cache_dir)
    path = tmp_path / f"{result.id}.jsonl"
    records = read_trajectory(path)

    header, steps, last = records[0], records[1:-1], records[-1]
    assert isinstance(header, HeaderRecord) and isinstance(last, ResultRecord)
    assert all(isinstance(step, StepRecord) for step in steps)
    assert header.format == FORMAT and header.task == "calc" and header.agent == "oracle"
    assert header.task_path == str(calc_task) and "edit" in header.tools
    assert [step.action.name for step in steps] == ["edit", "eval"] and steps[-1].reward == 1.0
    assert steps[-1].info.score == steps[-1].info.max_score == 2
    assert all(step.exchange is None for step in steps)  # the oracle asks no model
    assert last.solved and last.steps == len(steps) == result.steps and last.diff.startswith("diff --git")

    lines = path.read_text(encoding="utf-8").splitlines()
    assert list(json.loads(lines[0]))[:2] == ["type", "format"]
    assert all("model" not in json.loads(line) for line in lines[1:-1])  # no exchange, no key
    assert [record.to_json() for record in records] == lines


def test_trajectories_and_read_result_see_only_finished_episodes(calc_task, cache_dir, tmp_path):
    run = tmp_path / "run"
    result = run_episode(load_task(calc_task), "oracle", run, cache_dir=cache_dir)
    finished = run / f"{result.id}.jsonl"
    lines = finished.read_text().splitlines(keepends=True)
    interrupted = run / "calc.oracle.s1.jsonl"  # stopped between steps: no result line
    interrupted.write_text("".join(lines[:-1]))
    cut_short = run / "calc.oracle.s2.jsonl"  # stopped while writing the result line
    cut_short.write_text("".join(lines[:-1]) + lines[-1][:20])

    read = list(trajectories([tmp_path / "run" / finished.name, run / interrupted.name]))
    assert [(path, trajectory.result.solved, len(trajectory.steps)) for path, trajectory in read] == [
        (finished, True, result.steps)]
    assert read_result(interrupted) is None and read_result(cut_short) is None
    assert read_result(finished) == read_trajectory(finished)[-1]
    assert list(finished_results(run)) == [result.id]


def test_a_file_from_before_the_format_version_still_reads(calc_task, cache_dir, tmp_path):
    old = write_lines(tmp_path / "old" / "calc.oracle.s0.jsonl", old_format_records(calc_task))

    header, *steps, result = read_trajectory(old)
    assert header.format == 1 and header.task == "calc" and header.tools == ["view", "edit", "eval", "submit"]
    assert [step.action.name for step in steps] == ["edit", "eval"] and steps[1].info.score == 2
    assert result.solved and result.diff == CALC_DIFF
    assert header.model_extra == {"note": "kept"} and steps[0].model_extra == {"annotation": {"by": "hand"}}
    assert json.loads(steps[0].to_json())["annotation"] == {"by": "hand"}  # nothing recorded is lost

    assert predictions([tmp_path / "old"]) == [
        {"instance_id": "calc", "model_name_or_path": "oracle", "model_patch": CALC_DIFF}]
    episode, = load([tmp_path / "old"]).episodes
    assert (episode.task, episode.task_set, episode.solved, episode.steps) == ("calc", "old", True, 2)
    assert episode.tool_calls == {"edit": 1, "eval": 1}
    replayed = run_episode(load_task(calc_task), "replay", tmp_path / "replayed", {"trajectory": old},
                           cache_dir=cache_dir)
    assert replayed.solved and replayed.steps == 2


def test_a_file_of_a_newer_format_is_a_clear_error(tmp_path, capsys):
    header = {"type": "header", "format": FORMAT + 1, "run": {"renamed": "fields"}}
    newer = write_lines(tmp_path / "run" / "t.a.s0.jsonl", [header, {"type": "result", "solved": True}])

    with pytest.raises(TrajectoryError, match=rf"{re.escape(str(newer))}:1: trajectory format {FORMAT + 1} is newer"):
        read_trajectory(newer)
    with pytest.raises(TrajectoryError, match=f"format {FORMAT + 1}"):
        finished_results(tmp_path / "run")  # a resumed run must not take it for unfinished and overwrite it
    assert main(["report", str(tmp_path / "run"), "--text"]) == 2
    error = capsys.readouterr().err
    assert str(newer) in error and f"trajectory format {FORMAT + 1} is newer" in error


@pytest.mark.parametrize("line, problem", [
    ('{"type": "step", "step": 1, "action": {"name": "view"', "not JSON"),
    ('{"type": "step", "step": 1}', "action: Field required"),
    ('{"type": "verdict"}', "not a trajectory record"),
    ('{"type": "header", "format": "two", "task": "t", "agent": "a"}', "format 'two' is not a version number"),
])
def test_a_malformed_line_is_named_with_its_file_and_line(tmp_path, line, problem):
    path = tmp_path / "t.jsonl"
    path.write_text('{"type": "header", "task": "t", "agent": "a"}\n\n' + line + "\n")
    with pytest.raises(TrajectoryError, match=rf"^{re.escape(str(path))}:3: .*{problem}"):
        read_trajectory(path)
