"""`minidebug synth`: each modifier on a snippet (only the changed code differs), and tasks made from a small
repository built here: they pass `check`, are distinct, say nothing of the fix, and come out the same for a seed."""

import json
import subprocess
import sys
import textwrap

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytest.importorskip("libcst")

from minidebug.run.cli import main  # noqa: E402
from minidebug.sandbox.choose import resolve  # noqa: E402
from minidebug.store.cache import prepare  # noqa: E402
from minidebug.synth.build import installs_import_hooks, synthesize, unified_diff  # noqa: E402
from minidebug.synth.coverage import CoverageMap  # noqa: E402
from minidebug.synth.modifiers import MODIFIERS, mutations  # noqa: E402
from minidebug.synth.statement import StatementModel, model_statement, problem_statement, source_of_test  # noqa: E402
from minidebug.synth.validate import (  # noqa: E402
    RunReport,
    Scratch,
    TestOutcome as Outcome,  # noqa: E402
    judge,
)
from minidebug.tasks.task import load_task  # noqa: E402

from ..chat_server import completion  # noqa: E402

SNIPPET = textwrap.dedent('''\
    import math


    class Basket(Container):   # a comment that must survive
        """A basket."""

        def total(self, prices, start=0):
            """Sum of prices."""
            result = start  # running
            for price in prices:
                if price is None or price < 0:
                    continue
                result += price * 2
            if result > self.limit:
                result = self.limit
            else:
                result = result - 1
            label = str(result)
            count = len(prices)
            return label, count

        def empty(self):
            return   []
    ''')

# What each modifier's first mutation of SNIPPET changes: the original line, and the line it becomes
# (None: the lines are removed).
EXPECTED = {
    "flip_comparison": ("        if price is None or price < 0:", "        if price is not None or price < 0:"),
    "flip_boolean": ("        if price is None or price < 0:", "        if price is None and price < 0:"),
    "flip_arithmetic": ("        result += price * 2", "        result -= price * 2"),
    "invert_if_else": ("            result = self.limit", None),
    "remove_loop": ("        for price in prices:", None),
    "remove_conditional": ("            if price is None or price < 0:", None),
    "remove_assignment": ("        result = start  # running", None),
    "remove_wrapper": ("        label = str(result)", "        label = result"),
    "shuffle_lines": ("        label = str(result)", "        count = len(prices)"),
    "change_constant": ("    def total(self, prices, start=0):", "    def total(self, prices, start=1):"),
    "drop_base_class": ("class Basket(Container):   # a comment that must survive",
                        "class Basket:   # a comment that must survive"),
    "drop_method": ("    def total(self, prices, start=0):", None),
}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(MODIFIERS))
def test_each_modifier_changes_its_site_and_keeps_every_other_line(name):
    found = list(mutations("basket.py", SNIPPET, [name]))
    assert found, name
    first = found[0]
    before, after = SNIPPET.splitlines(), first.source.splitlines()
    start, end = first.lines
    # Every line outside the changed ones is the same, formatting and comments included.
    below = len(before) - end
    assert before[:start - 1] == after[:start - 1] and before[end:] == after[len(after) - below:]
    old, new = EXPECTED[name]
    assert old.strip() in [line.strip() for line in before[start - 1:end]]
    changed = [line.strip() for line in after[first.buggy_lines[0] - 1:first.buggy_lines[1]]]
    if new is not None:
        assert new.strip() in changed
    elif name == "invert_if_else":  # the branches trade places: the condition and the `else:` stay
        assert changed == ["result = result - 1", "else:", "result = self.limit"]
    else:
        assert len(after) < len(before)
    compile(first.source, "basket.py", "exec")
    assert first.function == ("Basket" if name in ("drop_base_class", "drop_method") else "Basket.total")


@pytest.mark.unit
def test_sites_are_only_inside_functions_and_unknown_modifiers_are_named():
    module_level = "LIMIT = 3\nif LIMIT > 2:\n    LIMIT = 2\n"
    assert list(mutations("m.py", module_level)) == []
    with pytest.raises(Exception, match="unknown modifier"):
        list(mutations("m.py", module_level, ["flip_everything"]))


