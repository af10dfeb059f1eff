"""Real repositories without containers: a recipe's cold build, a further instance of it, and reset.

    python benchmarks/bench_recipes.py --repo CLONE --repository owner/name --version V --env-commit SHA
                                       [--instances 10] [--runs 30]

Makes `--instances` `[source]` tasks of the repository at first-parent ancestors of the environment commit,
all naming the same recipe (the bundled table, or one under $MINIDEBUG_RECIPES), in a new cache. Then:
- cold: the repository's clone into the cache, then the first task's make + first reset (which builds the
  recipe's venv); beside them, plain `git clone --bare`, and the recipe done by hand (virtualenv, pip install
  of its packages, its commands in a plain checkout), measured in the same run;
- each further instance: make + first reset, beside a plain `git clone --shared` + checkout of its commit;
- reset after an edit and a new file, beside plain `git checkout -f && git clean -fdx` in a plain clone.
Prints a Markdown table (milliseconds).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import minidebug
from minidebug.store.repos import shared_store
from minidebug.tasks.recipes import find_recipe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import print_table, row  # noqa: E402


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def write_task(root: Path, name: str, repo: Path, commit: str, repository: str, version: str, env_commit: str) -> Path:
    task = root / name
    task.mkdir(parents=True)
    (task / "task.toml").write_text(
        f'description = "{name}"\neval = "python -m pytest -q"\n\n[source]\ngit = "{repo}"\ncommit = "{commit}"\n\n'
        f'[environment]\nrecipe = "{repository}"\nversion = "{version}"\ncommit = "{env_commit}"\n')
    return task


def once(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, required=True, help="a local clone")
    parser.add_argument("--repository", required=True, help="owner/name, as the recipe tables name it")
    parser.add_argument("--version", required=True)
    parser.add_argument("--env-commit", required=True)
    parser.add_argument("--instances", type=int, default=10)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    repo = args.repo.resolve()
    env_commit = git(repo, "rev-parse", args.env_commit)
    commits = git(repo, "rev-list", "--first-parent", f"--max-count={args.instances * 3}", env_commit).split()[1::3]
    work = Path(tempfile.mkdtemp(prefix="minidebug-bench-recipes-"))
    cache = work / "cache"
    tasks = [write_task(work / "tasks", f"instance-{i}", repo, c, args.repository, args.version, env_commit)
             for i, c in enumerate(commits[:args.instances])]
    files = len(git(repo, "ls-tree", "-r", "--name-only", commits[0]).splitlines())
    rows = []
    try:
        clone = once(lambda: shared_store(cache, str(repo), [commits[0], env_commit]))
        bare_clone = once(lambda: git(work, "clone", "--quiet", "--bare", str(repo), str(work / "plain.git")))
        rows.append(row("cold: the repository's clone into the cache", [clone],
                        "git clone --bare", [bare_clone]))

        def first():
            with minidebug.make(tasks[0], cache_dir=cache) as env:
                env.reset()
        cold = once(first)
        recipe = find_recipe(args.repository, args.version)

        def by_hand():
            from virtualenv import cli_run

            from minidebug.store.interpreters import find_python

            target, checkout = work / "plain-venv", work / "plain-checkout"
            shutil.rmtree(target, ignore_errors=True)
            shutil.rmtree(checkout, ignore_errors=True)
            cli_run([str(target), "--python", find_python(recipe.python), "--quiet"], setup_logging=False)
            subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", *recipe.packages,
                            "pytest"], check=True)
            git(work, "clone", "--quiet", "--shared", str(work / "plain.git"), str(checkout))
            git(checkout, "checkout", "--quiet", "--detach", env_commit)
            path = {"PATH": f"{target / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(target),
                    "HOME": os.environ.get("HOME", "/")}
            for command in recipe.pre_install + recipe.install:
                subprocess.run(shlex.split(command), cwd=checkout, env=path, check=True, capture_output=True)
        rows.append(row("cold: first instance, make + first reset (builds the venv)", [cold],
                        "the same recipe by hand: virtualenv, pip, install commands", [once(by_hand)]))

        further, plain = [], []
        for index, task in enumerate(tasks[1:], start=1):
            def make_and_reset():
                with minidebug.make(task, cache_dir=cache) as env:
                    env.reset()
            further.append(once(make_and_reset))
            target = work / f"plain-{index}"
            plain.append(once(lambda: (git(work, "clone", "--quiet", "--shared", "--no-checkout",
                                           str(work / "plain.git"), str(target)),
                                       git(target, "checkout", "--quiet", "--detach", commits[index]))))
        rows.append(row("another instance of the built recipe: make + first reset", further,
                        "git clone --shared + checkout", plain))

        target = work / "plain-0"
        git(work, "clone", "--quiet", "--shared", "--no-checkout", str(work / "plain.git"), str(target))
        git(target, "checkout", "--quiet", "--detach", commits[0])
        some_file = git(target, "ls-files", "*.py").splitlines()[0]

        def dirty(root: Path) -> None:
            (root / some_file).write_text("changed = True\n")
            (root / "scratch_minidebug.txt").write_text("new")

        with minidebug.make(tasks[0], cache_dir=cache) as env:
            env.reset()
            time.sleep(1.1)  # past the second the worktree was written in (git's racy-clean window)
            resets = []
            for _ in range(args.runs):
                dirty(env.workspace.root)
                resets.append(once(env.reset))
        bare = []
        for _ in range(args.runs):
            dirty(target)
            bare.append(once(lambda: (git(target, "checkout", "--quiet", "-f", commits[0]),
                                      git(target, "clean", "-fdxq"))))
        rows.append(row(f"reset after an edit and a new file ({files} files)", resets,
                        "git checkout -f && git clean -fdx", bare))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.repository} {args.version}: {len(tasks)} instances, {files} files\n")
    print_table(rows)


if __name__ == "__main__":
    main()
