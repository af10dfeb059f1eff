"""Reports of real runs, looked at in a real headless Chromium the way a person would."""

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("jinja2", reason="the [report] extra is part of the test extra; install it")
pytest.importorskip("matplotlib", reason="the [report] extra is part of the test extra; install it")

from minidebug.agents.oracle import edits_for  # noqa: E402
from minidebug.core.trajectory import (  # noqa: E402
    Action,
    HeaderRecord,
    ResultRecord,
    StepInfo,
    StepRecord,
    TrajectoryWriter,
    read_trajectory,
)
from minidebug.report import build_report, load, text_summary  # noqa: E402
from minidebug.report.paired import MIN_PAIRS, bootstrap_interval, verdicts  # noqa: E402
from minidebug.run.cli import main  # noqa: E402
from minidebug.tasks.patch import parse_patch  # noqa: E402
from minidebug.tasks.task import load_task  # noqa: E402

from ..chat_server import completion  # noqa: E402
from .test_report_paired import OUTCOMES, SEEDS, differences, write_run  # noqa: E402

TASKS = ["sum_tree", "late_handlers", "shadowed_max"]
UNSOLVED = "shadowed_max"  # the scripted model gives up on this one
GIVING_UP = "giving-up"  # a model name under which the scripted model gives up on every task
STRATEGIES = ["rewrite", "debug", "debug-after-1"]
ARMS = ["scripted · debug", "scripted · debug-after-1", "scripted · rewrite"]  # the report's (alphabetical) order
ARTIFACTS = Path(__file__).parents[1] / "artifacts"


def scripted_model(body):
    """Fixes the bundled task named in the conversation with the oracle's edits, one call per answer; as soon
    as pdb is among its tools (from the start, or once unlocked) it looks at the code under pdb once; on
    UNSOLVED, or as the model GIVING_UP, it only runs eval and submits."""
    introduction = body["messages"][1]["content"]
    task = next(load_task(name) for name in TASKS if introduction.startswith(load_task(name).description.strip()))
    offered = {tool["function"]["name"] for tool in body["tools"]}
    called = [call["function"]["name"] for message in body["messages"] if message["role"] == "assistant"
              for call in message.get("tool_calls") or []]
    if "pdb" in offered and "pdb" not in called:
        return completion(("pdb", {"command": "l"}))
    plan = []
    if task.name != UNSOLVED and body["model"] != GIVING_UP:
        for file_patch in parse_patch(task.solution.read_text()):
            plan += [(call.name, dict(call.arguments)) for call in edits_for(file_patch, (task.repo / file_patch.old_path).read_text())]
    plan += [("eval", {}), ("submit", {})]
    done = sum(1 for name in called if name != "pdb")
    return completion(plan[min(done, len(plan) - 1)])


def scripted_run(out: Path, model: str, strategies: list[str]) -> Path:
    """A real run: the llm agent against the scripted model on a local HTTP endpoint."""
    pytest.importorskip("openai", reason="the [llm] extra is part of the test extra; install it")
    from ..chat_server import ChatServer

    chat = ChatServer(scripted_model)
    try:
        code = main(["run", "--tasks", *TASKS, "--agent", "llm", "--model", model, "--base-url", chat.url,
                     "--strategy", *strategies, "--out", str(out), "-j", "2"])
    finally:
        chat.close()
    assert code == 1  # UNSOLVED was not solved
    return out


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    """One real run of the scripted model under the three strategies."""
    return scripted_run(tmp_path_factory.mktemp("run") / "scripted", "scripted", STRATEGIES)


@pytest.fixture(scope="module")
def giving_up_run(tmp_path_factory):
    """A real run in which a model solves nothing, with and without the debugger."""
    return scripted_run(tmp_path_factory.mktemp("run") / "giving-up", GIVING_UP, ["rewrite", "debug"])


