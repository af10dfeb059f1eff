"""`minidebug synth` on a real repository: tried, kept, seconds per kept task, against a full suite per candidate.

    python benchmarks/bench_synth.py --clone /tmp/marsh --repository marshmallow-code/marshmallow
                                     [--max 100] [-j 2] [--seed 0] [--sample 20] [--out DIR]

Runs `synthesize` (the tests that reach each candidate's function, then the rest of the suite for the
candidates that show a bug), then validates the first `--sample` candidates it tried again the plain way: the
whole suite once per candidate, in a scratch tree of the same venv and sandbox, judged by the same rules
against the same counted tests (those that passed in every baseline run: a test whose id changes from run to
run, as a parametrize id holding the time does, is in no two runs and so never counted). Prints a
Markdown table: tried, kept, kept/tried, seconds in all and per kept task, the plain way's seconds per
candidate and what they would come to over every candidate tried, and how many of the sample's verdicts the
two ways share.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from minidebug.sandbox.choose import COMMAND_LINE_NAMES, from_command_line, resolve
from minidebug.synth.build import synthesize
from minidebug.synth.validate import Scratch, judge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clone", type=Path, required=True)
    parser.add_argument("--repository", help="owner/name, for its environment recipe")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--max", type=int, default=100)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=20, help="candidates validated again by the whole suite")
    parser.add_argument("--out", type=Path, help="where the tasks go (default: a temporary folder)")
    parser.add_argument("--sandbox", choices=COMMAND_LINE_NAMES, default="auto",
                        help="the sandbox of the candidates' runs, both ways (default: auto, as the command line)")
    args = parser.parse_args()
    sandbox = from_command_line(args.sandbox)

    out = args.out or Path(tempfile.mkdtemp(prefix="bench-synth-"))
    report = synthesize(args.clone, out, args.max, commit=args.commit, seed=args.seed, repository=args.repository,
                        jobs=args.jobs, sandbox=sandbox)
    print(report.summary(out), "\n")
    assert report.venv is not None

    sha = subprocess.run(["git", "-C", str(args.clone), "rev-parse", args.commit], capture_output=True, text=True,
                         check=True).stdout.strip()
    scratch = Scratch(args.clone, sha, report.venv, report.pytest_args, sandbox=resolve(sandbox))
    try:
        base = scratch.run(timeout=1800)
        stable, errors = set(report.counted), set(report.baseline_errors)
        sample = report.trials[:args.sample]
        same, began = 0, time.monotonic()
        for mutation, reason, _seconds in sample:
            scratch.write(mutation.path, mutation.source)
            verdict = judge(scratch.run(timeout=max(60.0, 3 * base.seconds + 10)), stable, errors, False)
            scratch.reset()
            # A duplicate's verdict needs the tasks kept before it: the plain way counts it as kept.
            ours = "" if reason.startswith("same failing tests") else reason.replace(" (rest of the suite)", "")
            same += (verdict.reason == "") == (ours == "")
        plain = (time.monotonic() - began) / max(1, len(sample))
    finally:
        scratch.close()

    tried, kept = report.tried, len(report.kept)
    rows = [
        ("candidates tried / kept", f"{tried} / {kept}"),
        ("kept / tried", f"{kept / tried:.0%}" if tried else "-"),
        ("seconds in all (venv found, 2 baseline runs, candidates)", f"{report.seconds:.1f}"),
        ("seconds per kept task", f"{report.seconds / kept:.2f}" if kept else "-"),
        ("seconds per candidate tried", f"{report.seconds / tried:.2f}" if tried else "-"),
        (f"plain way: whole suite per candidate, seconds each ({len(sample)} candidates)", f"{plain:.2f}"),
        (f"plain way over every candidate tried, seconds (projected, {args.jobs} job(s))",
         f"{plain * tried / max(1, args.jobs):.1f}"),
        (f"verdicts (kept or not) the same both ways, of {len(sample)}", str(same)),
    ]
    print("| what | figure |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