@pytest.mark.unit
def test_files_that_install_import_hooks_give_no_candidates():
    # A fix of such a file puts the project's finder on sys.meta_path from a changed file, which an eval flags.
    assert installs_import_hooks("import sys\n\nsys.meta_path.append(TlzLoader())\n")
    assert installs_import_hooks("import sys\nsys.path_hooks.insert(0, hook)\n")
    assert installs_import_hooks("import builtins\nbuiltins.__import__ = traced\n")
    assert not installs_import_hooks(SNIPPET) and not installs_import_hooks("import sys\nprint(sys.path)\n")
    assert not installs_import_hooks("SIGNATURES = dict(__import__=[lambda name: None])\n")  # toolz


@pytest.mark.unit
def test_the_patch_applies_with_git_and_its_reverse_is_the_fix(tmp_path):
    (tmp_path / "m.py").write_text("def f(x):\n    return x + 1")  # no newline at the end
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    bug = unified_diff("m.py", "def f(x):\n    return x + 1", "def f(x):\n    return x - 1")
    (tmp_path / "bug.patch").write_text(bug)
    subprocess.run(["git", "apply", "bug.patch"], cwd=tmp_path, check=True)
    assert (tmp_path / "m.py").read_text() == "def f(x):\n    return x - 1"


@pytest.mark.unit
def test_the_statement_names_failing_tests_and_never_quotes_the_changed_line():
    failing = {"tests/test_a.py::test_total": Outcome("failed", "AssertionError", "assert 7 == 8"),
               "tests/test_a.py::test_label": Outcome("failed", "TypeError", "bad: result -= price * 2")}
    text = problem_statement(failing, ["        result -= price * 2", "        result += price * 2"], "k")
    assert "tests/test_a.py::test_total" in text and "assert 7 == 8" in text
    assert "TypeError" in text and "price * 2" not in text
    assert text == problem_statement(failing, ["result -= price * 2"], "k")


TEST_MODULE = textwrap.dedent('''\
    import pytest


    class TestBasket:
        @pytest.mark.parametrize("n", [1, 2])
        def test_total(self, n):
            assert total([7] * n) == 8 * n
    ''')


@pytest.mark.unit
def test_a_model_writes_the_statement_and_an_answer_that_quotes_the_change_or_names_the_modifier_is_not_used(
        server):
    failing = {"tests/test_a.py::TestBasket::test_total[1]": Outcome("failed", "AssertionError", "assert 7 == 8"),
               "tests/test_a.py::test_label": Outcome("failed", "TypeError", "bad: result -= price * 2")}
    forbidden = ["        result -= price * 2", "        result += price * 2", "    else:"]
    banned = ["shop/core.py", "core.py", "flip_arithmetic"]
    sources = {"tests/test_a.py::TestBasket::test_total[1]":
               source_of_test(TEST_MODULE, "tests/test_a.py::TestBasket::test_total[1]")}
    assert sources["tests/test_a.py::TestBasket::test_total[1]"].splitlines()[0].strip().startswith("@pytest")
    issue = "Totals come out one short per item: `total([7])` gives 7, I expected 8.\n\n```python\nelse:\n```"
    chat = server(completion(content="The culprit is `result -= price * 2` in the loop."),
                  completion(content=issue))
    client = StatementModel("scripted", base_url=chat.url).client()
    written = model_statement(client, failing, forbidden, banned, "k", sources)
    assert written.by == "model" and written.text.startswith(issue)
    assert "`tests/test_a.py::test_label`" in written.text  # the failing tests are listed after the issue
    # The model is shown the failing tests, their symptoms and sources, never the change.
    prompt = chat.requests[0]["body"]["messages"][1]["content"]
    assert "tests/test_a.py::test_label" in prompt and "assert total([7] * n) == 8 * n" in prompt
    assert "price * 2" not in prompt and "TypeError" in prompt
    assert len(chat.requests) == 2

    chat = server(completion(content="Looks like a flip arithmetic bug."),
                  completion(content="Something in core.py adds where it should subtract."))
    written = model_statement(StatementModel("scripted", base_url=chat.url).client(), failing, forbidden, banned,
                              "k", sources)
    assert written.by == "template (it named 'core.py')"
    assert written.text == problem_statement(failing, forbidden, "k")
    chat = server((500, {"error": {"message": "down"}}))
    written = model_statement(StatementModel("scripted", base_url=chat.url, max_retries=0).client(), failing,
                              forbidden, banned, "k", sources)
    assert written.by.startswith("template (the model did not answer")


