"""What a report of many episodes costs: building it, and opening it in headless Chromium.

    cd benchmarks && python bench_report.py [--episodes 1000] [--runs 10] [--screenshot report-top.png]

Writes that many synthetic trajectories (two models × the strategies rewrite, debug and debug-after-2 on the
same tasks; 12 steps each, observations of the sizes real runs have: file views, pdb replies, diffs, pytest
failures), builds the report, then loads it `--runs` times in a fresh page and opens
an episode page. Baselines measured in the same run: an empty HTML page loaded the same way, and `minidebug
report --text` on the same runs (reading the trajectories without drawing anything).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from bench_core import print_table, row, timed

from minidebug.report import build_report, text_summary

CODE = "".join(f"{i:>4}  {'    ' * (i % 3)}value = compute(items[{i}], factor={i % 7})\n" for i in range(1, 41))
FAILURE = ("=================================== FAILURES ===================================\n"
           + "".join(f"E       assert {i} == {i + 1}\nE        +  where {i} = total(tree)\n" for i in range(25)))
DIFF = "--- a/tree.py\n+++ b/tree.py\n@@ -2,9 +2,9 @@\n" + "".join(
    f"-    old_line_{i} = children\n+    new_line_{i} = [] if children is None else children\n" for i in range(6))


UNLOCK_NOTE = ("\n\n[new tools available from now on]\n- pdb(command): Run a pdb command.\n"
               "- trace(target): Trace a call.\n- inspect(expression): Inspect a value.")
SOLVE_RATE = {"rewrite": 0.45, "debug": 0.6, "debug-after-2": 0.55}


def write_runs(folder: Path, episodes: int) -> None:
    """Two models × three strategies over the same tasks, seed 0; the odd eval flagged suspicious."""
    rng = random.Random(0)
    arms = [(model, strategy) for model in ("model-a", "model-b") for strategy in SOLVE_RATE]
    for index in range(episodes):
        model, strategy = arms[index % len(arms)]
        task_number = index // len(arms)
        task = f"task_{task_number:04d}"
        steps, tokens, edits = [], 300, 0
        for number in range(1, 13):
            tool, observation = [("view", CODE), ("pdb", "> tree.py(14)total()\n-> return sum(...)\n" * 6),
                                 ("edit", DIFF), ("eval", FAILURE)][number % 4]
            if tool == "pdb" and (strategy == "rewrite" or strategy == "debug-after-2" and edits < 2):
                tool, observation = "grep", "tree.py:14: return sum(child.value for child in children)\n" * 8
            info = {"score": 3, "max_score": 4} if tool == "eval" else {}
            if tool == "eval" and rng.random() < 0.01:
                info["suspicious"] = ["the score file changed after the run"]
            edits += tool == "edit"
            if tool == "edit" and strategy == "debug-after-2" and edits == 2:
                observation += UNLOCK_NOTE
                info["tools_enabled"] = ["pdb", "trace", "inspect"]
            tokens += len(observation) // 4
            steps.append({"type": "step", "step": number, "action": {"name": tool, "arguments": {"path": "tree.py"}},
                          "observation": observation, "reward": 0.0, "terminated": False, "truncated": False,
                          "info": {"tokens_used": tokens, **info}, "seconds": round(rng.uniform(0.05, 2.0), 3)})
        solved = rng.random() < SOLVE_RATE[strategy]
        records = [{"type": "header", "task": task, "task_set": f"set_{task_number % 3}", "agent": "llm",
                    "strategy": strategy, "model": model, "seed": 0, "observation": "Fix the totals.\n" * 20,
                    "tokens_used": 300}, *steps,
                   {"type": "result", "task": task, "solved": solved, "reward": float(solved), "steps": 12,
                    "tokens": tokens, "seconds": rng.uniform(5, 60) + sum(step["seconds"] for step in steps),
                    "diff": DIFF, "error": None}]
        name = f"{task}.llm.{strategy}.{model}.s0.jsonl"
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1800"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def load_times(browser, uri: str, runs: int) -> list[float]:
    """Navigation start to the end of the load event, as the page measured it, each in a fresh page load."""
    samples = []
    for _ in range(runs):
        browser.get("about:blank")
        browser.get(uri)
        samples.append(browser.execute_script(
            "return performance.getEntriesByType('navigation')[0].loadEventEnd;"))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--screenshot", type=Path, help="save the top of the report as this PNG")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="minidebug-bench-report-"))
    try:
        run = folder / "run"
        run.mkdir()
        write_runs(run, args.episodes)
        out, empty = folder / "report.html", folder / "empty.html"
        empty.write_text("<!doctype html><title>empty</title><p>empty</p>", encoding="utf-8")
        build = timed(lambda: build_report([run], out), 3)
        text = timed(lambda: text_summary([run]), 3)
        browser = chromium()
        try:
            opened = load_times(browser, out.as_uri(), args.runs)
            bare = load_times(browser, empty.as_uri(), args.runs)
            if args.screenshot:
                browser.set_window_size(1280, 1250)
                browser.get(out.as_uri())
                browser.save_screenshot(str(args.screenshot))
            browser.get(out.as_uri())
            last = f"e{args.episodes - 1}"
            page = []
            for _ in range(args.runs):
                page.append(browser.execute_script(
                    "const t = performance.now(); history.replaceState(null, '', arguments[0]); show();"
                    "document.body.offsetHeight; return performance.now() - t;", f"#ep-{last}"))
                browser.execute_script("history.replaceState(null, '', '#summary'); show();")
        finally:
            browser.quit()
        size = out.stat().st_size / 1e6
        print(f"{args.episodes} episodes, {sum(p.stat().st_size for p in run.iterdir()) / 1e6:.1f} MB of "
              f"trajectories, report {size:.1f} MB\n")
        print_table([
            row("build the HTML report", build, "minidebug report --text (read, no drawing)", text),
            row("open the report in headless Chromium (load event)", opened, "an empty HTML page", bare),
            row("open an episode page (hash change to drawn)", page),
        ])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - started:.0f} s in all)")
