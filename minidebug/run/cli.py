"""The `minidebug` command."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

from ..errors import MinidebugError, UsageError
from ..sandbox.choose import COMMAND_LINE_NAMES, from_command_line


def _run(args: argparse.Namespace) -> int:
    from ..agents import load_agent
    from ..tasks.select import select_tasks
    from .batch import (
        Progress,
        RunInterrupted,
        plan,
        recorded_results,
        run_batch,
        select,
        summary,
    )

    options = {
        "llm": {"model": args.model, "base_url": args.base_url, "api_key_env": args.api_key_env,
                "provider": args.provider, "tool_format": args.tool_format,
                "prompt": str(args.prompt) if args.prompt else None},
        "replay": {"trajectory": str(args.trajectory) if args.trajectory else None},
    }
    for agent in args.agent:
        load_agent(agent)(**options.get(agent, {}))  # bad names and options fail before any episode
    if (args.resume or args.rerun_failed) and args.out is None:
        raise UsageError("--resume and --rerun-failed need --out (the folder of the earlier run)")
    if args.backend == "ray" and (args.ray_address or "").startswith("ray://"):
        _need_ray_client()
    make_options: dict[str, Any] = {**dict(args.limit), "sandbox": from_command_line(args.sandbox)}
    if args.strict:
        make_options["strict"] = True
    tasks = select_tasks(args.tasks)
    if "replay" in args.agent:
        _check_replayed_task(args.trajectory, tasks)
    everything = plan(tasks, args.agent, range(args.seeds), options, make_options, strategies=args.strategy)
    specs = select(everything, args.out, args.resume, args.rerun_failed)
    jobs = args.jobs or os.cpu_count() or 1
    _interrupt_on(signal.SIGINT, signal.SIGTERM)  # even where the caller ignores them (nohup, `cmd &`)
    with Progress(len(specs), jobs) as progress:
        try:
            results = run_batch(specs, args.out, jobs, args.backend, args.ray_address, progress.advance)
        except RunInterrupted as stop:
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # ending already; and Python's exit
                signal.signal(signum, signal.SIG_IGN)  # would put back the default action, which kills
            progress.__exit__(None, None, None)
            done = recorded_results(everything, args.out) if args.out is not None else stop.results  # the run's
            if done:
                print(summary(done))
            print(f"minidebug: interrupted: {len(done)} of {len(everything)} episode(s) done, "
                  f"{len(stop.not_run)} not run; {_how_to_go_on(args)}", file=sys.stderr)
            return 130
    if args.out is not None:  # the whole run, earlier invocations' episodes included
        recorded = recorded_results(everything, args.out)
        ids = {result.id for result in recorded}
        results = recorded + [result for result in results if result.id not in ids]
    print(summary(results) if results else "nothing to run")
    return 0 if all(r.solved for r in results) else 1


def _interrupt_on(*signals: signal.Signals) -> None:
    """The first of `signals` (and SIGHUP) raises KeyboardInterrupt; later ones find the run already ending
    (the batch's workers kill their episodes at once on one while they close) and are ignored, so that none
    cuts the way out short."""
    raised: list[int] = []

    def interrupt(signum: int, frame: Any) -> None:
        if not raised:
            raised.append(signum)
            raise KeyboardInterrupt

    for signum in signals:
        signal.signal(signum, interrupt)
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # a closed terminal, unless nohup asked otherwise
        signal.signal(signal.SIGHUP, interrupt)


def _restore(handlers: dict[signal.Signals, Any]) -> None:
    for signum, handler in handlers.items():
        if handler is not None:
            signal.signal(signum, handler)


def _how_to_go_on(args: argparse.Namespace) -> str:
    if args.out is None:
        return "nothing was recorded (no --out)"
    argv = [a for a in sys.argv[1:] if a not in ("--resume", "--rerun-failed")]
    return "continue with: " + shlex.join(["minidebug", *argv, "--resume"])


def _need_ray_client() -> None:
    try:
        import grpc  # noqa: F401  (what Ray's client, ray://, talks over)
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("a ray:// address needs Ray's client: pip install 'minidebug[ray]' (or 'ray[client]')") \
            from None


def _check_replayed_task(trajectory: Path | None, tasks: list[Any]) -> None:
    from ..core.trajectory import read_header

    recorded = read_header(Path(trajectory)).task if trajectory else None
    others = sorted({task.name for task in tasks if task.name != recorded})
    if others:
        raise UsageError(f"the trajectory {trajectory} was recorded on task {recorded!r}, not on "
                         f"{', '.join(repr(name) for name in others)}: pass --tasks with that task")


def _check(args: argparse.Namespace) -> int:
    from ..runner.pool import WarmPool
    from ..taskcheck.check import check_task, format_reports
    from ..tasks.select import select_tasks

    with WarmPool() as pool:  # each task's fresh episodes borrow the waiting eval interpreters of the last
        reports = [check_task(task, sandbox=from_command_line(args.sandbox), warm_pool=pool)
                   for task in select_tasks(args.tasks)]
    print(format_reports(reports))
    return 0 if all(r.ok for r in reports) else 1


def _validate(args: argparse.Namespace) -> int:
    from ..taskcheck.validate import format_validations, iter_validations

    options: dict[str, Any] = {"sandbox": from_command_line(args.sandbox)}
    if args.eval_timeout is not None:
        options["eval_timeout"] = args.eval_timeout
    rows = []
    for row in iter_validations([str(path) for path in args.tasks], args.jobs, options):
        rows.append(row)
        if args.json:  # a line per task as it is done; the table waits for every row (its width)
            print(row.to_json(), flush=True)
    if not args.json:
        print(format_validations(rows))
    return 0 if all(row.ok for row in rows) else 1


def _import(args: argparse.Namespace) -> int:
    from ..tasks.importers import import_exercism, import_swebench

    if args.kind == "swebench":
        out = args.out or Path("tasks-swebench")
        report = import_swebench(args.path, out, args.repos, args.filter, args.slice, args.setup or [],
                                 fetch_missing=args.fetch_missing)
    else:
        out = args.out or Path("tasks-exercism")
        report = import_exercism(args.path, out, verify=not args.no_verify)
    print(report.summary(out))
    return 1 if report.failed else 0


def _instances(args: argparse.Namespace) -> int:
    from ..taskcheck.measure import instances_from_history

    report = instances_from_history(args.clone, args.commits, args.repository, args.out,
                                    {"sandbox": from_command_line(args.sandbox), "eval_timeout": args.eval_timeout},
                                    progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(report.summary(args.out))
    return 1 if report.rejected else 0


def _synth(args: argparse.Namespace) -> int:
    from ..synth.build import synthesize
    from ..synth.statement import StatementModel
    from .synth_progress import SynthProgress

    model = StatementModel(args.model, args.base_url, args.provider, args.api_key_env) if args.model else None
    modifiers = [name for part in args.modifiers for name in part.split(",") if name] if args.modifiers else None
    if args.backend == "ray" and (args.ray_address or "").startswith("ray://"):
        _need_ray_client()
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    _interrupt_on(signal.SIGINT, signal.SIGTERM)  # even where the caller ignores them (nohup, `cmd &`)
    with SynthProgress(args.max) as progress:
        try:
            report = synthesize(args.clone, args.out, args.max, commit=args.commit, seed=args.seed,
                                modifiers=modifiers, repository=args.repository,
                                jobs=args.jobs or os.cpu_count() or 1, keep_name_errors=args.keep_name_errors,
                                timeout=args.timeout, sandbox=from_command_line(args.sandbox), model=model,
                                backend=args.backend, ray_address=args.ray_address, on_trial=progress,
                                progress=progress.line if args.verbose else None)
        except KeyboardInterrupt:
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # ending already
                signal.signal(signum, signal.SIG_IGN)
            progress.__exit__(None, None, None)
            print(f"minidebug: interrupted: what was judged is in {args.out}; the same command goes on from there",
                  file=sys.stderr)
            return 130
        except BaseException:
            _restore(handlers)
            raise
    _restore(handlers)  # a caller in this interpreter (a test, a notebook) gets its own handlers back
    print(report.summary(args.out))
    return 0 if report.kept else 1


def _export(args: argparse.Namespace) -> int:
    from .export import export_predictions, export_sft

    if args.kind == "preds":
        out = args.out or Path("preds.json")
        written = export_predictions(args.runs, out)
        if len(written) > 1:
            print(f"warning: {len(written)} arms predict the same instance_ids, and SWE-bench's harness keys "
                  f"predictions by instance_id (one file would keep one arm's row each): one file per arm "
                  f"instead of {out}", file=sys.stderr)
        for path, count in written:
            print(f"{count} prediction(s) written to {path}")
        if not written:
            print("no finished episode found: nothing written")
        return 0
    out = args.out or Path("sft.jsonl")
    count = export_sft(args.runs, out, args.solved_only)
    print(f"{count} episode(s) written to {out}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from ..report import build_report, text_summary

    if args.text:
        print(text_summary(args.runs))
        return 0
    report = build_report(args.runs, args.out)
    print(f"{len(report.episodes)} episode(s) of {len(report.runs)} run(s) written to {args.out}")
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from ..integrations.mcp_server import main as serve

    serve(args.task, bash=args.bash, strategy=args.strategy)
    return 0


def _gc(args: argparse.Namespace) -> int:
    from .cleanup import collect

    removed = collect(dry_run=args.dry_run)
    for line in removed:
        print(("would remove " if args.dry_run else "removed ") + line)
    print(f"{len(removed)} leftover(s) {'to remove' if args.dry_run else 'removed'}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from .replay_check import replay

    mismatches, warnings = replay(args.trajectory)
    for warning in warnings:
        print(f"warning: {warning}")
    for mismatch in mismatches:
        print(mismatch.describe())
    steps = sum(1 for _ in open(args.trajectory, encoding="utf-8")) - 2
    print(f"{len(mismatches)} difference(s) in {max(steps, 0)} step(s)")
    return 1 if mismatches else 0


def _play(args: argparse.Namespace) -> int:
    from ..core.make import make
    from .play import play

    with make(args.task, bash=args.bash) as env:
        play(env)
    return 0


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (and exit status 2), pointing at --help."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _count(text: str) -> int:
    """A whole number of at least 1 (seeds, jobs)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return value


def _limit(text: str) -> tuple[str, float | int]:
    """NAME=VALUE: one of make()'s limits (a field of Limits, or max_seconds), checked as make() checks it."""
    from pydantic import ValidationError

    from ..tasks.spec import Limits

    name, equals, value = text.partition("=")
    names = [*Limits.model_fields, "max_seconds"]
    if not equals or name not in names:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE with NAME one of {', '.join(names)}")
    whole = name != "max_seconds" and Limits.model_fields[name].annotation is int
    try:
        number = int(value) if whole else float(value)
        if name == "max_seconds" and not number > 0:
            raise ValueError
        if name != "max_seconds":
            Limits(**{name: number})
    except (ValueError, ValidationError):
        kind = "a whole number" if whole else "a number"
        raise argparse.ArgumentTypeError(f"{name}: {value!r} is not {kind} above 0") from None
    return name, number


def build_parser() -> argparse.ArgumentParser:
    from importlib.metadata import version

    parser = _Parser(prog="minidebug", description="Interactive debugging episodes for LLM agents.")
    parser.add_argument("--version", action="version", version=f"minidebug {version('minidebug')}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run_parser = commands.add_parser("run", help="run an agent over tasks and print a table")
    run_parser.add_argument("--tasks", nargs="+", metavar="SELECTOR",
                            help="task folder paths, bundled task names or globs of names (default: all bundled)")
    run_parser.add_argument("--agent", nargs="+", default=["oracle"], metavar="AGENT",
                            help="agents to run: oracle (default, offline), llm, replay")
    run_parser.add_argument("--strategy", nargs="+", default=["debug"], metavar="STRATEGY",
                            help="debug (every tool; default), rewrite (no pdb, trace or inspect), debug-after-N "
                                 "(those unlocked after N edits); several run side by side")
    run_parser.add_argument("--seeds", type=_count, default=1, metavar="N",
                            help="episodes per task and agent (seeds 0..N-1)")
    run_parser.add_argument("-j", "--jobs", type=_count, help="worker processes (default: the number of cores)")
    run_parser.add_argument("--strict", action="store_true",
                            help="score 0 every eval that shows signs of in-memory forgery (make(strict=True))")
    run_parser.add_argument("--sandbox", choices=COMMAND_LINE_NAMES, default="auto",
                            help="the sandbox the episodes run in (default: auto, as in make())")
    run_parser.add_argument("--limit", type=_limit, action="append", default=[], metavar="NAME=VALUE",
                            help="one of make()'s limits for every episode, e.g. max_steps=20 or eval_timeout=120 "
                                 "(repeatable; default: each task's own)")
    run_parser.add_argument("--resume", action="store_true", help="skip episodes already finished in --out")
    run_parser.add_argument("--rerun-failed", action="store_true", help="run only the episodes that failed in --out")
    run_parser.add_argument("--backend", choices=["process", "ray"], default="process",
                            help="where episodes run: a local process pool, or Ray (pip install 'minidebug[ray]')")
    run_parser.add_argument("--ray-address", help="an existing Ray cluster, e.g. ray://head:10001 (default: local)")
    run_parser.add_argument("--out", type=Path, help="folder for JSONL trajectories and results.json")
    run_parser.add_argument("--model", help="llm agent: model name")
    run_parser.add_argument("--base-url", help="llm agent: OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    run_parser.add_argument("--provider", choices=["openai", "anthropic"], default="openai",
                            help="llm agent: an OpenAI-compatible endpoint (default) or Anthropic's Messages API")
    run_parser.add_argument("--api-key-env", help="llm agent: environment variable holding the API key "
                                                 "(default: OPENAI_API_KEY or ANTHROPIC_API_KEY)")
    run_parser.add_argument("--tool-format", choices=["native", "text"], default="native",
                            help="llm agent: native function calls, or tool calls written in the answer's text")
    run_parser.add_argument("--prompt", type=Path, help="llm agent: a system prompt template file (default: the "
                                                       "strategy's own)")
    run_parser.add_argument("--trajectory", type=Path, help="replay agent: the JSONL trajectory to play back")
    run_parser.set_defaults(handler=_run)

    replay_parser = commands.add_parser("replay", help="re-run a trajectory; exit 1 if any observation differs")
    replay_parser.add_argument("trajectory", type=Path)
    replay_parser.set_defaults(handler=_replay)

    play_parser = commands.add_parser("play", help="type tool calls yourself, as an agent would")
    play_parser.add_argument("task", help="task folder path or bundled task name")
    play_parser.add_argument("--bash", action="store_true", help="also enable the bash tool")
    play_parser.set_defaults(handler=_play)

    check_parser = commands.add_parser("check", help="prove tasks sound: the bug shows, the gold patch fixes it, ...")
    check_parser.add_argument("tasks", nargs="*", metavar="PATH",
                              help="task folders, bundled names or globs (default: all bundled)")
    check_parser.add_argument("--sandbox", choices=COMMAND_LINE_NAMES, default="auto",
                              help="the sandbox the checks run in (default: auto, as in make())")
    check_parser.set_defaults(handler=_check)

    validate_parser = commands.add_parser("validate", help="prove SWE-bench-style tasks (fail_to_pass lists) "
                                                           "runnable here: a table and an exit status")
    validate_parser.add_argument("tasks", nargs="+", type=Path, metavar="PATH", help="task folders")
    validate_parser.add_argument("-j", "--jobs", type=_count, default=1, help="tasks validated at once")
    validate_parser.add_argument("--sandbox", choices=COMMAND_LINE_NAMES, default="auto",
                                 help="the sandbox the runs use (default: auto, as in make())")
    validate_parser.add_argument("--json", action="store_true", help="one JSON object per task, a line each")
    validate_parser.add_argument("--eval-timeout", type=float, default=None,
                                 help="seconds each eval may take (default: the task's eval_timeout, 60 unless its "
                                      "[limits] say otherwise)")
    validate_parser.set_defaults(handler=_validate)

    import_parser = commands.add_parser("import", help="convert another task collection into task folders")
    import_parser.add_argument("kind", choices=["exercism", "swebench"],
                               help="exercism: a local clone of exercism/python; swebench: a JSON or JSONL file of "
                                    "SWE-bench-format instances")
    import_parser.add_argument("path", type=Path)
    import_parser.add_argument("--out", type=Path,
                               help="where the tasks go (default: tasks-exercism or tasks-swebench)")
    import_parser.add_argument("--repos", type=Path, help="swebench: folder of local clones (owner__name or name)")
    import_parser.add_argument("--fetch-missing", action="store_true",
                               help="swebench: a repository with no clone under --repos is cloned from GitHub "
                                    "(default: its instances fail)")
    import_parser.add_argument("--filter", help="swebench: a regular expression the instance_id must match")
    import_parser.add_argument("--slice", help="swebench: START:END of the (filtered) instances, e.g. 0:10")
    import_parser.add_argument("--setup", action="append", metavar="CMD",
                               help="swebench: a command run once into each task's venv, e.g. 'pip install -e .', "
                                    "instead of the repository's environment recipe")
    import_parser.add_argument("--no-verify", action="store_true",
                               help="do not run each exercise's tests on its stub and example first")
    import_parser.set_defaults(handler=_import)

    instances_parser = commands.add_parser("instances", help="SWE-bench-format instances from fix commits of a "
                                                             "repository, FAIL_TO_PASS and PASS_TO_PASS measured here")
    instances_parser.add_argument("clone", type=Path, help="a local clone with the commits' history")
    instances_parser.add_argument("commits", nargs="+", metavar="COMMIT",
                                  help="fix commits, each changing source and test files")
    instances_parser.add_argument("--repository", required=True, metavar="OWNER/NAME",
                                  help="the repository the instances name (its environment recipe builds the venv)")
    instances_parser.add_argument("--out", type=Path, required=True, help="the JSON lines file to write")
    instances_parser.add_argument("--eval-timeout", type=float, default=300,
                                  help="seconds one run of the test files may take (default: 300)")
    instances_parser.add_argument("--sandbox", choices=COMMAND_LINE_NAMES, default="auto",
                                  help="the sandbox the runs use (default: auto, as in make())")
    instances_parser.set_defaults(handler=_instances)

    synth_parser = commands.add_parser("synth", help="tasks from procedural bugs in a repository with a pytest suite "
                                                     "(pip install 'minidebug[synth]')")
    synth_parser.add_argument("clone", type=Path, help="a local clone of the repository")
    synth_parser.add_argument("--commit", default="HEAD", help="the commit the tasks start from (default: HEAD)")
    synth_parser.add_argument("--out", type=Path, required=True,
                              help="the folder to write task folders into; a folder an earlier run with the same "
                                   "options wrote into is gone on with")
    synth_parser.add_argument("--max", type=int, required=True, help="the most tasks to write")
    synth_parser.add_argument("--seed", type=int, default=0, help="orders the candidates (default: 0)")
    synth_parser.add_argument("--modifiers", nargs="+", metavar="NAME",
                              help="the modifiers to use (default: all; see minidebug/synth/README.md)")
    synth_parser.add_argument("--repository", metavar="OWNER/NAME",
                              help="whose environment recipe builds the venv (default: pytest alone)")
    synth_parser.add_argument("-j", "--jobs", type=int, help="candidates tried at once (default: the cores)")
    synth_parser.add_argument("--timeout", type=float,
                              help="seconds one candidate's tests may take (default: 3x the suite's time + 10)")
    synth_parser.add_argument("--keep-name-errors", action="store_true",
                              help="also keep bugs whose tests fail only with AttributeError or NameError")
    synth_parser.add_argument("--sandbox", choices=COMMAND_LINE_NAMES, default="auto",
                              help="the sandbox of the candidates' test runs and of the episode that measures "
                                   "which tests count (default: auto)")
    synth_parser.add_argument("--model", help="a chat model that writes the problem statements as issues (default: "
                                              "written from the failing tests, no model)")
    synth_parser.add_argument("--base-url", help="--model's OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    synth_parser.add_argument("--provider", choices=["openai", "anthropic"], default="openai",
                              help="--model's API: OpenAI-compatible (default) or Anthropic's Messages API")
    synth_parser.add_argument("--api-key-env", help="--model's environment variable holding the API key "
                                                   "(default: OPENAI_API_KEY or ANTHROPIC_API_KEY)")
    synth_parser.add_argument("--backend", choices=["process", "ray"], default="process",
                              help="where candidates are judged: this process's workers, or Ray actors "
                                   "(pip install 'minidebug[ray]')")
    synth_parser.add_argument("--ray-address", help="an existing Ray cluster, e.g. ray://head:10001 (default: a "
                                                    "local Ray); its nodes must see the clone and cache at the same "
                                                    "paths")
    synth_parser.add_argument("-v", "--verbose", action="store_true", help="a line per candidate on stderr")
    synth_parser.set_defaults(handler=_synth)

    export_parser = commands.add_parser("export", help="turn recorded runs into other formats")
    export_parser.add_argument("kind", choices=["sft", "preds"],
                               help="sft: chat fine-tuning JSONL with the tool schemas; preds: preds.json for the "
                                    "SWE-bench harness")
    export_parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders (--out of minidebug run)")
    export_parser.add_argument("--solved-only", action="store_true", help="only the episodes that were solved")
    export_parser.add_argument("--out", type=Path, help="the file to write (default: sft.jsonl or preds.json)")
    export_parser.set_defaults(handler=_export)

    report_parser = commands.add_parser("report", help="one self-contained HTML page of runs (pip install "
                                                       "'minidebug[report]'), or --text")
    report_parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders (--out of minidebug run)")
    report_parser.add_argument("--out", type=Path, default=Path("report.html"), help="default: report.html")
    report_parser.add_argument("--text", action="store_true", help="print the summary in the terminal instead")
    report_parser.set_defaults(handler=_report)

    mcp_parser = commands.add_parser("mcp",
                                     help="serve one episode's tools over MCP stdio (pip install 'minidebug[mcp]')")
    mcp_parser.add_argument("task", help="task folder path or bundled task name")
    mcp_parser.add_argument("--bash", action="store_true", help="also enable the bash tool")
    mcp_parser.add_argument("--strategy", default="debug", help="debug (default), rewrite or debug-after-N")
    mcp_parser.set_defaults(handler=_mcp)

    gc_parser = commands.add_parser("gc", help="remove episode dirs and processes left by a killed run")
    gc_parser.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    gc_parser.set_defaults(handler=_gc)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except BrokenPipeError:  # `minidebug report --text | head`: the reader has gone, so has our output
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except MinidebugError as exc:  # what the user got wrong or this machine lacks: one line
        print(f"minidebug: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.filename is None:  # not a file the command line named: a bug of ours, with its traceback
            raise
        print(f"minidebug: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
