"""Reports of real runs, looked at in a real headless Chromium the way a person would."""

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("jinja2", reason="the [report] extra is part of the test extra; install it")
pytest.importorskip("matplotlib", reason="the [report] extra is part of the test extra; install it")

from minidebug.agents.oracle import edits_for  # noqa: E402
from minidebug.run.cli import main
from minidebug.tasks.patch import parse_patch
from minidebug.report import build_report, load, text_summary
from minidebug.tasks.task import load_task

from .chat_server import completion

TASKS = ["sum_tree", "late_handlers", "shadowed_max"]
UNSOLVED = "shadowed_max"  # the scripted model gives up on this one
ARTIFACTS = Path(__file__).parent / "artifacts"


def scripted_model(body):
    """Fixes the bundled task named in the conversation with the oracle's edits, one call per answer; with pdb
    among its tools it first looks at the code under pdb; on UNSOLVED it only runs eval and submits."""
    introduction = body["messages"][1]["content"]
    task = next(load_task(name) for name in TASKS if introduction.startswith(load_task(name).description.strip()))
    offered = {tool["function"]["name"] for tool in body["tools"]}
    plan = [("pdb", {"command": "l"})] if "pdb" in offered else []
    if task.name != UNSOLVED:
        for file_patch in parse_patch(task.solution.read_text()):
            plan += [(call.name, dict(call.arguments)) for call in edits_for(file_patch)]
    plan += [("eval", {}), ("submit", {})]
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return completion(plan[min(turn, len(plan) - 1)])


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    """One real run: the llm agent against a scripted model on a local HTTP endpoint, two strategies."""
    pytest.importorskip("openai", reason="the [llm] extra is part of the test extra; install it")
    from .chat_server import ChatServer

    out = tmp_path_factory.mktemp("run") / "scripted"
    chat = ChatServer(scripted_model)
    try:
        code = main(["run", "--tasks", *TASKS, "--agent", "llm", "--model", "scripted", "--base-url", chat.url,
                     "--strategy", "rewrite", "debug", "--out", str(out), "-j", "2"])
    finally:
        chat.close()
    assert code == 1  # UNSOLVED was not solved
    return out


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
                     "--window-size=1280,1800"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    yield session
    session.quit()


def test_the_run_records_what_the_report_needs(recorded_run):
    report = load([recorded_run])
    assert sorted(report.arms) == ["scripted · debug", "scripted · rewrite"]
    assert len(report.episodes) == 6 and report.task_sets == ["bundled"]
    for arm in report.arms:
        row = report.table[(arm, "all")]
        assert (row.episodes, row.solved) == (3, 2)
    use = report.tool_use
    assert use["scripted · debug"]["pdb_solved"] == 1.0 and use["scripted · debug"]["pdb_unsolved"] == 1.0
    assert use["scripted · rewrite"]["pdb_per_episode"] == 0.0 and use["scripted · rewrite"]["debugger_share"] == 0.0
    text = text_summary([recorded_run])
    assert "scripted · debug" in text and "67% (2/3)" in text


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
    rows = browser.find_elements(By.CSS_SELECTOR, "table.summary tbody tr")
    assert [r.find_element(By.TAG_NAME, "th").text for r in rows] == ["scripted · rewrite", "scripted · debug"]
    assert "67% (2/3)" in rows[0].text and "67% (2/3)" in rows[1].text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#cost svg, #summary svg, #tools svg")) == 3
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "report-summary.png"))

    rows[1].find_element(By.TAG_NAME, "a").click()  # summary -> that arm's episodes
    assert browser.current_url.endswith("#arm-2")
    links = browser.find_elements(By.CSS_SELECTOR, "#arm-2 + table.episodes a")
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
    browser.save_screenshot(str(ARTIFACTS / "report-episode.png"))

    article.find_element(By.LINK_TEXT, "← summary").click()  # back
    assert shown(browser, "overview") and not article.is_displayed()
    assert console_errors(browser) == []


def test_two_runs_side_by_side(recorded_run, tmp_path, browser):
    from selenium.webdriver.common.by import By

    oracle = tmp_path / "oracle"
    assert main(["run", "--tasks", *TASKS, "--out", str(oracle), "-j", "2"]) == 0
    out = tmp_path / "both.html"
    report = build_report([recorded_run, oracle], out)
    assert report.runs == ["scripted", "oracle"] and len(report.arms) == 3
    browser.get(out.as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "table.compare tbody tr")
    assert [r.find_element(By.TAG_NAME, "th").text for r in rows] == sorted(TASKS)
    cells = rows[0].find_elements(By.TAG_NAME, "td")
    assert len(cells) == 2 and len(cells[0].find_elements(By.TAG_NAME, "a")) == 2  # both strategies of run 1
    cells[1].find_element(By.TAG_NAME, "a").click()
    assert shown(browser, "episode").find_element(By.TAG_NAME, "h1").text == f"{sorted(TASKS)[0]}.oracle.s0"
    assert console_errors(browser) == []


def test_hostile_text_stays_text(tmp_path, browser):
    """Observations and diffs are the agent's and the program's words: they never become markup."""
    from selenium.webdriver.common.by import By

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
