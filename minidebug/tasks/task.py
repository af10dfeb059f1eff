"""Task folders: `task.toml` (see spec.py) + `repo/` + `solution.patch`; and debug-gym's folders."""

from __future__ import annotations

import difflib
import hashlib
import os
import shlex
import sys
from pathlib import Path

from pydantic import ValidationError

from ..errors import TaskError
from .command import django_label, eval_command, unittest_id
from .globs import GlobSet
from .harness import Harness
from .spec import TaskSpec, check_requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

BUNDLED_TASKS = Path(__file__).resolve().parents[2] / "tasks"
SMOKE_TASKS = Path(__file__).resolve().parents[1] / "smoke_tasks"  # tiny tasks shipped inside the package


class Task:
    """A loaded, validated task folder.

    Attributes:
        name: the folder's name.
        root: the task folder.
        spec: the parsed task.toml.
        repo: the starting project (`root/repo`).
        solution: the gold patch, if the task ships one.
    """

    def __init__(self, root: Path, spec: TaskSpec, repo: Path | None = None,
                 meta_files: tuple[str, ...] = ("task.toml",), added_requirements: tuple[str, ...] = ()):
        self.root = root
        self.added_requirements = added_requirements
        self.name = root.name
        self.spec = spec
        # For a [source] task, the cache sets `repo` to its checkout of the commit.
        self.repo = repo if repo is not None or spec.source is not None else root / "repo"
        self.meta_files = meta_files
        solution = root / "solution.patch"
        self.solution: Path | None = solution if solution.is_file() else None
        self.readonly = GlobSet(spec.readonly)
        self.hidden = GlobSet(spec.hidden)
        self.harness = Harness(self.readonly, self.hidden, GlobSet(spec.agent_owned))
        self.binary = GlobSet(spec.binary)

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def eval_command(self) -> list[str]:
        return shlex.split(self.spec.eval)

    @property
    def entrypoint(self) -> list[str]:
        """What pdb runs: task.toml's `entrypoint`; else, for a task whose eval is pytest and that names
        `fail_to_pass` tests, the eval command with its test paths narrowed to those tests (so that `b` + `c`
        stops in a failing test, not in one that passes; for Django's runtests.py, its labels); else the eval
        command."""
        if self.spec.entrypoint:
            return shlex.split(self.spec.entrypoint)
        command = self.eval_command
        if not self.spec.fail_to_pass:
            return command
        try:
            read = eval_command(command)
        except TaskError:
            return command
        args = read.args
        if read.runner == "django":  # run by python (pdb runs it so), on the labels of the fail_to_pass tests
            labels = [django_label(test) for test in self.spec.fail_to_pass if unittest_id(test)]
            return ["python", read.script] + read.with_labels(list(dict.fromkeys(labels)))
        ids = list(dict.fromkeys(_runnable_id(test) for test in self.spec.fail_to_pass))
        files = {test.split("::", 1)[0] for test in ids}
        kept = [arg for arg in args if arg.startswith("-") or not any(
            f == arg.rstrip("/") or f.startswith(arg.rstrip("/") + "/") for f in files)]
        return command[:len(command) - len(args)] + kept + ids

    def repo_files(self) -> list[str]:
        """Every file of repo/ as a sorted POSIX path relative to repo/ (`.git` left out)."""
        assert self.repo is not None, "repo/, or for a [source] task the cache's checkout (store.cache.prepare)"
        files: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.repo):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            rel = Path(dirpath).relative_to(self.repo)
            files.extend((rel / name).as_posix() for name in filenames)
        return sorted(files)

    def with_requirements(self, requirements: list[str] | tuple[str, ...]) -> Task:
        """This task with more pip requirements in its venv (and in its content hash: its counted tests are
        measured with them).

        Raises:
            TaskError: a requirement is not a valid PEP 508 requirement.
        """
        added = tuple(r for r in requirements if r not in self.spec.requirements)
        if not added:
            return self
        for requirement in added:
            check_requirement(requirement, "requirements=")
        spec = self.spec.model_copy(update={"requirements": [*self.spec.requirements, *added]})
        return Task(self.root, spec, self.repo, self.meta_files, self.added_requirements + added)

    def content_hash(self) -> str:
        """A hash of everything that shapes the episode: task.toml, repo/, the patch, added requirements."""
        digest = hashlib.sha256()
        if self.added_requirements:
            digest.update(b"requirements\0" + "\0".join(self.added_requirements).encode())
        for meta in self.meta_files:
            digest.update((self.root / meta).read_bytes() if (self.root / meta).is_file() else b"-")
        source = self.spec.source
        if source is not None:  # the commit pins the repository's files
            if source.test_patch:
                digest.update((self.root / source.test_patch).read_bytes())
            if self.solution is not None:
                digest.update(b"solution\0" + self.solution.read_bytes())
            return digest.hexdigest()[:16]
        assert self.repo is not None, "a task without a [source] has its repo/"
        for rel in self.repo_files():
            path = self.repo / rel
            digest.update(rel.encode() + b"\0")
            digest.update(b"x" if os.access(path, os.X_OK) else b"-")
            digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
            digest.update(b"\0")
        if self.solution is not None:
            digest.update(b"solution\0" + self.solution.read_bytes())
        return digest.hexdigest()[:16]

    def __repr__(self) -> str:
        return f"Task({self.name!r}, root={str(self.root)!r})"


