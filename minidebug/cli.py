"""The `minidebug` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import MinidebugError


def _run(args: argparse.Namespace) -> int:
    from .runner import format_table, run, select_tasks

    tasks = select_tasks(args.tasks)
    results = run(tasks, args.agent, args.out)
    print(format_table(results))
    return 0 if all(r.solved for r in results) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minidebug", description="Interactive debugging episodes for LLM agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run an agent over tasks and print a table")
    run_parser.add_argument("--tasks", nargs="+", metavar="SELECTOR",
                            help="task folder paths, bundled task names or globs of names (default: all bundled)")
    run_parser.add_argument("--agent", default="oracle", help="agent to run (default: oracle, offline)")
    run_parser.add_argument("--out", type=Path, help="folder for JSONL trajectories and results.json")
    run_parser.set_defaults(handler=_run)
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
