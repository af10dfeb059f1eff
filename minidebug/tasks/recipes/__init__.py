"""Environment recipes: how to build the venv of a repository at a version, kept as data.

A recipe table is a TOML file for one repository family:

    repositories = ["pydicom/pydicom"]      # the "owner/name"s it serves

    [defaults]                              # every version starts from these
    python = "3.11"
    packages = ["numpy<2"]                  # pip requirements, installed first
    requirement_files = ["requirements/dev.txt", "requirements.txt"]  # the first found in the checkout
                                            # is pip-installed (a conda environment.yml too), then `packages`
                                            # again so their pins hold, before `pre_install`
    pre_install = []                        # commands run in the checkout before `install`
    install = ["python -m pip install --no-deps -e ."]
    test = "python -m pytest -rA"           # how importers write a task's eval (test files are appended)
    system = ["ffmpeg", "lib:Xrender", "locale:en_US.UTF-8"]  # what pip cannot give: programs, shared
    system_install = "apt-get install -y ffmpeg libxrender1"   # libraries, locales; named when missing here

    [versions."2.0"]                        # a version's fields replace the defaults' ones
    python = "3.8"

    [versions."1.0, 1.1"]                   # several versions that share their fields

Tables are looked for in the folders of `$MINIDEBUG_RECIPES` (separated by the OS's path separator), then
among the tables bundled here. Of the tables that name the repository, the first with a `[defaults]` gives
the defaults and the first that lists the version gives that version's fields: so a table of your own
replaces just the entries it writes. A version no table lists gets the fields of the nearest listed one
(the newest listed not newer than it; the oldest listed, for a version older than all). A task then shares
its venv with every task whose resolved recipe, repository and environment commit are the same.

The bundled tables of SWE-bench's repositories are generated from its harness specs by
`python -m minidebug.tasks.recipes.from_swebench`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import TaskError
from ..fields import PythonVersion

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

BUNDLED = Path(__file__).resolve().parent


class Recipe(BaseModel):
    """What a venv is built from; the commands run in a checkout of the project with the venv on PATH."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    python: PythonVersion | None = None
    packages: list[str] = []
    requirement_files: list[str] = []
    pre_install: list[str] = []
    install: list[str] = []
    test: str | None = None
    system: list[str] = []
    system_install: str = ""

    def updated(self, fields: dict) -> Recipe:
        """This recipe with some fields replaced (validated)."""
        return Recipe.model_validate({**self.model_dump(), **fields})

    def commands(self) -> list[str]:
        """The commands run in the checkout: the first requirement file found (then `packages` again, so
        their pins hold), `pre_install`, `install`."""
        if not self.requirement_files:
            return self.pre_install + self.install
        source = _INSTALL_REQUIREMENTS.read_text(encoding="utf-8")
        pinned = [shlex.join(["python", "-m", "pip", "install", *self.packages])] if self.packages else []
        return [shlex.join(["python", "-c", source, *self.requirement_files]), *pinned,
                *self.pre_install, *self.install]

    def lacking(self, named_in: str | None = None) -> str:
        """What of `system` this machine lacks, as a sentence saying how to get it (or ""); given `named_in`
        (why a build step failed), only what that text names."""
        missing = [need for need in self.system if not _present(need)
                   and (named_in is None or _named(need, named_in))]
        if not missing:
            return ""
        kinds = {"lib": "the library", "locale": "the locale"}
        named = [f"{kinds.get(need.rpartition(':')[0], 'the program')} {need.rpartition(':')[2]}" for need in missing]
        how = f" ({self.system_install})" if self.system_install else ""
        return (f"this machine lacks {', '.join(named)}, which the recipe's build or tests use and no pip "
                f"package gives{how}")


_INSTALL_REQUIREMENTS = BUNDLED / "requirement_files.py"


def _named(need: str, text: str) -> bool:
    """Whether `text` names a `system` entry: the program, the locale, or the library (also as `libX`, `-lX`)."""
    kind, _, name = need.rpartition(":")
    prefix = r"(?:lib|-l)?" if kind == "lib" else ""
    return re.search(rf"(?<![\w.-]){prefix}{re.escape(name)}(?![\w-])", text) is not None


def _present(need: str) -> bool:
    """Whether a `system` entry is here: a program on PATH, a `lib:` shared library, a `locale:` locale."""
    kind, _, name = need.rpartition(":")
    if kind == "lib":
        import ctypes.util

        return ctypes.util.find_library(name) is not None
    if kind == "locale":
        import locale

        saved = locale.setlocale(locale.LC_CTYPE)
        try:
            locale.setlocale(locale.LC_CTYPE, name)
        except locale.Error:
            return False
        finally:
            locale.setlocale(locale.LC_CTYPE, saved)
        return True
    return shutil.which(need) is not None