def bundled_task_names() -> list[str]:
    """Names of the tasks shipped in tasks/."""
    if not BUNDLED_TASKS.is_dir():
        return []
    return sorted(p.name for p in BUNDLED_TASKS.iterdir() if (p / "task.toml").is_file())


def smoke_task_paths() -> list[Path]:
    """Folders of the smoke tasks shipped with the package (tiny, solved in seconds)."""
    return sorted(p for p in SMOKE_TASKS.iterdir() if (p / "task.toml").is_file())


def resolve_task_path(path_or_name: str | os.PathLike) -> Path:
    """A task folder path, or a bundled task name, to the folder's path.

    Raises:
        TaskError: no such folder or bundled task (the closest names are suggested).
    """
    path = Path(path_or_name)
    if path.is_dir():
        return path.resolve()
    name = str(path_or_name)
    for folder in (BUNDLED_TASKS, SMOKE_TASKS):
        if "/" not in name and name and (folder / name / "task.toml").is_file():
            return (folder / name).resolve()
    names = bundled_task_names()
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else (f"; bundled tasks: {', '.join(names)}" if names else "")
    raise TaskError(f"no task folder or bundled task named {name!r}{hint}")


def load_task(path_or_name: str | os.PathLike) -> Task:
    """Load and validate a task folder (or a bundled task by name).

    Raises:
        TaskError: the folder is missing or malformed; the message names the file and field.
    """
    root = resolve_task_path(path_or_name)
    toml_path = root / "task.toml"
    if not toml_path.is_file() and is_debug_gym_folder(root):
        return load_debug_gym_folder(root)
    if not toml_path.is_file():
        raise TaskError(f"{toml_path}: missing task.toml")
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskError(f"{toml_path}: not valid TOML: {exc}") from None
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise TaskError(f"{toml_path}: {_describe(exc)}") from None
    if spec.environment is not None:
        if spec.source is None:
            raise TaskError(f"{toml_path}: [environment] needs a [source]: its commands install from the repository")
        clash = [name for name, value in (("python", spec.python), ("source.setup", spec.source.setup)) if value]
        if clash:
            raise TaskError(f"{toml_path}: field {clash[0]!r}: with an [environment], the recipe says it "
                            "(set it in [environment] instead)")
    if spec.source is not None:
        if spec.source.test_patch and not (root / spec.source.test_patch).is_file():
            raise TaskError(f"{toml_path}: field 'source.test_patch': no file {spec.source.test_patch!r}")
        return Task(root, spec, repo=None)
    if not (root / "repo").is_dir():
        raise TaskError(f"{root / 'repo'}: missing repo/ folder")
    return Task(root, spec)


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "(top level)"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        parts.append(f"field {field!r}: {message}")
    return "; ".join(parts)


DEBUG_GYM_FILES = (".debugignore", ".debugreadonly")
DEBUG_GYM_DESCRIPTION = "The tests in test.py fail. Find the bug in the code and fix it; do not change test.py."


def is_debug_gym_folder(root: Path) -> bool:
    """A folder in debug-gym's layout: code, test.py, and .debugignore / .debugreadonly."""
    return (root / "test.py").is_file() and any((root / name).is_file() for name in DEBUG_GYM_FILES)


def _patterns(path: Path) -> list[str]:
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _requirements_file(path: Path) -> list[str]:
    requirements = []
    for line in _patterns(path):
        requirement = line.split(" #", 1)[0].strip()
        check_requirement(requirement, str(path))
        requirements.append(requirement)
    return requirements


def load_debug_gym_folder(root: Path) -> Task:
    """Load a debug-gym folder as a task: `.debugignore` globs are hidden, `.debugreadonly` ones read-only
    (both with gitignore semantics), test.py is read-only, eval is `python -m pytest -sq test.py`, and a
    `requirements.txt` (plain requirements, one per line) goes into the task's venv.

    Raises:
        TaskError: a pattern file holds a bad glob, or requirements.txt a line that is no requirement.
    """
    requirements = _requirements_file(root / "requirements.txt")
    try:
        spec = TaskSpec(
            description=DEBUG_GYM_DESCRIPTION,
            eval="python -m pytest -sq test.py",
            requirements=requirements,
            hidden=_patterns(root / ".debugignore") + list(DEBUG_GYM_FILES),
            readonly=_patterns(root / ".debugreadonly") + ["/test.py"],
            tags=["debug-gym"],
        )
    except ValidationError as exc:
        raise TaskError(f"{root}/.debugignore or .debugreadonly: {_describe(exc)}") from None
    return Task(root, spec, repo=root, meta_files=DEBUG_GYM_FILES)


def _runnable_id(test: str) -> str:
    """A pytest id as pytest accepts it on the command line: one cut at a space (SWE-bench's logs do that to
    parametrized ids) stands for every parameter of its test."""
    if "[" in test and not test.endswith("]"):
        return test.split("[", 1)[0]
    return test
