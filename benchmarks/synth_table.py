"""The table of tasks `minidebug synth` made from real repositories, one row per output folder.

    minidebug synth CLONE --repository OWNER/NAME --out OUT --max 100 --seed 0 -j 2
    python benchmarks/synth_table.py OUT [OUT ...] [--check 10] [--sandbox auto]

Reads each folder's .synth-summary.json (repository, commit, tried, kept, seconds) and its tasks' synth.json
(failing tests, whether a failing test's traceback reaches the changed lines), and with `--check N` runs
`minidebug check` on the first N tasks kept (in the order synth kept them). Prints a Markdown table: the
repository and commit, counted tests, tried, kept, the median of failing tests per kept task, the share of
kept tasks that need runtime information (no failing test's traceback passes through the changed lines), the
seconds per kept task (synth's whole run, venv and baseline runs included, over the tasks kept) and how many of
the checked tasks pass every check.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from minidebug.runner.pool import WarmPool
from minidebug.sandbox.choose import COMMAND_LINE_NAMES, from_command_line
from minidebug.taskcheck.check import check_task
from minidebug.tasks.task import load_task


def row(out: Path, check: int, sandbox: str | None) -> list[str]:
    summary = json.loads((out / ".synth-summary.json").read_text(encoding="utf-8"))
    kept = [out / name for name in summary["kept"]]
    metas = [json.loads((task / "synth.json").read_text(encoding="utf-8")) for task in kept]
    failing = [meta["failing_tests"] for meta in metas]
    runtime = sum(meta["needs_runtime_information"] for meta in metas)
    checked = ""
    if check:
        with WarmPool() as pool:  # as `minidebug check` does
            reports = [check_task(load_task(task), sandbox=sandbox, warm_pool=pool) for task in kept[:check]]
        for report in reports:
            for name, result in report.results.items():
                if result != "ok":
                    print(f"{report.task}: {name}: {result[:300]}")
        checked = f"{sum(report.ok for report in reports)}/{len(reports)}"
    name = summary["repository"] or Path(summary["clone"]).name
    return [name, summary["commit"][:8], str(summary["counted_tests"]), str(summary["tried"]), str(len(kept)),
            f"{statistics.median(failing):g}" if failing else "-",
            f"{runtime / len(kept):.0%}" if kept else "-",
            f"{summary['seconds'] / len(kept):.1f}" if kept else "-", checked or "-"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outs", type=Path, nargs="+", help="folders `minidebug synth --out` wrote")
    parser.add_argument("--check", type=int, default=0, help="tasks of each folder to run `minidebug check` on")
    parser.add_argument("--sandbox", choices=COMMAND_LINE_NAMES, default="auto")
    args = parser.parse_args()
    header = ["repository", "commit", "counted tests", "tried", "kept", "median failing tests",
              "needs runtime information", "seconds per kept task", "pass `check`"]
    rows = [row(out, args.check, from_command_line(args.sandbox)) for out in args.outs]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