@pytest.fixture(scope="module")
def browser():
    pytest.importorskip("selenium", reason="selenium is part of the test extra; install it")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.fail("the report tests need a headless Chromium: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1800", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    yield session
    session.quit()


def test_the_run_records_what_the_report_needs(recorded_run):
    report = load([recorded_run])
    assert report.arms == ARMS
    assert len(report.episodes) == 9 and report.task_sets == ["bundled"]
    for arm in report.arms:
        row = report.table[(arm, "all")]
        assert (row.episodes, row.solved, row.suspicious) == (3, 2, 0)
    use = report.tool_use
    assert use["scripted · debug"]["pdb_solved"] == 1.0 and use["scripted · debug"]["pdb_unsolved"] == 1.0
    assert use["scripted · debug-after-1"]["unlocked"] == 2  # UNSOLVED never edits, so never unlocks
    assert use["scripted · debug-after-1"]["pdb_per_episode"] == pytest.approx(2 / 3)
    rewrite = use["scripted · rewrite"]
    assert not rewrite["available"] and rewrite["pdb_per_episode"] is None and rewrite["debugger_share"] is None
    for episode in report.episodes:  # the steps' seconds apart from the rest of the episode
        steps = [r for r in read_trajectory(recorded_run / f"{episode.name}.jsonl") if r.type == "step"]
        assert episode.step_seconds == pytest.approx(sum(step.seconds for step in steps))
        assert 0 < episode.step_seconds < episode.seconds
        assert episode.setup_seconds == pytest.approx(episode.seconds - episode.step_seconds)
    text = text_summary([recorded_run])
    assert ("scripted · debug − rewrite: +0.0 points, n = 3 pairs; solved 2/3 against 2/3; too few pairs (fewer "
            f"than {MIN_PAIRS}): too small a sample to tell, no interval") in text
    assert (f"    {UNSOLVED} · debug-after-1 − rewrite: +0.0 points, n = 1 pair; solved 0/1 against 0/1; "
            "too few pairs") in text
    assert "+0.0 to +0.0" not in text
    assert "67% (2/3)" in text and "n/a" in text


def test_paired_differences_of_a_real_run(recorded_run, giving_up_run, tmp_path):
    report = load([recorded_run, giving_up_run])
    found = {v.model: v for v in verdicts(report)}
    assert list(found) == [GIVING_UP, "scripted"]
    (giving_up,) = found[GIVING_UP].comparisons
    assert (giving_up.pairs, giving_up.solved, giving_up.baseline_solved, giving_up.difference) == (3, 0, 0, 0.0)
    scripted = found["scripted"].comparisons
    assert [(c.arm, c.baseline, c.pairs, c.solved, c.baseline_solved) for c in scripted] == [
        ("scripted · debug", "scripted · rewrite", 3, 2, 2), ("scripted · debug-after-1", "scripted · rewrite", 3, 2, 2)]
    assert [task for task, _ in found["scripted"].tasks] == [("bundled", task) for task in sorted(TASKS)]
    for (_, task), comparisons in found["scripted"].tasks:  # per task: one seed, so one pair, and no interval
        solved = int(task != UNSOLVED)
        assert [(c.arm, c.pairs, c.solved, c.baseline_solved, c.difference, c.low, c.no_interval)
                for c in comparisons] == [(c.arm, 1, solved, solved, 0.0, None, "too few pairs") for c in scripted]
    # without a rewrite arm there is nothing to compare with, and the report says so
    only_debug = tmp_path / "only-debug"
    only_debug.mkdir()
    for path in recorded_run.glob("*.llm.s0.jsonl"):
        shutil.copy(path, only_debug)
    (verdict,) = verdicts(load([only_debug]))
    assert verdict.comparisons == [] and verdict.missing == "no rewrite arm for scripted: nothing to compare with"


def shown(browser, element_id):
    """The element, once the page's script has shown it (a followed link's hashchange is handled after the click)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, 10).until(
        lambda driver: driver.find_element(By.ID, element_id) if driver.find_element(By.ID, element_id)
        .is_displayed() else False)


def console_errors(browser):
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def test_report_in_a_real_browser(recorded_run, browser, tmp_path):
    from selenium.webdriver.common.by import By

    out = tmp_path / "report.html"
    assert main(["report", str(recorded_run), "--out", str(out)]) == 0
    html = out.read_text()
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?(https?:)?//""", html)  # nothing to fetch
    browser.get(out.as_uri())
    assert browser.title.startswith("minidebug report")
    verdict = browser.find_element(By.ID, "verdict")  # the answer comes first
    assert verdict.location["y"] < browser.find_element(By.ID, "summary").location["y"]
    rows = verdict.find_elements(By.CSS_SELECTOR, "table.verdict tbody tr")
    assert [r.find_element(By.TAG_NAME, "th").text for r in rows] == [
        "scripted · debug − rewrite", "scripted · debug-after-1 − rewrite"]
    assert [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")][:5] == [
        "+0.0 points", "too few pairs", "n = 3", "2/3 (67%)", "2/3 (67%)"]
    assert [p.text for p in verdict.find_elements(By.CSS_SELECTOR, "p.small-sample")] == [
        f"too few pairs {arm} − rewrite: n = 3, fewer than {MIN_PAIRS}. The sample is too small to tell whether "
        "the arms differ; no interval is shown." for arm in ARMS[:2]]
    assert verdict.find_elements(By.CSS_SELECTOR, "#plot-differences svg")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.summary tbody tr")
    assert [r.find_element(By.TAG_NAME, "th").text for r in rows] == ARMS
    assert all("67% (2/3)" in r.text for r in rows)
    assert len(browser.find_elements(By.CSS_SELECTOR, "figure.plot svg")) == 4
    tool_rows = browser.find_elements(By.CSS_SELECTOR, "table.tool-use tbody tr")
    assert [td.text for td in tool_rows[2].find_elements(By.TAG_NAME, "td")][1:6] == ["no", "n/a", "n/a", "n/a", "n/a"]
    assert [td.text for td in tool_rows[1].find_elements(By.TAG_NAME, "td")][1:3] == ["unlocked in 2/3", "67%"]
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "report-summary.png"))

    task_rows = browser.find_elements(By.CSS_SELECTOR, "table.per-task tbody tr")
    assert [r.find_element(By.TAG_NAME, "th").text for r in task_rows] == sorted(TASKS)
    for row in task_rows:  # one labelled outcome per arm, in the arms' order
        expected = "unsolved" if row.find_element(By.TAG_NAME, "th").text == UNSOLVED else "solved"
        assert [a.text for a in row.find_elements(By.CSS_SELECTOR, "a.outcome")] == [
            f"{arm}: {expected}" for arm in ARMS]
    task_rows[sorted(TASKS).index("sum_tree")].find_element(By.LINK_TEXT, "side by side").click()
    columns = shown(browser, "episode").find_elements(By.CSS_SELECTOR, ".columns > section")
    assert [c.find_element(By.TAG_NAME, "h2").text for c in columns] == ARMS
    assert [len(c.find_elements(By.CSS_SELECTOR, "ol.timeline > li")) for c in columns] == [3, 3, 2]
    browser.execute_script("location.hash = '#summary'")
    shown(browser, "overview")

    rows = browser.find_elements(By.CSS_SELECTOR, "table.summary tbody tr")
    rows[0].find_element(By.TAG_NAME, "a").click()  # summary -> that arm's episodes
    assert browser.current_url.endswith("#arm-1")
    links = browser.find_elements(By.CSS_SELECTOR, "#arm-1 + table.episodes a")
    assert len(links) == 3
    solved_link = next(a for a in links if a.text.startswith("sum_tree"))
    solved_link.click()  # -> the episode page
    article = shown(browser, "episode")
    assert not browser.find_element(By.ID, "overview").is_displayed()
    assert article.find_element(By.TAG_NAME, "h1").text == "sum_tree.llm.s0"
    steps = article.find_elements(By.CSS_SELECTOR, "ol.timeline > li")
    assert [s.find_element(By.TAG_NAME, "code").text.split("(")[0] for s in steps] == ["pdb", "edit", "eval"]
    details = steps[1].find_element(By.TAG_NAME, "details")
    assert details.get_attribute("open") is None  # observations start collapsed
    details.find_element(By.TAG_NAME, "summary").click()
    assert details.find_elements(By.CSS_SELECTOR, "span.add") and details.find_elements(By.CSS_SELECTOR, "span.del")
    assert re.fullmatch(r"eval (\d+)/\1", steps[2].find_element(By.CSS_SELECTOR, ".badge").text)  # all passed
    assert article.find_elements(By.CSS_SELECTOR, "pre.diff span.add")  # the final diff, highlighted
    assert "problem statement" in article.text and "model answers" in article.text
    assert "seconds in steps" in article.text and "seconds outside steps (setup, agent)" in article.text
    browser.save_screenshot(str(ARTIFACTS / "report-episode.png"))

    article.find_element(By.LINK_TEXT, "← summary").click()  # back
    assert shown(browser, "overview") and not article.is_displayed()
    assert console_errors(browser) == []


