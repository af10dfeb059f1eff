import json
import os
import subprocess
import sys

import pexpect
import pytest

from minidebug.run.episode import run_episode
from minidebug.run.play import parse_line
from minidebug.tasks.task import load_task


def _environ(cache_dir):
    return {**os.environ, "MINIDEBUG_CACHE": str(cache_dir), "TERM": "dumb"}


def test_play_in_a_terminal(calc_task, cache_dir):
    child = pexpect.spawn(sys.executable, ["-m", "minidebug.run.cli", "play", str(calc_task)],
                          env=_environ(cache_dir), encoding="utf-8", timeout=120)
    try:
        child.expect_exact("add() gives wrong sums")
        child.expect_exact("minidebug> ")
        child.sendline("help")
        child.expect_exact("view PATH [START [END]]")
        child.expect_exact("minidebug> ")
        child.sendline("view calc.py 1 2")
        child.expect_exact("2      return a - b")
        child.expect_exact("minidebug> ")
        child.sendline("pdb b calc.py:2")
        child.expect_exact("Breakpoint 1 at calc.py:2")
        child.expect_exact("minidebug> ")
        child.sendline("view nowhere")
        child.expect_exact("error: nowhere: no such file")
        child.expect_exact("minidebug> ")
        child.sendline("edit calc.py 2 2")
        child.expect_exact("... ")
        child.sendline("    return a + b")
        child.expect_exact("... ")
        child.sendline(".")
        child.expect_exact("+    return a + b")
        child.expect_exact("minidebug> ")
        child.sendline("eval")
        child.expect_exact("eval: 2 passed (score 2/2)")
        child.expect_exact("[episode over: reward 1.00, terminated]")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


@pytest.mark.parametrize("line, expected", [
    ("view a.py 3 9", ("view", {"path": "a.py", "start": 3, "end": 9})),
    ("listdir src 3", ("listdir", {"path": "src", "depth": 3})),
    ("grep 'two words' src", ("grep", {"pattern": "two words", "path": "src"})),
    ("pdb b x.py:3, i > 2", ("pdb", {"command": "b x.py:3, i > 2"})),
    ('{"name": "eval"}', ("eval", {})),
    ("eval", ("eval", {})),
    ("trace Node.add 5", ("trace", {"target": "Node.add", "max_calls": 5})),
    ("inspect tree.py:14 node.value 'len(node.children)'",
     ("inspect", {"at": "tree.py:14", "expr": ["node.value", "len(node.children)"]})),
])
def test_parse_line(line, expected):
    call = parse_line(line, lambda: ".")
    assert (call.name, dict(call.arguments)) == expected


def test_parse_line_errors():
    with pytest.raises(ValueError, match="expected a line number"):
        parse_line("view a.py x", lambda: ".")
    with pytest.raises(ValueError, match="usage: edit"):
        parse_line("edit a.py 3", lambda: ".")
    with pytest.raises(ValueError, match="unknown command 'bogus'; the commands: .*view"):
        parse_line("bogus command here", lambda: ".")


def test_replay_of_a_recorded_episode_matches(calc_task, cache_dir, tmp_path):
    result = run_episode(load_task(calc_task), "oracle", tmp_path, cache_dir=cache_dir)
    assert result.solved
    path = tmp_path / "calc.oracle.s0.jsonl"
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "replay", str(path)], capture_output=True,
                          text=True, env=_environ(cache_dir), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("0 difference(s) in 2 step(s)")


def test_replay_reports_differing_steps(calc_task, cache_dir, tmp_path):
    run_episode(load_task(calc_task), "oracle", tmp_path, cache_dir=cache_dir)
    path = tmp_path / "calc.oracle.s0.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[1]["observation"] = records[1]["observation"].replace("a + b", "a * b")
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = subprocess.run([sys.executable, "-m", "minidebug.run.cli", "replay", str(path)], capture_output=True,
                          text=True, env=_environ(cache_dir), timeout=300)
    assert done.returncode == 1
    assert "step 1: observation differs" in done.stdout and "1 difference(s)" in done.stdout


def test_replay_agent_in_run(calc_task, cache_dir, tmp_path):
    run_episode(load_task(calc_task), "oracle", tmp_path / "first", cache_dir=cache_dir)
    result = run_episode(load_task(calc_task), "replay", tmp_path / "again",
                         {"trajectory": tmp_path / "first" / "calc.oracle.s0.jsonl"}, cache_dir=cache_dir)
    assert result.solved and result.steps == 2


def test_pdb_and_eval_observations_replay_identically(calc_task, cache_dir, tmp_path):
    from minidebug.run.replay_check import replay

    actions = [{"name": "pdb", "arguments": {"command": c}} for c in ("b calc.py:2", "c", "p a, b", "w", "c")]
    actions.append({"name": "eval"})
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps({"type": "step", "step": i + 1, "action": a}) + "\n"
                              for i, a in enumerate(actions)))
    run_episode(load_task(calc_task), "replay", tmp_path / "rec", {"trajectory": script}, cache_dir=cache_dir)
    recorded = tmp_path / "rec" / "calc.replay.s0.jsonl"
    mismatches, warnings = replay(recorded, cache_dir=cache_dir)
    assert mismatches == [] and warnings == []
    observations = [json.loads(line).get("observation", "") for line in recorded.read_text().splitlines()]
    assert any("[at calc.py:2] return a - b" in o for o in observations)


def test_a_failing_tests_temp_folder_is_the_same_in_every_episode(make_env, task_dir):
    """A forked eval runs in a room whose folder changes from eval to eval; the observation names none."""
    files = {"calc.py": "def one():\n    return 2\n",
             "test_calc.py": "from calc import one\n\n\ndef test_one(tmp_path):\n    assert (one(), tmp_path) == (1, 0)\n"}
    task = task_dir(files, 'description = "x"\neval = "python -m pytest -q"\nreadonly = ["test_*.py"]\n', name="tmp")
    seen = []
    for _ in range(2):
        env = make_env(task)
        env.reset()
        seen += [env.step({"name": "eval"})[0] for _ in range(2)]
    assert "minidebug-room-" not in seen[-1] and "$EPISODE/" in seen[-1], seen[-1]
    assert len(set(seen)) == 1, seen