@pytest.mark.unit
def test_the_tests_wanted_are_given_by_file_where_all_of_a_files_counted_tests_are():
    from minidebug.synth.build import _Plan

    plan = _Plan(frozenset(), frozenset(), 10, 10, False, {"tests/test_a.py": 2, "tests/test_b.py": 3})
    assert plan.arguments(["tests/test_b.py::test_2", "tests/test_a.py::test_1", "tests/test_a.py::T::test_2",
                           "tests/test_b.py::test_1"]) == [
        "tests/test_a.py", "tests/test_b.py::test_1", "tests/test_b.py::test_2"]
    assert plan.arguments([]) == []


@pytest.mark.unit
def test_the_coverage_map_finds_the_tests_that_reach_a_span_and_judge_drops_name_errors():
    run = RunReport(reached={"t1": [("a.py", 3), ("a.py", 10)], "t2": [("a.py", 10)], "t3": [("b.py", 1)]})
    cover = CoverageMap.from_run(run, {"t1", "t2", "t3"})
    assert cover.tests_reaching("a.py", (1, 5)) == {"t1"}
    assert cover.tests_reaching("a.py", (8, 12)) == {"t1", "t2"}
    assert cover.tests_reaching("a.py") == {"t1", "t2"} and cover.files() == ["a.py", "b.py"]
    name_only = RunReport(tests={"t1": Outcome("failed", "AttributeError", "x")}, exitstatus=1)
    assert judge(name_only, {"t1"}, set(), False).reason == "only AttributeError/NameError"
    assert judge(name_only, {"t1"}, set(), True).reason == ""
    assert judge(RunReport(tests={"t1": Outcome("passed")}, exitstatus=0), {"t1"}, set(), False).reason == \
        "no test fails"
    assert judge(RunReport(timed_out=True), {"t1"}, set(), False).reason == "timeout"


# -- a small repository ------------------------------------------------------------------------------------

SHOP = '''\
"""Prices, discounts and baskets."""

import warnings


class Priced:
    def price_of(self, item):
        return self.prices.get(item, 0)


class Basket(Priced):
    def __init__(self, prices):
        self.prices = prices
        self.items = []

    def add(self, item, count=1):
        if count <= 0:
            raise ValueError("count must be positive")
        for _ in range(count):
            self.items.append(item)
        return self

    def total(self):
        result = 0
        for item in self.items:
            result += self.price_of(item)
        return result

    def discounted(self, percent):
        if percent > 50:
            percent = 50
        return round(self.total() * (100 - percent) / 100, 2)


def legacy_total(basket):
    warnings.warn("legacy_total is deprecated: use Basket.total", DeprecationWarning, stacklevel=2)
    return basket.total()


def cheapest(prices):
    best = None
    for item, price in sorted(prices.items()):
        if best is None or price < prices[best]:
            best = item
    return best
'''

# Three test files: a candidate that the tests of one reach is tried by those tests alone, by node id; one that
# tests of two or more reach, by the whole suite at once.
TESTS = {
    "test_basket.py": '''\
import pytest

from shop.core import Basket, legacy_total

PRICES = {"apple": 3, "pear": 5, "fig": 2}


def test_total():
    assert Basket(PRICES).add("apple", 2).add("pear").total() == 11


def test_count_must_be_positive():
    with pytest.raises(ValueError):
        Basket(PRICES).add("fig", 0)


def test_unknown_items_cost_nothing():
    assert Basket(PRICES).add("kiwi").total() == 0


def test_legacy_total_warns():  # `warnings` writes its registry into this module's namespace while it runs
    with pytest.warns(DeprecationWarning):
        assert legacy_total(Basket(PRICES).add("fig")) == 2
''',
    "test_discount.py": '''\
from shop.core import Basket

PRICES = {"apple": 3, "pear": 5, "fig": 2}


def test_discount_is_capped():
    assert Basket(PRICES).add("pear", 2).discounted(80) == 5.0


def test_discount():
    assert Basket(PRICES).add("pear", 2).discounted(10) == 9.0
''',
    "test_cheapest.py": '''\
import time

import pytest

from shop.core import cheapest

PRICES = {"apple": 3, "pear": 5, "fig": 2}


def test_cheapest():
    assert cheapest(PRICES) == "fig"


@pytest.mark.parametrize("stamp", [str(time.time_ns())])  # its id changes from run to run
def test_stamped(stamp):
    assert stamp
''',
}


