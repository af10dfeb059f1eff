"""`minidebug export preds`: a run as the predictions file the SWE-bench harness reads."""

import json
import shutil
import subprocess

import pytest

from minidebug.run.cli import main
from minidebug.tasks.task import load_task


def test_preds_hold_one_applicable_patch_per_task_and_arm(tmp_path, cache_dir, monkeypatch, capsys):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    run = tmp_path / "run"
    assert main(["run", "--tasks", "sum_tree", "late_handlers", "--seeds", "2", "--strategy", "debug", "rewrite",
                 "--out", str(run), "-j", "2"]) == 0
    out = tmp_path / "preds.json"
    capsys.readouterr()
    assert main(["export", "preds", str(run), "--out", str(out)]) == 0
    assert not out.exists()  # two arms: a file for each, since the harness keys predictions by instance_id
    assert "warning: 2 arms predict the same instance_ids" in capsys.readouterr().err
    per_arm = {path.name: json.loads(path.read_text()) for path in sorted(tmp_path.glob("preds.*.json"))}
    assert {name: [(p["model_name_or_path"], p["instance_id"]) for p in records]
            for name, records in per_arm.items()} == {
        "preds.oracle.json": [("oracle", "late_handlers"), ("oracle", "sum_tree")],
        "preds.oracle__rewrite.json": [("oracle__rewrite", "late_handlers"), ("oracle__rewrite", "sum_tree")]}
    loader = pytest.importorskip("swebench.harness.utils", reason="swebench needs Python 3.11")
    for path in sorted(tmp_path.glob("preds.*.json")):  # as SWE-bench's harness reads it: keyed by instance_id
        loaded = loader.get_predictions_from_file(str(path), "SWE-bench/SWE-bench_Lite", "test")
        assert {p["instance_id"]: p for p in loaded} == {p["instance_id"]: p for p in per_arm[path.name]}
        assert len(loaded) == 2
    predictions = [p for records in per_arm.values() for p in records]
    for prediction in predictions:  # each patch applies to the task's base, as the harness will apply it
        repo = tmp_path / "check" / prediction["model_name_or_path"] / prediction["instance_id"]
        shutil.copytree(load_task(prediction["instance_id"]).repo, repo)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        applied = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=prediction["model_patch"],
                                 text=True, capture_output=True)
        assert applied.returncode == 0, applied.stderr
        assert prediction["model_patch"].startswith("diff --git a/")


def test_one_arm_is_one_file_named_as_asked(tmp_path, cache_dir, monkeypatch, capsys):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    run = tmp_path / "run"
    assert main(["run", "--tasks", "sum_tree", "--out", str(run), "-j", "1"]) == 0
    out = tmp_path / "preds.json"
    assert main(["export", "preds", str(run), "--out", str(out)]) == 0
    assert [p["instance_id"] for p in json.loads(out.read_text())] == ["sum_tree"]
    assert f"1 prediction(s) written to {out}" in capsys.readouterr().out