def test_unlock_note_is_a_note_not_a_deleted_line(recorded_run, browser, tmp_path):
    from selenium.webdriver.common.by import By

    out = tmp_path / "report.html"
    report = build_report([recorded_run], out)
    episode = next(e for e in report.episodes if e.name == "sum_tree.llm.debug-after-1.s0")
    browser.get(out.as_uri() + f"#ep-{episode.key}")
    steps = shown(browser, "episode").find_elements(By.CSS_SELECTOR, "ol.timeline > li")
    edit = next(s for s in steps if s.find_element(By.TAG_NAME, "code").text.startswith("edit"))
    assert "unlocked pdb" in edit.text
    note = edit.find_element(By.CSS_SELECTOR, ".note.unlock")
    assert note.is_displayed() and note.text.startswith("[new tools available from now on]\n- pdb(")
    edit.find_element(By.TAG_NAME, "summary").click()
    deleted = " ".join(span.text for span in edit.find_elements(By.CSS_SELECTOR, "span.del"))
    assert "new tools" not in deleted and "- pdb(" not in deleted
    red, note_colour = (browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", e)
                        for e in (edit.find_element(By.CSS_SELECTOR, "span.del"), note))
    assert note_colour != red
    assert console_errors(browser) == []


def solve_rate_pixels(browser, page: Path, colours: list[str]) -> list[int]:
    """How many pixels of each colour the solve-rate plot shows outside its legend, in a real screenshot."""
    import io

    from PIL import Image
    from selenium.webdriver.common.by import By

    browser.get(page.as_uri())
    svg = browser.find_element(By.CSS_SELECTOR, "#plot-solve-rate svg")
    browser.execute_script("arguments[0].scrollIntoView()", svg)
    image = Image.open(io.BytesIO(svg.screenshot_as_png)).convert("RGB")
    legend = svg.find_element(By.CSS_SELECTOR, "g[id^='legend']").rect
    left, top = legend["x"] - svg.rect["x"], legend["y"] - svg.rect["y"]
    box = (left, top, left + legend["width"], top + legend["height"])
    data = image.tobytes()
    pixels = [tuple(data[i:i + 3]) for i in range(0, len(data), 3)]
    assert len(set(pixels)) > 2, "the plot's screenshot is blank"
    counts = []
    for colour in colours:
        target = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        counts.append(sum(1 for index, pixel in enumerate(pixels)
                          if max(abs(a - b) for a, b in zip(pixel, target)) <= 12
                          and not (box[0] <= index % image.width <= box[2] and box[1] <= index // image.width <= box[3])))
    return counts


def test_plots_show_zero_and_screenshots_catch_an_empty_plot(recorded_run, giving_up_run, browser, tmp_path):
    """Every arm shows in the solve-rate plot, a rate of 0 too; a plot with its bars gone fails the same check."""
    out = tmp_path / "report.html"
    report = build_report([recorded_run, giving_up_run], out)
    assert [report.table[(arm, "all")].solved for arm in report.arms] == [0, 0, 2, 2, 2]
    colours = [report.colour(arm) for arm in report.arms]
    assert len(set(colours)) == len(colours)
    html = out.read_text()
    for arm, colour in zip(report.arms, colours):  # one colour per arm, in every place that shows arms
        assert html.count(f'style="background: {colour}"') >= 4, arm
    for plot in ("solve-rate", "distributions", "tool-use"):
        figure = html.split(f'id="plot-{plot}"', 1)[1].split("</figure>", 1)[0]
        assert all(colour in figure for colour in colours), plot
    counts = solve_rate_pixels(browser, out, colours)
    assert all(count >= 20 for count in counts), dict(zip(report.arms, counts))  # 0 % shows as a stroke
    assert min(counts[2:]) > 5 * max(counts[:2])  # a bar of 67 % is far bigger than the stroke of 0 %
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "report-zero.png"))

    # the same page with the plot's bars and value labels removed, as an empty plot would be drawn
    import xml.etree.ElementTree as ElementTree

    start, end = html.index("<svg", html.index('id="plot-solve-rate"')), html.index("</svg>", html.index('id="plot-solve-rate"')) + 6
    ElementTree.register_namespace("", "http://www.w3.org/2000/svg")
    ElementTree.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    svg = ElementTree.fromstring(html[start:end])
    axes = svg.find(".//{*}g[@id='axes_1']")
    for child in list(axes):
        if child.get("id", "").startswith(("patch_", "LineCollection", "text_")) and child.get("id") != "patch_1":
            axes.remove(child)
    empty = tmp_path / "empty.html"
    empty.write_text(html[:start] + ElementTree.tostring(svg, encoding="unicode") + html[end:], encoding="utf-8")
    assert all(count < 20 for count in solve_rate_pixels(browser, empty, colours))
    assert console_errors(browser) == []


def test_two_runs_side_by_side(recorded_run, tmp_path, browser):
    from selenium.webdriver.common.by import By

    oracle = tmp_path / "oracle"
    assert main(["run", "--tasks", *TASKS, "--out", str(oracle), "-j", "2"]) == 0
    again = shutil.copytree(recorded_run, tmp_path / "scripted")  # the same model and strategies, a second run
    out = tmp_path / "both.html"
    report = build_report([recorded_run, oracle, again], out)
    assert report.runs == ["1:scripted", "2:oracle", "3:scripted"]
    assert report.arms == ["oracle · debug"] + [f"{arm} [{run}]" for arm in ARMS for run in ("1:scripted", "3:scripted")]
    browser.get(out.as_uri())
    verdict = browser.find_element(By.ID, "verdict")
    assert "no rewrite arm for oracle: nothing to compare with." in verdict.text
    header = browser.find_elements(By.CSS_SELECTOR, "table.per-task thead th")
    assert [th.text for th in header][1:-1] == report.arms
    rows = browser.find_elements(By.CSS_SELECTOR, "table.per-task tbody tr")
    assert [r.find_element(By.TAG_NAME, "th").text for r in rows] == sorted(TASKS)
    outcomes = rows[0].find_elements(By.CSS_SELECTOR, "a.outcome")
    assert [a.text for a in outcomes] == [f"{arm}: solved" for arm in report.arms]
    outcomes[0].click()
    assert shown(browser, "episode").find_element(By.TAG_NAME, "h1").text == f"{sorted(TASKS)[0]}.oracle.s0"
    assert console_errors(browser) == []


def test_per_task_differences_and_the_small_sample_warning_in_a_browser(tmp_path, browser):
    """Each arm − rewrite over all tasks and per task: an interval where the pairs allow one, else "too few
    pairs" and, over all tasks, a warning."""
    from selenium.webdriver.common.by import By

    out = tmp_path / "report.html"
    build_report([write_run(tmp_path / "run", OUTCOMES)], out)
    browser.get(out.as_uri())
    def shown_interval(values):
        return "{:+.1f} to {:+.1f}".format(*(100 * bound for bound in bootstrap_interval(values)))

    verdict = browser.find_element(By.ID, "verdict")
    cells = [[td.text for td in row.find_elements(By.TAG_NAME, "td")][:3]
             for row in verdict.find_elements(By.CSS_SELECTOR, "table.verdict tbody tr")]
    assert cells == [["+22.7 points", shown_interval(differences("debug", ["late_handlers", "sum_tree"])), "n = 22"],
                     ["+0.0 points", "too few pairs", "n = 2"]]
    (warning,) = verdict.find_elements(By.CSS_SELECTOR, "p.small-sample")
    assert warning.text.startswith(f"too few pairs m · debug-after-1 − rewrite: n = 2, fewer than {MIN_PAIRS}.")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.task-verdict tbody tr")
    assert [[row.find_element(By.TAG_NAME, "th").text] + [td.text for td in row.find_elements(By.TAG_NAME, "td")][:6]
            for row in rows] == [
        ["late_handlers", "m · debug − rewrite", "+0.0 points", "too few pairs", "n = 2", "0/2 (0%)", "0/2 (0%)"],
        ["late_handlers", "m · debug-after-1 − rewrite", "+0.0 points", "too few pairs", "n = 2", "0/2 (0%)",
         "0/2 (0%)"],
        ["sum_tree", "m · debug − rewrite", "+25.0 points", shown_interval(differences("debug", ["sum_tree"])),
         f"n = {SEEDS}", f"10/{SEEDS} (50%)", f"5/{SEEDS} (25%)"],
        ["sum_tree", "m · debug-after-1 − rewrite",
         "no pairs: nothing ran under both m · debug-after-1 and m · rewrite."]]
    assert "+0.0 to +0.0" not in browser.find_element(By.ID, "overview").text
    verdict.find_element(By.LINK_TEXT, "Per task").click()
    assert browser.current_url.endswith("#task-verdicts") and shown(browser, "task-verdicts")
    assert console_errors(browser) == []


def test_suspicious_evals_are_marked(tmp_path, browser):
    """An eval step flagged suspicious (written as the env records it) marks its episode and is counted per arm."""
    from selenium.webdriver.common.by import By

    run = tmp_path / "flagged"
    for task, reasons in (("sum_tree", ["the score file changed after the run"]), ("late_handlers", None)):
        writer = TrajectoryWriter(run / f"{task}.llm.s0.jsonl", HeaderRecord(
            task=task, task_set="bundled", agent="llm", model="m", strategy="debug", tools=["eval", "pdb"]))
        writer.step(StepRecord(step=1, action=Action(name="eval"), observation="3 passed", reward=1.0,
                               terminated=True, seconds=0.5,
                               info=StepInfo(score=3, max_score=3, tokens_used=10, suspicious=reasons)))
        writer.finish(ResultRecord(task=task, solved=True, reward=1.0, steps=1, tokens=10, seconds=2.0))
    out = tmp_path / "flagged.html"
    build_report([run], out)
    browser.get(out.as_uri())
    assert browser.find_element(By.CSS_SELECTOR, "table.summary td.suspicious-count").text == "1 of 2"
    rows = browser.find_elements(By.CSS_SELECTOR, "table.per-task tbody tr")
    flagged = {r.find_element(By.TAG_NAME, "th").text: r.find_elements(By.CSS_SELECTOR, ".badge.warn") for r in rows}
    assert [b.text for b in flagged["sum_tree"]] == ["suspicious eval"] and flagged["late_handlers"] == []
    assert flagged["sum_tree"][0].get_attribute("title") == "the score file changed after the run"
    episode_badges = browser.find_elements(By.CSS_SELECTOR, "table.episodes .badge.warn")
    assert len(episode_badges) == 1
    browser.get(out.as_uri() + "#ep-e1")  # sum_tree sorts after late_handlers
    article = shown(browser, "episode")
    assert article.find_element(By.CSS_SELECTOR, "h1 .badge.warn").text == "suspicious eval"
    assert "suspicious: the score file changed after the run" in article.find_element(By.CSS_SELECTOR, ".note").text
    assert text_summary([run]).splitlines()[4].split()[-1] == "1"  # the arm's row ends with its count
    assert console_errors(browser) == []


def test_hostile_text_stays_text(tmp_path, browser):
    """Observations and diffs are the agent's and the program's words: they never become markup."""

    run = tmp_path / "run"
    run.mkdir()
    evil = '</script><script>document.title="pwned"</script><img src=x onerror="document.title=1">'
    records = [{"type": "header", "task": "t", "task_set": evil, "agent": "a", "strategy": "debug", "observation": evil},
               {"type": "step", "step": 1, "action": {"name": "edit", "arguments": {"x": evil}}, "observation": evil,
                "reward": 0.0, "info": {"tokens_used": 5}, "seconds": 0.1},
               {"type": "result", "solved": False, "reward": 0.0, "steps": 1, "tokens": 5, "seconds": 0.1,
                "diff": "+" + evil, "error": evil}]
    (run / "t.a.s0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "evil.html"
    build_report([run], out)
    browser.get(out.as_uri() + "#ep-e0")
    assert browser.title.startswith("minidebug report")
    assert evil in shown(browser, "episode").text
    assert console_errors(browser) == []


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "no such run folder" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--text"]) == 2
    assert "no complete trajectory" in capsys.readouterr().err