class RecipeTable(BaseModel):
    """One recipe file: a repository family's defaults and versions (their fields as written)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repositories: list[str] = Field(min_length=1)
    defaults: dict | None = None
    versions: dict[str, dict] = {}

    def listed(self) -> list[str]:
        """The versions the table names (a key may name several, separated by commas)."""
        return [version for key in self.versions for version in _names(key)]

    def fields_of(self, version: str | None) -> dict | None:
        """The fields written for a version, or None when the table does not name it (versions are compared
        as numbers: "2022.06" is "2022.6", "v5.3" is "5.3")."""
        if version is None:
            return None
        wanted = _numbers(version)
        return next((fields for key, fields in self.versions.items()
                     if any(_numbers(name) == wanted for name in _names(key))), None)


def _names(key: str) -> list[str]:
    return [name for name in re.split(r"[,\s]+", key) if name]


def _numbers(version: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in version.strip().lstrip("vV").split("."))


def recipe_dirs() -> list[Path]:
    """Where recipe tables are looked for, in order: `$MINIDEBUG_RECIPES`, then the bundled ones."""
    configured = os.environ.get("MINIDEBUG_RECIPES", "")
    return [Path(p).expanduser() for p in configured.split(os.pathsep) if p] + [BUNDLED]


def find_recipe(repository: str, version: str | None, dirs: list[Path] | None = None) -> Recipe:
    """The recipe of a repository ("owner/name") at a version.

    Raises:
        TaskError: no table names the repository, or a table is malformed.
    """
    tables = _tables(repository, dirs)
    if not tables:
        looked = ", ".join(str(d) for d in (dirs if dirs is not None else recipe_dirs()))
        raise TaskError(f"no environment recipe for {repository} (looked in {looked}); write a table for it "
                        "(see minidebug.tasks.recipes) in a folder named by $MINIDEBUG_RECIPES")
    defaults = next((table.defaults for table in tables if table.defaults is not None), {})
    used = settings_version(tables, version)
    fields = next((found for table in tables if (found := table.fields_of(used)) is not None), {})
    return Recipe.model_validate({**defaults, **fields})


def _tables(repository: str, dirs: list[Path] | None = None) -> list[RecipeTable]:
    """The tables that name the repository, in the order they are looked for."""
    return [table for folder in (dirs if dirs is not None else recipe_dirs())
            for path in sorted(Path(folder).glob("*.toml"))
            for table in [load_table(path)] if repository in table.repositories]


def settings_version(tables: list[RecipeTable], version: str | None) -> str | None:
    """The listed version whose fields a version gets: itself when a table lists it; else the nearest listed
    one (the newest listed not newer than it, or the oldest listed for a version older than all), so that a
    version newer than the table gets the newest settings, not the defaults; None without a version or a
    listed one."""
    listed = [name for table in tables for name in table.listed()]
    if version is None or not listed or any(_numbers(name) == _numbers(version) for name in listed):
        return version
    older = [name for name in listed if _order(name) < _order(version)]
    return max(older, key=_order) if older else min(listed, key=_order)


def nearest_note(repository: str, version: str | None) -> str:
    """A sentence saying which listed version's settings an unlisted version of `repository` gets, or ""."""
    try:
        tables = _tables(repository)
    except TaskError:
        return ""
    used = settings_version(tables, version)
    return "" if used == version else (f"version {version} is not in the recipe of {repository}: its venv is "
                                       f"built with the settings of {used}, the nearest listed version")


def _order(version: str) -> tuple:
    """A version as a key that orders it among others (numbers as numbers, words after them)."""
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in _numbers(version))


def load_table(path: Path) -> RecipeTable:
    """A recipe file, parsed and validated.

    Raises:
        TaskError: the file is not valid TOML or not a recipe table.
    """
    return _load(Path(path), Path(path).stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _load(path: Path, mtime: int) -> RecipeTable:
    try:
        table = RecipeTable.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{path}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise TaskError(f"{path}: not a recipe table: {_problems(exc)}") from None
    for where, fields in [("defaults", table.defaults or {}), *(
            (f"versions.{version}", fields) for version, fields in table.versions.items())]:
        try:
            Recipe.model_validate(fields)
        except ValidationError as exc:
            raise TaskError(f"{path}: {where}: {_problems(exc)}") from None
    return table


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'table'}: {e['msg']}" for e in exc.errors())


def task_environment(spec) -> tuple[Recipe, str]:
    """The recipe a `[source]` task's venv is built from, and the commit its commands install from.

    Without an `[environment]`, the task's own `python`, `requirements` and `source.setup` make the recipe
    and the commands install from the task's commit. The task's `requirements` are always added.

    Raises:
        TaskError: the named recipe is not found or is malformed.
    """
    source, environment = spec.source, spec.environment
    if environment is None:
        return Recipe(python=spec.python, packages=spec.requirements, install=source.setup), source.commit
    recipe = find_recipe(environment.recipe, environment.version) if environment.recipe else Recipe()
    replaced = environment.model_dump(include={"python", "packages", "pre_install", "install"}, exclude_none=True)
    recipe = recipe.updated(replaced)
    added = [r for r in spec.requirements if r not in recipe.packages]
    return recipe.updated({"packages": recipe.packages + added}), environment.commit or source.commit
