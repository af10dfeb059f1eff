"""SWE-bench-format instances (SWE-bench, SWE-Gym, SWE-smith, R2E-Gym) as `[source]` task folders.

An instance file is a JSON list or JSON lines of objects with `instance_id`, `repo` ("owner/name"),
`base_commit`, `patch` (the gold fix), `test_patch`, `problem_statement`, and `FAIL_TO_PASS` /
`PASS_TO_PASS` (lists, or lists written as JSON strings: both occur). Each becomes `<out>/<instance_id>/`:
the repository at the base commit (a local clone under `--repos`, as `<owner>__<name>` or `<name>`; without
`--repos`, or with `fetch_missing` for a repository missing there, its GitHub URL), the test patch applied
with its files read-only, the gold patch as solution.patch, an eval that runs the test files of the test patch
and of every listed test, and SWE-bench's scoring (every FAIL_TO_PASS test passes and no PASS_TO_PASS test
breaks).

The venv comes from the environment recipe of the instance's repository and `version` (see
minidebug.tasks.recipes), installed from its `environment_setup_commit`, so instances of one version share it;
`--setup` commands replace the recipe (one venv per instance, installed from its base commit).

A local clone must give every file of the commits a task uses: an instance whose clone is missing, shallow or
partial without them, or unreadable (a corrupt pack) fails, saying why, and no task folder is written for it.
Test ids cut short at a space by SWE-bench's log parser are kept, and scored by prefix as SWE-bench does.
Django's unittest ids run through its tests/runtests.py (read-only, as the test files are), and sympy's bare
test names become pytest node ids (see test_ids).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import TaskError
from ..command import unittest_id
from ..patch import FilePatch, parse_patch
from ..recipes import find_recipe, nearest_note
from .clones import CloneError, check_commit, find_clone
from .common import ImportReport, toml_string
from .test_ids import DJANGO_SCRIPT, django_labels, eval_prefix, id_shape, node_ids, patched, read_at

REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement")
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def read_instances(path: Path) -> list[dict[str, Any]]:
    """The instances of a JSON (a list) or JSON lines file.

    Raises:
        TaskError: the file is neither, or holds something other than objects.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        instances = data if isinstance(data, list) else [data]
    except ValueError:
        try:
            instances = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as exc:
            raise TaskError(f"{path}: neither a JSON list nor JSON lines: {exc}") from None
    if not all(isinstance(item, dict) for item in instances):
        raise TaskError(f"{path}: every instance must be a JSON object")
    return instances


# Files of a test patch that are data, not tests: SWE-bench's harness leaves them out of the test command (pytest,
# given one, collects nothing from it and stops: "found no collectors for tests/static/config.toml").
NON_TEST_EXTENSIONS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")


def parse_test_ids(value: Any, field: str) -> list[str]:
    """A FAIL_TO_PASS / PASS_TO_PASS value as a list of test ids (it may be a list or a JSON string of one)."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError as exc:
            raise ValueError(f"{field} is a string but not a JSON list: {exc}") from None
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{field} must be a list of test ids")
    return value


def portable(test_id: str, machine_paths: Iterable[str] = ()) -> bool:
    """Whether a recorded test id can name a test here: no path of the machine that recorded it among its
    parameters, that is no absolute path of two or more parts (`/n/fs/data/a.dcm`, `/tmp/pytest-of-u/x`)
    and nothing under `machine_paths`. A root or one-part path (`[/-True]`, `[/projects-False]`) is a
    literal of the test, the same on every machine, and kept. An id cut short at a space (an unclosed `[`)
    is kept: scoring matches it by prefix, as SWE-bench does (see minidebug.scoring.ids)."""
    name = test_id.split("::", 1)[-1]
    if "[" not in name:
        return True
    if any(path and path in name for path in machine_paths):
        return False
    return not re.search(r"[\[-]/[^/\[\]-][^/\[\]]*/", name)


def select_instances(instances: list[dict[str, Any]], pattern: str | None = None,
                     window: str | None = None) -> list[dict[str, Any]]:
    """Those whose instance_id matches the regular expression `pattern`, then the Python slice `window`
    ("10:20", ":5") of them.

    Raises:
        ValueError: a bad pattern or slice.
    """
    if pattern:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"--filter {pattern!r}: {exc}") from None
        instances = [i for i in instances if regex.search(str(i.get("instance_id", "")))]
    if window:
        match = re.fullmatch(r"(-?\d*):(-?\d*)", window.strip())
        if not match:
            raise ValueError(f"--slice {window!r}: expected START:END, e.g. 0:10")
        start, end = (int(part) if part else None for part in match.groups())
        instances = instances[start:end]
    return instances


def import_swebench(instances_file: Path, out: Path, repos: Path | None = None, pattern: str | None = None,
                    window: str | None = None, setup: Iterable[str] = (), fetch_missing: bool = False) -> ImportReport:
    """Write one task folder per selected instance under `out`; `setup` commands (e.g. "pip install -e .")
    replace the recipe: they run once into each task's venv, in a checkout of its base commit.

    With `repos`, an instance whose repository has no clone there fails (its row says so), unless
    `fetch_missing`: then its task names the GitHub URL. A clone is checked, without network, to hold every
    object of the commits the task uses; an instance whose clone does not fails.

    Raises:
        TaskError: the instance file cannot be read.
        ValueError: a bad filter or slice.
    """
    report = ImportReport()
    sources = _Sources(repos, fetch_missing)
    for instance in select_instances(read_instances(instances_file), pattern, window):
        name = str(instance.get("instance_id", "?"))
        try:
            task, dropped, unnamed, fragments = _write_task(instance, Path(out), sources, list(setup))
        except ValueError as exc:
            report.skipped[name] = str(exc)
            continue
        except CloneError as exc:
            report.failed[name] = str(exc)
            continue
        report.made.append(task)
        notes = []
        if dropped:
            notes.append(f"{dropped} PASS_TO_PASS id(s) left out: naming a path of the machine that recorded "
                         "them, so no run here can produce them")
        if fragments:
            notes.append(f"{fragments} PASS_TO_PASS id(s) left out: not test ids but pieces of the log SWE-bench's "
                         "parser took for them (`[100%]`), where every FAIL_TO_PASS id is a node id")
        if unnamed:
            notes.append(f"{unnamed} PASS_TO_PASS id(s) left out: not Django's `name (module.Class)` (a docstring's "
                         "first line, as newer SWE-bench logs record some tests), so no run here reports them")
        if not setup and _recipe(instance) is None:
            notes.append(f"no environment recipe for {instance['repo']}: its venv has pytest only "
                         "(write a recipe table, or pass --setup)")
        elif not setup and (nearest := nearest_note(instance["repo"], _version(instance))):
            notes.append(nearest)
        if notes:
            report.notes[name] = "; ".join(notes)
    return report


def _recipe(instance: dict[str, Any]):
    """The instance's recipe, or None when no table names its repository."""
    try:
        return find_recipe(instance["repo"], _version(instance))
    except TaskError:
        return None


