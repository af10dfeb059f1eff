"""Test ids with every character pytest lets a parametrised id or a test's name have (brackets, nested and
unbalanced; spaces and tabs; `::`; quotes and backslashes; non-ASCII names, and ids pytest escapes) survive
import, eval and scoring, whole or cut at a space by SWE-bench's log parser."""

import json

from minidebug.run.cli import main
from minidebug.scoring.ids import is_cut, match_outcomes
from minidebug.taskcheck.pytest_output import PytestOutput
from minidebug.tasks.task import load_task
from tests.tasks.test_swebench_import import clones, instance  # noqa: F401 (clones is a fixture)

PARAMS = ["a[b]", "x y", "ü", "a::b", "bits[OFFSET(0)]", "bits[OFFSET(0)] cut", "tab\there", "[", "]", "quote'\"",
          "back\\slash", "a/b", "é ü"]
TEST_FILE = f"""\
import pytest
from mathlib.ops import double

PARAMS = {PARAMS!r}


@pytest.mark.parametrize("v", PARAMS, ids=PARAMS)
def test_p(v):
    assert double(4) == 8


def test_ünïcode():
    assert double(4) == 8


class TestC:
    @pytest.mark.parametrize("v", ["a::b", "c d"])
    def test_m(self, v):
        assert double(4) == 8
"""
TEST_PATCH = ("--- /dev/null\n+++ b/tests/test_ids.py\n"
              f"@@ -0,0 +1,{TEST_FILE.count(chr(10))} @@\n" + "".join(f"+{line}\n" for line in TEST_FILE.splitlines()))
F = "tests/test_ids.py::"
# As pytest names them (non-ASCII and tabs escaped in parameters, not in names), in full and cut at a space
WHOLE = [F + "test_p[a[b]]", F + "test_p[x y]", F + "test_p[\\xfc]", F + "test_p[a::b]", F + "test_p[bits[OFFSET(0)]]",
         F + "test_p[bits[OFFSET(0)] cut]", F + "test_p[tab\\there]", F + "test_p[[]", F + "test_p[]]",
         F + "test_p[quote'\"]", F + "test_p[back\\\\slash]", F + "test_p[a/b]", F + "test_p[\\xe9 \\xfc]",
         F + "test_ünïcode", F + "TestC::test_m[a::b]", F + "TestC::test_m[c d]"]
CUT = [F + "test_p[x", F + "test_p[bits[OFFSET(0)]", F + "test_p[\\xe9", F + "TestC::test_m[c"]


def test_ids_with_any_character_import_eval_and_score(clones, tmp_path, cache_dir, monkeypatch, capsys):  # noqa: F811
    repos, commit = clones
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    instances = tmp_path / "instances.json"
    instances.write_text(json.dumps([
        instance(commit, "example__mathlib-20", test_patch=TEST_PATCH, FAIL_TO_PASS=WHOLE),
        instance(commit, "example__mathlib-21", test_patch=TEST_PATCH, FAIL_TO_PASS=CUT)]))
    assert main(["import", "swebench", str(instances), "--repos", str(repos), "--out", str(tmp_path / "t")]) == 0
    assert "skipped" not in capsys.readouterr().out
    tasks = [tmp_path / "t" / "example__mathlib-20", tmp_path / "t" / "example__mathlib-21"]
    assert load_task(tasks[0]).spec.fail_to_pass == WHOLE and load_task(tasks[1]).spec.fail_to_pass == CUT

    assert main(["validate", *map(str, tasks), "--sandbox", "none", "--json"]) == 0, capsys.readouterr().out
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["base_failing"], r["gold_f2p_passing"], r["gold_p2p_passing"]) for r in rows] == [
        (len(WHOLE), len(WHOLE), 1), (len(CUT), len(CUT), 1)]


def test_an_id_cut_after_a_closing_bracket_is_cut():
    """sqlfluff's `test_parse[ExpressionSegment-bits[OFFSET(0)] ...]`, cut at its space, ends with `]`."""
    outcomes = {"t.py::test_p[bits[OFFSET(0)] cut]": "passed", "t.py::test_p[bits[OFFSET(0)]]": "failed",
                "t.py::test_p[[]": "passed"}
    assert is_cut("t.py::test_p[bits[OFFSET(0)]") and not is_cut("t.py::test_p[bits[OFFSET(0)]]")
    tests, matched = match_outcomes(["t.py::test_p[bits[OFFSET(0)]", "t.py::test_p[["], outcomes)
    assert tests == {"t.py::test_p[bits[OFFSET(0)]": "passed", "t.py::test_p[[": "did not run"}
    assert matched == {"t.py::test_p[bits[OFFSET(0)] cut]"}


def test_the_first_error_line_of_a_test_whose_id_holds_colons_or_is_cut():
    output = PytestOutput.read("\n".join([
        "=================================== FAILURES ===================================",
        "_____________________________ TestC.test_m[a::b] ______________________________",
        "E       AssertionError: colons", "_____________________________ test_p[xy] ______________________________",
        "E       AssertionError: not x", "_____________________________ test_p[x y] ______________________________",
        "E       AssertionError: x y"]))
    assert output.first_line("t.py::TestC::test_m[a::b]") == "AssertionError: colons"
    assert output.first_line("t.py::test_p[x") == "AssertionError: x y"  # not test_p[xy], which is not cut to it
