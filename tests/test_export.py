"""`minidebug export preds`: a run as the predictions file the SWE-bench harness reads."""

import json
import shutil
import subprocess

from minidebug.run.cli import main
from minidebug.tasks.task import load_task


def test_preds_hold_one_applicable_patch_per_task_and_arm(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    run = tmp_path / "run"
    assert main(["run", "--tasks", "sum_tree", "late_handlers", "--seeds", "2", "--strategy", "debug", "rewrite",
                 "--out", str(run), "-j", "2"]) == 0
    out = tmp_path / "preds.json"
    assert main(["export", "preds", str(run), "--out", str(out)]) == 0
    predictions = json.loads(out.read_text())
    assert [(p["model_name_or_path"], p["instance_id"]) for p in predictions] == [
        ("oracle", "late_handlers"), ("oracle", "sum_tree"),
        ("oracle__rewrite", "late_handlers"), ("oracle__rewrite", "sum_tree")]
    for prediction in predictions:  # each patch applies to the task's base, as the harness will apply it
        repo = tmp_path / "check" / prediction["model_name_or_path"] / prediction["instance_id"]
        shutil.copytree(load_task(prediction["instance_id"]).repo, repo)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        applied = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=prediction["model_patch"],
                                 text=True, capture_output=True)
        assert applied.returncode == 0, applied.stderr
        assert prediction["model_patch"].startswith("diff --git a/")