def _version(instance: dict[str, Any]) -> str | None:
    version = instance.get("version")
    return str(version) if version not in (None, "") else None


def _write_task(instance: dict[str, Any], out: Path, sources: _Sources,
                setup: list[str]) -> tuple[Path, int, int, int]:
    missing = [key for key in REQUIRED if not isinstance(instance.get(key), str) or not instance[key]]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    name = instance["instance_id"]
    if not _SAFE_NAME.fullmatch(name):
        raise ValueError("instance_id is not a usable folder name")
    fail_to_pass = parse_test_ids(instance.get("FAIL_TO_PASS"), "FAIL_TO_PASS")
    pass_to_pass = parse_test_ids(instance.get("PASS_TO_PASS"), "PASS_TO_PASS")
    if not fail_to_pass:
        raise ValueError("FAIL_TO_PASS is empty: nothing shows the bug")
    fragments = 0
    if all("::" in test for test in fail_to_pass):
        kept = [test for test in pass_to_pass if "::" in test]
        fragments, pass_to_pass = len(pass_to_pass) - len(kept), kept
    shape = id_shape(fail_to_pass + pass_to_pass)
    if shape == "mixed":
        raise ValueError("its test ids are not all of one shape: pytest node ids (path::name), Django's "
                         "(`name (module.Class)`) or bare test names (sympy's)")
    unnamed = 0
    if shape == "django":
        fail_to_pass, pass_to_pass, unnamed = _django_ids(fail_to_pass, pass_to_pass)
    if not all(portable(test) for test in fail_to_pass):
        raise ValueError("a FAIL_TO_PASS id names a path of the machine that recorded it")
    kept = [test for test in pass_to_pass if portable(test)]
    dropped, pass_to_pass = len(pass_to_pass) - len(kept), kept
    test_patches = [p for p in _parsed(instance, "test_patch") if p.new_path]
    _parsed(instance, "patch")
    test_files = sorted({p.new_path for p in test_patches if p.new_path})  # each of them: see test_patches
    recipe = None if setup else _recipe(instance)
    environment_commit = instance.get("environment_setup_commit")
    environment_commit = environment_commit if isinstance(environment_commit, str) and environment_commit else None
    commits = [instance["base_commit"]] + ([environment_commit] if recipe is not None and environment_commit else [])
    repository = sources.repository(instance["repo"], commits)
    if shape == "bare":
        fail_to_pass, pass_to_pass = _node_ids(fail_to_pass, pass_to_pass, test_patches, repository,
                                               instance["base_commit"])
    run_files = sorted({f for f in test_files if not f.endswith(NON_TEST_EXTENSIONS)}
                       | {test.split("::", 1)[0] for test in fail_to_pass + pass_to_pass})
    test_command = eval_prefix(recipe.test if recipe is not None else None, shape)
    if shape == "django":
        if Path(repository).is_dir() and read_at(repository, instance["base_commit"], DJANGO_SCRIPT) is None:
            raise ValueError(f"its test ids are Django's (`name (module.Class)`), but the repository has no "
                             f"{DJANGO_SCRIPT} at the base commit to run them")
        run_files = django_labels(test_files, fail_to_pass + pass_to_pass)
        owned = sorted(set(test_files) | {DJANGO_SCRIPT})  # the script that runs the tests is the task's
    else:
        owned = test_files
    task = out / name
    task.mkdir(parents=True, exist_ok=True)
    (task / "solution.patch").write_text(instance["patch"], encoding="utf-8")
    (task / "test.patch").write_text(instance["test_patch"], encoding="utf-8")
    version = _version(instance)
    tags = ["swebench", instance["repo"]] + ([version] if version else [])
    lines = [
        f"description = {toml_string(instance['problem_statement'].strip())}",
        f"eval = {toml_string(test_command + ' ' + ' '.join(run_files))}",
        f"readonly = [{', '.join(toml_string(f) for f in owned)}]",
        f"fail_to_pass = [{', '.join(toml_string(t) for t in fail_to_pass)}]",
        f"pass_to_pass = [{', '.join(toml_string(t) for t in pass_to_pass)}]",
        f"tags = [{', '.join(toml_string(t) for t in tags)}]",
        "",
        "[source]",
        f"git = {toml_string(repository)}",
        f"commit = {toml_string(instance['base_commit'])}",
        f"setup = [{', '.join(toml_string(c) for c in setup)}]",
        'test_patch = "test.patch"',
    ]
    if recipe is not None:
        lines += ["", "[environment]", f"recipe = {toml_string(instance['repo'])}"]
        lines += [f"version = {toml_string(version)}"] if version else []
        lines += [f"commit = {toml_string(environment_commit)}"] if environment_commit else []
    (task / "task.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return task, dropped, unnamed, fragments


def _parsed(instance: dict[str, Any], field: str) -> list[FilePatch]:
    """The file patches of the instance's `field` (`test_patch` or `patch`).

    Raises:
        ValueError: it does not parse, or names a path outside the project (`..`, absolute, `.git`): the
            reason names the patch, so no task that cannot load is written.
    """
    try:
        return parse_patch(instance[field])
    except (TaskError, ValueError) as exc:
        which = "the test patch" if field == "test_patch" else "the gold patch"
        raise ValueError(f"{which} (`{field}`) cannot be used: {exc}") from None


def _django_ids(fail_to_pass: list[str], pass_to_pass: list[str]) -> tuple[list[str], list[str], int]:
    """Django's ids as its runner names them (see test_ids), and how many PASS_TO_PASS ids are left out for
    naming no test (a docstring's first line).

    Raises:
        ValueError: a FAIL_TO_PASS id names no test.
    """
    named = [unittest_id(test) for test in fail_to_pass]
    unnamed = [test for test, found in zip(fail_to_pass, named) if found is None]
    if unnamed:
        raise ValueError(f"a FAIL_TO_PASS id is not Django's `name (module.Class)`: {unnamed[0][:80]!r} (newer "
                         "SWE-bench logs record some tests by their docstring's first line)")
    kept = [found for test in pass_to_pass if (found := unittest_id(test)) is not None]
    return [found for found in named if found is not None], kept, len(pass_to_pass) - len(kept)


def _node_ids(fail_to_pass: list[str], pass_to_pass: list[str], test_patches: list, repository: str,
              commit: str) -> tuple[list[str], list[str]]:
    """Bare test names as the node ids of the Python files the test patch touches (as patched).

    Raises:
        ValueError: the repository is not a local clone, or a name is in none of those files (or, for a
            FAIL_TO_PASS name, in several).
    """
    if not Path(repository).is_dir():
        raise ValueError("its test ids are bare test names: finding their files needs a local clone (--repos)")
    files = {p.new_path: patched(read_at(repository, commit, p.old_path) if p.old_path else None, p)
             for p in test_patches if p.new_path.endswith(".py")}
    return node_ids(fail_to_pass, files), node_ids(pass_to_pass, files, every=True)


class _Sources:
    """Where each repository's task clones from, with each local clone's commits checked once per import."""

    def __init__(self, repos: Path | None, fetch_missing: bool):
        self.repos, self.fetch_missing = repos, fetch_missing
        self.checked: dict[tuple[Path, str], str] = {}  # (clone, commit) -> why it fails, "" when it does not

    def repository(self, repo: str, commits: list[str]) -> str:
        """The local clone of `repo` that holds `commits` in full, or its GitHub URL.

        Raises:
            CloneError: `repos` was given and the clone is missing (without fetch_missing) or incomplete.
        """
        url = f"https://github.com/{repo}.git"
        if self.repos is None:
            return url
        clone = find_clone(self.repos, repo)
        if clone is None:
            if self.fetch_missing:
                return url
            raise CloneError(f"no clone of {repo} under {self.repos} (as {repo.replace('/', '__')} or "
                             f"{repo.partition('/')[2]}); clone it there, or pass --fetch-missing to use {url}")
        for commit in dict.fromkeys(commits):
            if (clone, commit) not in self.checked:
                try:
                    check_commit(clone, commit)
                    self.checked[clone, commit] = ""
                except CloneError as exc:
                    self.checked[clone, commit] = str(exc)
            if self.checked[clone, commit]:
                raise CloneError(self.checked[clone, commit])
        return str(clone)