BENCH = '''\
from shop.core import Basket, cheapest


def test_many_baskets():
    for _ in range(1000):
        assert Basket({"fig": 2}).add("fig", 3).total() == 6 and cheapest({"fig": 2}) == "fig"
'''


def git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def shop(tmp_path):
    repo = tmp_path / "shop-repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "shop" / "__init__.py").write_text("")
    (repo / "shop" / "core.py").write_text(SHOP)
    for name, text in TESTS.items():
        (repo / "tests" / name).write_text(text)
    # Named like a test but outside the testpaths the project declares: a plain `pytest` never runs it, nor does
    # synth (toolz's bench/test_*.py are benchmarks).
    (repo / "bench").mkdir()
    (repo / "bench" / "test_speed.py").write_text(BENCH)
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "shop")
    return repo


def tasks_of(out):
    return sorted(p for p in out.iterdir() if (p / "task.toml").is_file())


def test_synth_writes_distinct_tasks_that_pass_check_and_a_seed_gives_the_same_ones(shop, tmp_path, cache_dir,
                                                                                     monkeypatch, capsys):
    asked, run = [], Scratch.run

    def recorded(self, tests=None, timeout=60, trace=False):
        asked.append(tests)
        return run(self, tests, timeout, trace)

    monkeypatch.setattr(Scratch, "run", recorded)
    out = tmp_path / "tasks"
    report = synthesize(shop, out, 4, seed=3, jobs=2, cache_dir=cache_dir, sandbox="auto")
    monkeypatch.setattr(Scratch, "run", run)
    # A file whose counted tests are all wanted (test_discount.py's two, say) is given whole, not by node id:
    # its uncounted test_stamped runs too, and is not judged.
    given = [argument for tests in asked if tests for argument in tests]
    assert "tests/test_discount.py" in given and not any(a.startswith("tests/test_discount.py::") for a in given)
    tasks = tasks_of(out)
    assert len(tasks) == len(report.kept) == 4, report.summary(out)
    assert report.tried >= 4 and report.tried == 4 + sum(report.dropped.values())
    patches, failing_sets = set(), set()
    for task in tasks:
        spec = tomllib.loads((task / "task.toml").read_text())
        meta = json.loads((task / "synth.json").read_text())
        bug = (task / "bug.patch").read_text()
        assert spec["source"]["test_patch"] == "bug.patch"
        assert spec["readonly"] == ["bench/test_speed.py"] + [f"tests/{name}" for name in sorted(TESTS)]
        assert spec["eval"] == "python -m pytest -rA tests"  # the declared testpaths, not bench/
        assert spec["entrypoint"] == "python -m pytest -rA " + " ".join(spec["fail_to_pass"])
        assert spec["fail_to_pass"] and set(spec["fail_to_pass"]).isdisjoint(spec["pass_to_pass"])
        assert len(spec["fail_to_pass"]) + len(spec["pass_to_pass"]) == 7
        assert meta["failing_tests"] == len(spec["fail_to_pass"])
        assert meta["modifier"] in MODIFIERS and meta["path"] == "shop/core.py"
        assert isinstance(meta["traceback_reaches_change"], bool)
        assert meta["needs_runtime_information"] is not meta["traceback_reaches_change"]
        # The statement says which tests fail, not what changed nor how.
        changed = [line[1:].strip() for line in bug.splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()]
        assert any(test.split("::")[-1] in spec["description"] for test in spec["fail_to_pass"])
        assert not any(line in spec["description"] for line in changed)
        assert meta["modifier"] not in spec["description"] and "core.py" not in spec["description"]
        patches.add(bug)
        failing_sets.add((meta["function"], tuple(spec["fail_to_pass"])))
    assert len(patches) == len(failing_sets) == 4  # distinct
    summary = json.loads((out / ".synth-summary.json").read_text())
    assert summary["tried"] == report.tried and summary["kept"] == [task.name for task in report.kept]
    assert summary["commit"] == git(shop, "rev-parse", "HEAD") and summary["counted_tests"] == 7

    # A test whose id changes from run to run is never counted; judged against the counted tests, a whole-suite
    # run at the commit shows no bug (against one run's passing tests, the next run "misses" the stamped one).
    assert len(report.counted) == 7 and not any("test_stamped" in test for test in report.counted)
    scratch = Scratch(shop, "HEAD", report.venv, report.pytest_args)
    try:
        first, again = scratch.run(), scratch.run()
    finally:
        scratch.close()
    assert judge(again, set(report.counted), set(report.baseline_errors), False).reason == "no test fails"
    assert judge(again, first.passing(), set(), False).reason == "collection error"

    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    assert main(["check", *map(str, tasks), "--sandbox", "none"]) == 0, capsys.readouterr().out
    capsys.readouterr()

    again = tmp_path / "again"
    synthesize(shop, again, 4, seed=3, jobs=1, cache_dir=cache_dir)
    assert [t.name for t in tasks_of(again)] == [t.name for t in tasks] and all(
        (a / name).read_text() == (b / name).read_text()
        for a, b in zip(tasks_of(again), tasks) for name in ("task.toml", "bug.patch", "solution.patch"))


