"""The `minidebug` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import MinidebugError


def _run(args: argparse.Namespace) -> int:
    from .runner import format_table, run, select_tasks

    options = {}
    if args.agent == "llm":
        options = {"model": args.model, "base_url": args.base_url, "api_key_env": args.api_key_env}
    elif args.agent == "replay":
        options = {"trajectory": args.trajectory}
    tasks = select_tasks(args.tasks)
    results = run(tasks, args.agent, args.out, options)
    print(format_table(results))
    return 0 if all(r.solved for r in results) else 1


def _replay(args: argparse.Namespace) -> int:
    from .replay import replay

    mismatches, warnings = replay(args.trajectory)
    for warning in warnings:
        print(f"warning: {warning}")
    for mismatch in mismatches:
        print(mismatch.describe())
    steps = sum(1 for _ in open(args.trajectory, encoding="utf-8")) - 2
    print(f"{len(mismatches)} difference(s) in {max(steps, 0)} step(s)")
    return 1 if mismatches else 0


def _play(args: argparse.Namespace) -> int:
    import minidebug

    from .play import play

    with minidebug.make(args.task, bash=args.bash) as env:
        play(env)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minidebug", description="Interactive debugging episodes for LLM agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run an agent over tasks and print a table")
    run_parser.add_argument("--tasks", nargs="+", metavar="SELECTOR",
                            help="task folder paths, bundled task names or globs of names (default: all bundled)")
    run_parser.add_argument("--agent", default="oracle", help="agent to run (default: oracle, offline)")
    run_parser.add_argument("--out", type=Path, help="folder for JSONL trajectories and results.json")
    run_parser.add_argument("--model", help="llm agent: model name")
    run_parser.add_argument("--base-url", help="llm agent: OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    run_parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                            help="llm agent: environment variable holding the API key (default: OPENAI_API_KEY)")
    run_parser.add_argument("--trajectory", type=Path, help="replay agent: the JSONL trajectory to play back")
    run_parser.set_defaults(handler=_run)

    replay_parser = commands.add_parser("replay", help="re-run a trajectory; exit 1 if any observation differs")
    replay_parser.add_argument("trajectory", type=Path)
    replay_parser.set_defaults(handler=_replay)

    play_parser = commands.add_parser("play", help="type tool calls yourself, as an agent would")
    play_parser.add_argument("task", help="task folder path or bundled task name")
    play_parser.add_argument("--bash", action="store_true", help="also enable the bash tool")
    play_parser.set_defaults(handler=_play)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (MinidebugError, ValueError) as exc:
        print(f"minidebug: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