def test_the_cli_writes_tasks_whose_model_statements_never_quote_the_change_and_fails_on_a_folder_that_is_no_clone(
        shop, tmp_path, cache_dir, monkeypatch, capsys, server):
    def answer(body):  # each task's first answer quotes the whole module (whatever changed), its second does not
        test = body["messages"][-1]["content"].split("\n")[2].split("::")[-1].split(":")[0]
        if len(chat.requests) % 2:
            return completion(content=f"{test} breaks; here is the module:\n```python\n{SHOP}```")
        return completion(content=f"Since upgrading, {test} gives me a wrong result.")

    chat = server(answer)
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    import signal

    handlers = [signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)]
    out = tmp_path / "tasks"
    assert main(["synth", str(shop), "--out", str(out), "--max", "2", "--seed", "1", "-j", "1",
                 "--modifiers", "flip_comparison,change_constant", "--model", "scripted", "--base-url", chat.url]) == 0
    assert [signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)] == handlers  # given back
    text, err = capsys.readouterr()
    assert "kept" in text and "tried" in text and f"2 task(s) written to {out}" in text
    assert "tried 1 of " in err and "(--max 2); ETA" in err  # stderr is no terminal: plain lines
    tasks = tasks_of(out)
    assert {json.loads((t / "synth.json").read_text())["modifier"] for t in tasks} <= {
        "flip_comparison", "change_constant"}
    assert len(tasks) == 2 and len(chat.requests) == 4
    for task in tasks:
        spec = tomllib.loads((task / "task.toml").read_text())
        meta = json.loads((task / "synth.json").read_text())
        changed = [line[1:].strip() for line in (task / "bug.patch").read_text().splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()]
        assert meta["statement"] == "model" and "gives me a wrong result" in spec["description"]
        assert not any(line in spec["description"] for line in changed)
        assert "core.py" not in spec["description"] and not any(
            name in spec["description"] for name in (meta["modifier"], meta["modifier"].replace("_", " ")))
        # No request showed the model a changed line.
        assert not any(line in json.dumps(r["body"]["messages"]) for r in chat.requests for line in changed)
    assert main(["synth", str(tmp_path / "nowhere"), "--out", str(out), "--max", "1"]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_candidate_runs_are_confined_as_an_episodes_programs_are(tmp_path, calc_task, cache_dir):
    kind = resolve("auto")
    if kind is None:
        pytest.skip("neither bubblewrap nor Landlock works here")
    venv = prepare(load_task(calc_task), cache_dir).venv
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_escape.py").write_text(textwrap.dedent(f'''\
        from pathlib import Path


        def test_writes_outside_its_tree():
            Path({str(outside)!r}, "escaped").write_text("x")


        def test_writes_its_home():
            (Path.home() / "note").write_text("x")
        '''))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "escape")
    scratch = Scratch(repo, "HEAD", venv, ["tests"], sandbox=kind)
    try:
        report = scratch.run()
    finally:
        scratch.close()
    assert report.tests["tests/test_escape.py::test_writes_its_home"].outcome == "passed", report.output
    escaped = report.tests["tests/test_escape.py::test_writes_outside_its_tree"]
    assert escaped.outcome == "failed" and escaped.type in ("PermissionError", "FileNotFoundError", "OSError")
    assert not (outside / "escaped").exists()


def _task_files(out):
    return {task.name: {name: (task / name).read_text() for name in ("task.toml", "bug.patch", "solution.patch")}
            for task in tasks_of(out)}


def test_a_stopped_run_goes_on_where_it_stopped_and_keeps_the_tasks_of_a_run_never_stopped(
        shop, tmp_path, cache_dir, monkeypatch, capsys):
    import os
    import signal
    import time

    from minidebug.synth import build
    from minidebug.synth.journal import JOURNAL
    from minidebug.synth.validate import SynthError

    whole = tmp_path / "whole"
    never_stopped = synthesize(shop, whole, 4, seed=3, jobs=2, cache_dir=cache_dir)
    assert len(never_stopped.kept) == 4 and never_stopped.resumed == 0

    # The command line, stopped by SIGTERM (as by Ctrl-C) once a candidate is judged.
    out = tmp_path / "stopped"
    journal = out / JOURNAL
    command = subprocess.Popen([sys.executable, "-m", "minidebug", "synth", str(shop), "--out", str(out), "--max", "4",
                                "--seed", "3", "-j", "2"], env={**os.environ, "MINIDEBUG_CACHE": str(cache_dir)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and command.poll() is None and not (
            journal.is_file() and len(journal.read_text().splitlines()) >= 2):
        time.sleep(0.05)
    command.send_signal(signal.SIGTERM)
    stdout, stderr = command.communicate(timeout=240)
    assert command.returncode == 130, stdout + stderr
    assert "minidebug: interrupted" in stderr
    judged = {json.loads(line)["key"] for line in journal.read_text().splitlines()[1:]}
    assert 1 <= len(judged) < never_stopped.tried
    with journal.open("a") as file:  # a verdict a kill cut short is dropped
        file.write('{"key": "shop/core.py:0123')
    for task in tasks_of(out):  # tasks cut short (synth.json is written last) are written again from the journal
        (task / "synth.json").unlink()

    # Another seed, other modifiers or another clone for the folder: an error, nothing mixed.
    with pytest.raises(SynthError, match=r"seed 3 there, 4 now"):
        synthesize(shop, out, 4, seed=4, cache_dir=cache_dir)
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    capsys.readouterr()
    assert main(["synth", str(shop), "--out", str(out), "--max", "4", "--seed", "3",
                 "--modifiers", "flip_comparison"]) == 2
    assert "modifiers" in capsys.readouterr().err

    # Run again: what was judged is not run again, and the tasks are those of the run never stopped.
    ran, judge_candidate = [], build.judge_candidate

    def counted(scratch, candidate, plan):
        ran.append(build._key(candidate))
        return judge_candidate(scratch, candidate, plan)

    monkeypatch.setattr(build, "judge_candidate", counted)
    lines = []
    again = synthesize(shop, out, 4, seed=3, jobs=2, cache_dir=cache_dir, progress=lines.append)
    assert not judged & set(ran) and again.resumed >= 1
    assert any(line.startswith("baseline of") for line in lines)  # the baseline, measured once
    assert _task_files(out) == _task_files(whole)
    assert [t.name for t in again.kept] == [t.name for t in never_stopped.kept]
    assert again.tried == never_stopped.tried and again.dropped == never_stopped.dropped
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert any(entry.get("passing") == "the other counted tests" for entry in entries if not entry["reason"])

    # A third run with more room goes on from there: the four tasks count, no candidate runs twice.
    ran.clear()
    judged = {json.loads(line)["key"] for line in journal.read_text().splitlines()[1:] if line.endswith("}")}
    more = synthesize(shop, out, 5, seed=3, jobs=2, cache_dir=cache_dir)
    assert more.resumed >= never_stopped.tried and len(more.kept) == 5
    assert [t.name for t in more.kept[:4]] == [t.name for t in never_stopped.kept]
    assert not judged & set(ran) and len(ran) >= more.tried - more.resumed


def test_the_ray_backend_keeps_the_tasks_of_the_process_backend_and_ray_is_imported_only_when_asked_for(
        shop, tmp_path, cache_dir):
    import os
    import shutil
    import tempfile
    from pathlib import Path

    pytest.importorskip("ray", reason="the [ray] extra is part of the test extra; install it")
    env = {**os.environ, "MINIDEBUG_CACHE": str(cache_dir)}
    # The process backend, in an interpreter that then says whether anything imported Ray.
    with_processes = subprocess.run([sys.executable, "-c", (
        "import sys; from minidebug.run.cli import main; "
        f"code = main(['synth', {str(shop)!r}, '--out', {str(tmp_path / 'processes')!r}, '--max', '3', "
        "'--seed', '3', '-j', '2']); print('ray' in sys.modules); sys.exit(code)")],
        env=env, capture_output=True, text=True, timeout=300)
    assert with_processes.returncode == 0, with_processes.stdout + with_processes.stderr
    assert with_processes.stdout.strip().endswith("False")
    tmp = Path(tempfile.mkdtemp(prefix="md-ray-", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    try:
        with_ray = subprocess.run([sys.executable, "-m", "minidebug", "synth", str(shop), "--out",
                                   str(tmp_path / "ray"), "--max", "3", "--seed", "3", "-j", "2", "--backend", "ray",
                                   "-v"], env={**env, "TMPDIR": str(tmp)}, capture_output=True, text=True, timeout=300)
        left = [p.name for p in tmp.iterdir() if p.name.startswith("minidebug-")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert with_ray.returncode == 0, with_ray.stdout + with_ray.stderr
    assert left == []  # each actor's scratch tree is removed
    assert len(tasks_of(tmp_path / "ray")) == 3 and _task_files(tmp_path / "ray") == _task_files(
        tmp_path / "processes")
    summaries = [json.loads((tmp_path / name / ".synth-summary.json").read_text()) for name in ("ray", "processes")]
    assert [(s["tried"], s["kept"], s["dropped"]) for s in summaries][0] == \
        [(s["tried"], s["kept"], s["dropped"]) for s in summaries][1]


@pytest.mark.unit
def test_the_progress_is_a_bar_on_a_terminal_and_plain_lines_otherwise():
    import io
    from collections import Counter
    from pathlib import Path

    from minidebug.run.synth_progress import SynthProgress
    from minidebug.synth.build import SynthReport

    def report(tried, kept, dropped):
        return SynthReport(reachable=40, tried=tried, kept=[Path(f"t{i}") for i in range(kept)],
                           dropped=Counter({"no test fails": dropped} if dropped else {}))

    plain = io.StringIO()
    with SynthProgress(10, plain, terminal=False) as progress:
        progress(report(0, 0, 0))
        progress(report(1, 1, 0))
        progress.line("kept t0")
        progress(report(2, 1, 1))
    lines = plain.getvalue().splitlines()
    assert lines[0].startswith("tried 1 of 40, kept 1, dropped 0 (--max 10); ETA ") and lines[1] == "kept t0"
    assert lines[2].startswith("tried 2 of 40, kept 1, dropped 1") and len(lines) == 3
    assert SynthProgress(10, io.StringIO(), terminal=False).eta(report(4, 2, 2), 8.0) == "0:32"  # 16 more at 2 s

    bar = io.StringIO()
    with SynthProgress(10, bar, terminal=True) as progress:
        progress(report(0, 0, 0))
        progress(report(3, 2, 1))
    drawn = bar.getvalue()
    assert "\x1b[" in drawn and "tried 3 of 40, kept 2, dropped 1" in drawn and "2/10" in drawn and "ETA" in drawn


def test_a_scratch_tree_a_killed_synth_left_is_removed_by_gc(tmp_path):
    """A scratch tree is named with its maker, so `minidebug gc` removes what a killed run left."""
    from minidebug.run.cleanup import collect

    temp = tmp_path / "temp"
    temp.mkdir()
    made = subprocess.run([sys.executable, "-c", "import sys; from minidebug.sandbox.reaper import owned_temp_dir; "
                           "from minidebug.synth.validate import SCRATCH_PREFIX; "
                           f"print(owned_temp_dir(SCRATCH_PREFIX, __import__('pathlib').Path({str(temp)!r})))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (temp / "minidebug-synth-not-ours").mkdir()  # no owner file: not minidebug's
    removed = collect(temp_dir=temp, cache_dir=tmp_path / "cache")
    assert made in removed
    assert sorted(path.name for path in temp.iterdir()) == ["minidebug-synth-not-ours"]
