"""Environment recipes: tables as data, the interpreter search, and venvs and repositories shared by tasks."""

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import minidebug
from minidebug.agents.oracle import OracleAgent
from minidebug.errors import TaskError, WorkspaceError
from minidebug.store.interpreters import find_python
from minidebug.store.reasons import SetupError, reason, shown
from minidebug.store.repos import store_path
from minidebug.taskcheck.validate import validate_task
from minidebug.tasks.importers.swebench import import_swebench
from minidebug.tasks.recipes import BUNDLED, Recipe, find_recipe, load_table, nearest_note, task_environment
from minidebug.tasks.recipes.from_swebench import TABLES, write_tables
from minidebug.tasks.recipes.requirement_files import conda_lines, requirement_lines
from minidebug.tasks.task import load_task

FIXED_MARKER = "fixed-in-a-later-commit-7f3a"


def git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """A src-layout package with history: a good release, two commits that each bring a bug, and a later
    commit (the environment commit) that fixes both. Returns (repo, {name: commit})."""
    repo = tmp_path_factory.mktemp("upstream") / "mathlib"
    write(repo, {
        "pyproject.toml": """\
            [build-system]
            requires = ["setuptools"]
            build-backend = "setuptools.build_meta"
            [project]
            name = "mathlib"
            version = "1.0"
            dependencies = ["six"]
            [project.scripts]
            mathlib-double = "mathlib.ops:main"
            """,
        "src/mathlib/__init__.py": "",
        "src/mathlib/ops.py": """\
            def double(x):
                return 2 * x


            def negate(x):
                return -x


            def main():
                print(double(21))
            """,
        "tests/test_ops.py": """\
            import importlib.metadata

            import six
            from mathlib.ops import double, negate


            def test_negate():
                assert negate(3) == -3 and six.PY3


            def test_installed():
                assert importlib.metadata.version("mathlib").startswith("1.0")
            """,
    })
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "1.0")
    commits = {}
    ops = repo / "src" / "mathlib" / "ops.py"
    ops.write_text(ops.read_text().replace("return 2 * x", "return x + x + 1"))
    git(repo, "commit", "-qam", "faster double")
    commits["double_bug"] = git(repo, "rev-parse", "HEAD")
    ops.write_text(ops.read_text().replace("return -x", "return x"))
    git(repo, "commit", "-qam", "simpler negate")
    commits["negate_bug"] = git(repo, "rev-parse", "HEAD")
    ops.write_text(ops.read_text().replace("return x + x + 1", f"return 2 * x  # {FIXED_MARKER}")
                   .replace("return x\n", "return -x\n"))
    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text().replace('"1.0"', '"1.0.1"'))
    git(repo, "commit", "-qam", "both fixed")
    commits["fixed"] = git(repo, "rev-parse", "HEAD")
    return repo, commits


@pytest.fixture(scope="module")
def recipes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "mathlib.toml").write_text(textwrap.dedent("""\
        repositories = ["example/mathlib"]
        [defaults]
        packages = ["six==1.16.0", "setuptools", "wheel"]
        install = ["python -m pip install --no-build-isolation -e ."]
        test = "python -m pytest -rA"
        [versions."0.9"]
        packages = ["six==1.15.0", "setuptools", "wheel"]
        [versions."1.0"]  # the defaults (an unlisted version would get 0.9's, the nearest listed)
        """))
    return folder


def source_task(root: Path, repo: Path, commit: str, environment: str, name: str, fix: tuple[str, str]) -> Path:
    task = root / name
    task.mkdir(parents=True)
    old, new = fix
    (task / "solution.patch").write_text(
        f"--- a/src/mathlib/ops.py\n+++ b/src/mathlib/ops.py\n@@ -1,5 +1,5 @@\n def double(x):\n"
        f"-    return {old}\n+    return {new}\n \n \n def negate(x):\n" if name.startswith("double") else
        f"--- a/src/mathlib/ops.py\n+++ b/src/mathlib/ops.py\n@@ -5,3 +5,3 @@\n def negate(x):\n"
        f"-    return {old}\n+    return {new}\n \n")
    (task / "task.toml").write_text(textwrap.dedent(f"""\
        description = "{name}"
        eval = "python -m pytest -q tests"
        readonly = ["tests/**"]
        fail_to_pass = ["tests/test_ops.py::test_negate"]
        pass_to_pass = ["tests/test_ops.py::test_installed"]
        [source]
        git = "{repo}"
        commit = "{commit}"
        [environment]
        """) + environment)
    return task


# -- tables ------------------------------------------------------------------------------------------------

def test_bundled_tables_give_a_version_or_the_defaults():
    assert find_recipe("pydicom/pydicom", "2.0").python == "3.8"
    assert find_recipe("pydicom/pydicom", "9.9") == find_recipe("pydicom/pydicom", None)
    assert "setuptools<70" in find_recipe("pydicom/pydicom", "2.2").packages
    # Versions compare as numbers: a repository's "2022.6" is SWE-bench's "2022.06", "5.3" its "v5.3".
    assert find_recipe("pydata/xarray", "2022.6") == find_recipe("pydata/xarray", "2022.06")
    assert find_recipe("astropy/astropy", "5.3") == find_recipe("astropy/astropy", "v5.3") != \
        find_recipe("astropy/astropy", "4.3")


def test_an_unlisted_version_gets_the_nearest_listed_versions_settings(tmp_path, monkeypatch):
    (tmp_path / "mine.toml").write_text('repositories = ["x/y"]\n[defaults]\npython = "3.12"\n'
                                        '[versions."1.0, 1.2"]\npython = "3.8"\n[versions."2.0"]\npython = "3.10"\n')
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(tmp_path))
    wanted = {"2.0": "3.10", "2.10": "3.10", "3.1": "3.10", "1.9": "3.8", "1.10": "3.8", "0.9": "3.8", None: "3.12"}
    assert {version: find_recipe("x/y", version).python for version in wanted} == wanted
    assert nearest_note("x/y", "3.1") == ("version 3.1 is not in the recipe of x/y: its venv is built with the "
                                          "settings of 2.0, the nearest listed version")
    assert nearest_note("x/y", "1.2") == nearest_note("x/y", None) == ""


def test_a_users_table_wins_and_bad_tables_are_named(tmp_path, monkeypatch):
    (tmp_path / "mine.toml").write_text('repositories = ["pydicom/pydicom"]\n[versions."2.0"]\npython = "3.12"\n')
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(tmp_path))
    assert find_recipe("pydicom/pydicom", "2.0").python == "3.12"
    assert find_recipe("pydicom/pydicom", "2.2").python == "3.9"  # not in mine: the bundled table's
    (tmp_path / "mine.toml").write_text('repositories = ["x/y"]\n[versions."1"]\npython = "three"\n')
    with pytest.raises(TaskError, match=r"mine.toml: versions.1: python"):
        find_recipe("x/y", "1")
    (tmp_path / "mine.toml").write_text('repositories = ["x/y"]\ncolour = 1\n')
    with pytest.raises(TaskError, match=r"mine.toml: not a recipe table: colour"):
        find_recipe("x/y", "1")
    (tmp_path / "mine.toml").unlink()
    with pytest.raises(TaskError, match=r"no environment recipe for nobody/nothing .*MINIDEBUG_RECIPES"):
        find_recipe("nobody/nothing", "1")


def test_environment_fields_replace_the_recipe_and_requirements_add(tmp_path, upstream, recipes, monkeypatch):
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(recipes))
    repo, commits = upstream
    task = source_task(tmp_path, repo, commits["double_bug"], 'recipe = "example/mathlib"\npython = "3.11"\n',
                       "double_a", ("x + x + 1", "2 * x"))
    recipe, commit = task_environment(load_task(task).with_requirements(["attrs"]).spec)
    assert recipe.python == "3.11" and recipe.packages[-1] == "attrs" and commit == commits["double_bug"]


def test_environment_needs_a_source_and_owns_python(tmp_path):
    task = tmp_path / "t"
    (task / "repo").mkdir(parents=True)
    (task / "task.toml").write_text('description = "d"\neval = "python -m pytest"\n[environment]\npython = "3.11"\n')
    with pytest.raises(TaskError, match=r"\[environment\] needs a \[source\]"):
        load_task(task)
    (task / "task.toml").write_text('description = "d"\neval = "python -m pytest"\npython = "3.11"\n'
                                    '[source]\ngit = "x"\ncommit = "abcd"\n[environment]\n')
    with pytest.raises(TaskError, match=r"field 'python': with an \[environment\]"):
        load_task(task)


# -- SWE-bench's repositories -------------------------------------------------------------------------------

def swebench_specs():
    """SWE-bench's harness specs, or None when the installed swebench has none (5.0 dropped them)."""
    try:
        from minidebug.tasks.recipes.from_swebench import load_specs

        return load_specs()
    except SystemExit:
        return None


def test_every_bundled_table_gives_each_of_its_versions_an_environment():
    specs = swebench_specs()
    assert {load_table(BUNDLED / f"{name}.toml").repositories[0] for name, _ in TABLES.values()} == set(TABLES)
    for path in sorted(BUNDLED.glob("*.toml")):
        table = load_table(path)
        repository = table.repositories[0]
        assert table.listed(), path
        if specs is not None:
            assert sorted(table.listed()) == sorted(specs[0][repository]), path
        for version in table.listed():
            recipe = find_recipe(repository, version)
            assert recipe.python and recipe.packages and recipe.install and recipe.test, (path, version)
    # what the hand-written tables fixed stays
    for repository in ("pydicom/pydicom", "pylint-dev/astroid", "sqlfluff/sqlfluff"):
        packages = find_recipe(repository, "2.0").packages
        assert "setuptools<70" in packages and "pytest<8" in packages
    assert find_recipe("PyCQA/astroid", "2.15").install == ["python -m pip install --no-build-isolation -e ."]
    assert "toml" in find_recipe("pylint-dev/pylint", "2.13").packages  # its base commits' import, not its env's
    assert "docutils<0.22" in find_recipe("sphinx-doc/sphinx", "3.3").packages  # which has docutils.utils.roman
    assert "importlib-metadata" in find_recipe("pytest-dev/pytest", "4.6").packages  # its base commits import it
    assert "wcwidth" in find_recipe("pytest-dev/pytest", "5.4").packages  # and 5.4's this
    assert [p for p in find_recipe("pytest-dev/pytest", "4.5").packages if p.startswith("wcwidth")] == [
        "wcwidth==0.2.6"]  # where SWE-bench pins it, its pin
    assert find_recipe("django/django", "4.0").test.startswith("./tests/runtests.py --verbosity 2 --settings=")
    assert find_recipe("sympy/sympy", "1.12").test == "python -m pytest -rA"
    assert find_recipe("pyvista/pyvista", "0.43").system == ["lib:SM", "lib:Xext", "lib:Xrender"]
    assert "imageio-ffmpeg" in find_recipe("pyvista/pyvista", "0.43").packages  # its ffmpeg, from pip


SMALL_SPECS = {
    "pallets/flask": {
        "2.0": {"python": "3.9", "packages": "requirements.txt", "install": "python -m pip install -e .",
                "pip_packages": ["setuptools==70.0.0", "Werkzeug==2.3.7"], "test_cmd": "pytest -rA"},
        "2.1": {"python": "3.10", "packages": "requirements.txt", "install": "python -m pip install -e .",
                "pip_packages": ["setuptools==70.0.0", "Werkzeug==2.3.7"], "test_cmd": "pytest -rA"},
        "2.2": {"python": "3.11", "packages": "requirements.txt", "install": "python -m pip install -e .",
                "pip_packages": ["setuptools==70.0.0", "Werkzeug==2.3.7"], "test_cmd": "pytest -rA"},
    },
    "django/django": {
        "1.9": {"python": "3.5", "packages": "requirements.txt", "install": "python setup.py install",
                "pre_install": ["apt-get update && apt-get install -y locales", "locale-gen en_US.UTF-8"],
                "pip_packages": ["setuptools"], "eval_commands": ["export LANG=en_US.UTF-8"],
                "test_cmd": "./tests/runtests.py --verbosity 2"},
        "4.0": {"python": "3.8", "packages": "requirements.txt", "install": "python -m pip install -e .",
                "test_cmd": "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"},
    },
    "pyvista/pyvista": {
        "0.43": {"python": "3.9", "packages": "numpy=1.2 'scipy<2'", "install": "python -m pip install -e .",
                 "pip_packages": ["pytest", "numpy"], "test_cmd": "pytest -rA",
                 "pre_install": ["apt-get update && apt-get install -y ffmpeg libxrender1",
                                 "grep -q x setup.py && sed -i 's/x/y/' setup.py"]},
    },
}
SMALL_REQS = {"django/django": ["tests/requirements/py3.txt"], "pallets/flask": ["requirements/dev.txt"],
              "pyvista/pyvista": ["requirements_test.txt"]}
SMALL_TABLES = {
    "flask.toml": """\
        repositories = ["pallets/flask"]

        [defaults]
        python = "3.11"
        packages = ["setuptools==70.0.0", "Werkzeug==2.3.7"]
        requirement_files = ["requirements/dev.txt"]
        install = ["python -m pip install -e ."]
        test = "python -m pytest -rA"

        [versions."2.0"]
        python = "3.9"

        [versions."2.1"]
        python = "3.10"

        [versions."2.2"]  # the defaults
        """,
    "django.toml": """\
        repositories = ["django/django"]

        [defaults]
        python = "3.8"
        packages = ["setuptools<70"]
        requirement_files = ["tests/requirements/py3.txt"]
        install = ["python -m pip install -e ."]
        test = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"

        [versions."1.9"]
        python = "3.5"
        install = ["python -m pip install ."]
        test = "./tests/runtests.py --verbosity 2"
        system = ["locale:en_US.UTF-8"]
        system_install = "apt-get install -y locales && locale-gen en_US.UTF-8"

        [versions."4.0"]  # the defaults
        """,
    "pyvista.toml": """\
        repositories = ["pyvista/pyvista"]

        [defaults]
        python = "3.9"
        packages = ["setuptools<70", "numpy==1.2.*", "scipy<2", "pytest", "imageio-ffmpeg"]
        pre_install = [\'\'\'sh -c "grep -q x setup.py && sed -i 's/x/y/' setup.py"\'\'\']
        install = ["python -m pip install -e ."]
        test = "python -m pytest -rA"
        system = ["lib:Xrender"]
        system_install = "apt-get install -y libxrender1"

        [versions."0.43"]  # the defaults
        """,
}


def test_the_generator_turns_specs_into_tables(tmp_path):
    written = write_tables(tmp_path, sorted(SMALL_SPECS), specs=(SMALL_SPECS, SMALL_REQS, {}, "4.0.0"))
    assert sorted(p.name for p in written) == sorted(SMALL_TABLES)
    for name, expected in SMALL_TABLES.items():
        text = (tmp_path / name).read_text()
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#")).strip()
        assert body == textwrap.dedent(expected).strip(), name
    comments = (tmp_path / "django.toml").read_text()
    assert "SWE-bench installs with `python setup.py install`" in comments and "LANG=en_US.UTF-8" in comments
    recipe = find_recipe("pyvista/pyvista", "0.43", dirs=[tmp_path])
    assert subprocess.run(shlex.split(recipe.pre_install[0])[:2] + ["exit 0"]).returncode == 0  # sh -c runs


def test_the_generator_reproduces_the_bundled_tables(tmp_path):
    """With swebench 4 (which has the specs), the bundled tables are exactly what the generator writes;
    otherwise every bundled table reads back as written."""
    specs = swebench_specs()
    if specs is not None:
        written = write_tables(tmp_path, specs=specs)
        assert len(written) == len(TABLES)
        for path in written:
            header = re.compile(r"\(swebench [^)]*\)")
            assert header.sub("", path.read_text()) == header.sub("", (BUNDLED / path.name).read_text()), path.name
    else:
        for name, _ in TABLES.values():
            table = load_table(BUNDLED / f"{name}.toml")
            written = write_tables(tmp_path, [table.repositories[0]], specs=(
                {table.repositories[0]: {"9.9": {"python": "3.9", "install": "pip install .", "test_cmd": "pytest"}}},
                {}, {}, "4"))
            assert load_table(written[0]).fields_of("9.9") == {}  # the only version gives the defaults


def test_a_system_need_is_named_where_this_machine_lacks_it():
    recipe = Recipe(system=["sh", "minidebug-absent-tool", "lib:minidebug_absent", "locale:xx_XX.UTF-8"],
                    system_install="apt-get install -y absent-tools")
    assert recipe.lacking() == (
        "this machine lacks the program minidebug-absent-tool, the library minidebug_absent, the locale "
        "xx_XX.UTF-8, which the recipe's build or tests use and no pip package gives "
        "(apt-get install -y absent-tools)")
    assert Recipe(system=["sh"]).lacking() == ""
    # given why a build step failed, only what that reason names
    assert recipe.lacking(named_in="boom") == ""
    assert recipe.lacking(named_in="/usr/bin/ld: cannot find -lminidebug_absent") == (
        "this machine lacks the library minidebug_absent, which the recipe's build or tests use and no pip "
        "package gives (apt-get install -y absent-tools)")


BOOM = "python -c \"import sys; sys.exit('boom')\""
LACKS = ("this machine lacks the program minidebug-absent-tool, which the recipe's build or tests use and no pip "
         "package gives (apt-get install -y absent-tools)")


@pytest.mark.parametrize("install, failed", [
    (["python -c pass", "sh -c 'minidebug-absent-tool --install'"],
     f"`sh -c 'minidebug-absent-tool --install'` failed: {LACKS}"),  # the shell did not find the program
    ([BOOM, "minidebug-absent-tool --install"], f"`{BOOM}` failed: boom"),  # an earlier step failed
    pytest.param(["minidebug-absent-tool --install"], f"`minidebug-absent-tool --install` failed: {LACKS}",
                 marks=pytest.mark.slow),
    pytest.param(["python -c pass", "sh -c 'exit 3'"], "`sh -c 'exit 3'` failed: exit status 3, and no output",
                 marks=pytest.mark.slow),
], ids=["program-not-found", "earlier-step", "the-program", "another-failure"])
def test_a_missing_system_program_is_blamed_only_for_the_step_it_broke(install, failed, tmp_path, upstream,
                                                                      cache_dir, monkeypatch):
    """The failed step and why are validate's problem; under the row, the recipe names what the machine lacks."""
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "blame.toml").write_text(textwrap.dedent(f"""\
        repositories = ["example/blame"]
        [defaults]
        install = {json.dumps(install)}
        system = ["minidebug-absent-tool"]
        system_install = "apt-get install -y absent-tools"
        """))
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(tmp_path / "recipes"))
    repo, commits = upstream
    task = source_task(tmp_path, repo, commits["negate_bug"], 'recipe = "example/blame"\n', "negate_blame",
                       ("x", "-x"))
    row = validate_task(str(task), {"cache_dir": cache_dir})
    assert row.problem == f"cannot run here: SetupError: setup command {failed}", row.problem
    assert row.recipe.endswith(f"; {LACKS}"), row.recipe


def test_requirement_files_read_as_swebench_reads_them(tmp_path):
    write(tmp_path, {
        "reqs/dev.txt": "-r base.txt\n-e .\n.[test]\n# a comment\ntypes-pkg_resources==0.1\nflake8\n",
        "reqs/base.txt": "six==1.16.0\n-e .\n",
        "environment.yml": """\
            name: dev
            channels:
              - conda-forge
            dependencies:
              - python=3.10
              - pip
              - numpy=1.23
              - conda-forge::pandas>=1.5  # a comment
              - pytables
              - pip:
                - pytest-env
              - iris
            """,
    })
    assert requirement_lines(str(tmp_path / "reqs" / "dev.txt")) == ["six==1.16.0", "types-setuptools", "flake8"]
    # A dependency after the pip list is conda's again; conda's iris is scitools-iris on PyPI.
    assert conda_lines(str(tmp_path / "environment.yml")) == (["numpy==1.23.*", "pandas>=1.5", "tables",
                                                               "scitools-iris"], ["pytest-env"])


def test_requirement_files_install_the_first_found_then_the_pins(tmp_path, upstream, cache_dir, monkeypatch):
    repo, commits = upstream
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    write(clone, {"requirements/dev.txt": "-r base.txt\n-e .\n", "requirements/base.txt": "six==1.15.0\niniconfig\n"})
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "requirement files")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "mathlib.toml").write_text(textwrap.dedent("""\
        repositories = ["example/mathlib"]
        [defaults]
        packages = ["six==1.16.0", "setuptools", "wheel"]
        requirement_files = ["requirements.txt", "requirements/dev.txt"]
        install = ["python -m pip install --no-build-isolation --no-deps -e ."]
        """))
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(tmp_path / "recipes"))
    task = source_task(tmp_path, clone, commits["negate_bug"], 'recipe = "example/mathlib"\n'
                       f'commit = "{git(clone, "rev-parse", "HEAD")}"\n', "negate_files", ("x", "-x"))
    with minidebug.make(task, cache_dir=cache_dir) as env:
        env.reset()
        six = subprocess.run([str(env.workspace.prepared.venv / "bin" / "python"), "-c",
                              "import iniconfig, six; print(six.__version__)"], capture_output=True, text=True)
    assert six.stdout.strip() == "1.16.0", six.stderr  # the file's six==1.15.0 gave way to the recipe's pin


# -- interpreters ------------------------------------------------------------------------------------------

def _wrapper(path: Path) -> Path:
    """An executable that runs this interpreter (a stand-in for one installed by pyenv or uv)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def no_interpreters(tmp_path, monkeypatch):
    """PATH, pyenv and uv all empty; find_python's memo cleared before and after."""
    for name in ("path", "pyenv", "uv"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "uv"))
    find_python.cache_clear()
    yield tmp_path
    find_python.cache_clear()


def test_interpreters_are_found_among_uvs_pyenvs_and_on_path(no_interpreters):
    version = "{}.{}".format(*sys.version_info[:2])
    with pytest.raises(WorkspaceError) as raised:
        find_python(version)
    message = str(raised.value)
    assert f"no Python {version} interpreter" in message and f"uv python install {version}" in message
    assert f"pyenv install {version}" in message and str(no_interpreters / "uv") in message
    uv = _wrapper(no_interpreters / "uv" / f"cpython-{version}.0-linux-x86_64-gnu" / "bin" / f"python{version}")
    find_python.cache_clear()
    assert find_python(version) == str(uv)
    pyenv = _wrapper(no_interpreters / "pyenv" / "versions" / f"{version}.1" / "bin" / f"python{version}")
    find_python.cache_clear()
    assert find_python(version) == str(pyenv)
    on_path = _wrapper(no_interpreters / "path" / f"python{version}")
    find_python.cache_clear()
    assert find_python(version) == str(on_path)
    find_python.cache_clear()
    with pytest.raises(WorkspaceError, match="no Python 2.1 interpreter"):
        find_python("2.1")


# -- shared venvs and repositories -------------------------------------------------------------------------

@pytest.mark.slow  # builds a recipe's venv and repository from scratch, twice
def test_tasks_of_one_recipe_share_a_venv_and_a_repository(tmp_path, upstream, recipes, cache_dir, monkeypatch):
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(recipes))
    repo, commits = upstream
    stores = lambda: {p for p in (cache_dir / "repos").glob("mathlib-*.git")}  # noqa: E731
    before = stores()  # the cache is shared with the other tests of this process, some of another mathlib
    environment = f'recipe = "example/mathlib"\nversion = "1.0"\ncommit = "{commits["fixed"]}"\n'
    negate = source_task(tmp_path, repo, commits["negate_bug"], environment, "negate_a", ("x", "-x"))
    double = source_task(tmp_path, repo, commits["double_bug"], environment, "double_a", ("x + x + 1", "2 * x"))
    (double / "task.toml").write_text((double / "task.toml").read_text().replace(
        'fail_to_pass = ["tests/test_ops.py::test_negate"]', 'fail_to_pass = ["tests/test_ops.py::test_installed"]'))
    venvs = []
    with minidebug.make(negate, cache_dir=cache_dir) as env:
        observation, info = env.reset()
        venv = env.workspace.prepared.venv
        venvs.append(venv)
        # the later commit's code is nowhere in the venv, and the worktree's git shows no history
        found = subprocess.run(["grep", "-rl", FIXED_MARKER, str(venv)], capture_output=True, text=True)
        assert found.returncode == 1 and found.stdout == ""
        log = subprocess.run(["git", "log", "--all", "--oneline"], cwd=env.workspace.root, capture_output=True,
                             text=True, check=True).stdout.splitlines()
        assert len(log) == 1
        # the project's metadata and entry point come from the install; its code from the worktree
        tests = env.evaluate().tests
        assert (tests["tests/test_ops.py::test_negate"], tests["tests/test_ops.py::test_installed"]) == \
            ("failed", "passed")
        script = subprocess.run([str(venv / "bin" / "mathlib-double")], env=env.workspace.environ(),
                                capture_output=True, text=True)
        assert script.stdout.strip() == "43"  # the worktree's buggy double(), not the later commit's
        agent = OracleAgent()
        agent.start(env, observation, info)
        for _ in range(3):
            observation, reward, terminated, *_ = env.step(agent.act(observation, info))
            if terminated:
                break
        assert reward == 1.0
    with minidebug.make(double, cache_dir=cache_dir) as env:
        env.reset()
        venvs.append(env.workspace.prepared.venv)
        _, reward, *_ = env.step({"name": "eval"})
        assert reward == 1.0  # FAIL_TO_PASS here is the metadata test, which passes on this base
    other = source_task(tmp_path, repo, commits["negate_bug"], environment.replace('"1.0"', '"0.9"'), "negate_b",
                        ("x", "-x"))
    with minidebug.make(other, cache_dir=cache_dir) as env:
        env.reset()
        venvs.append(env.workspace.prepared.venv)
    assert venvs[0] == venvs[1] != venvs[2]
    # One store of the repository serves the three tasks (an earlier test of this process may have made it).
    url = re.search(r'git = "([^"]+)"', (negate / "task.toml").read_text()).group(1)
    assert store_path(cache_dir, url) in stores() and len(stores() - before) <= 1


@pytest.mark.slow  # a venv of its own: run with `pytest -m slow`
def test_validate_names_what_this_machine_lacks(tmp_path, upstream, cache_dir, monkeypatch):
    repo, commits = upstream
    header = source_task(tmp_path, repo, commits["negate_bug"],
                         'install = ["python -m pip install --no-build-isolation ./native"]\n'
                         'packages = ["setuptools", "wheel"]\n', "negate_native", ("x", "-x"))
    # the install runs in a checkout of the environment commit: make one that holds a C extension
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    write(clone, {
        "native/setup.py": "from setuptools import setup, Extension\n"
                           "setup(name='native', ext_modules=[Extension('native', ['native.c'])])\n",
        "native/native.c": "#include <minidebug_absent_header.h>\n",
    })
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "native part")
    toml = (header / "task.toml").read_text().replace(str(repo), str(clone))
    (header / "task.toml").write_text(toml + f'commit = "{git(clone, "rev-parse", "HEAD")}"\n')
    row = validate_task(str(header), {"cache_dir": cache_dir})
    assert not row.ok
    assert ("needs the system header minidebug_absent_header.h" in row.problem
            or "needs the program" in row.problem), row.problem
    old = source_task(tmp_path, repo, commits["negate_bug"], 'python = "2.1"\n', "negate_old", ("x", "-x"))
    row = validate_task(str(old), {"cache_dir": cache_dir})
    assert "cannot run here" in row.problem and "no Python 2.1 interpreter" in row.problem


# -- the importer ------------------------------------------------------------------------------------------

def test_the_importer_names_the_recipe_or_says_there_is_none(tmp_path, upstream, recipes, monkeypatch):
    import json

    repo, commits = upstream
    instance = {"instance_id": "example__mathlib-7", "repo": "example/mathlib", "base_commit": commits["negate_bug"],
                "patch": "--- a/src/mathlib/ops.py\n+++ b/src/mathlib/ops.py\n@@ -5,3 +5,3 @@\n def negate(x):\n"
                         "-    return x\n+    return -x\n \n",
                "test_patch": "--- /dev/null\n+++ b/tests/test_more.py\n@@ -0,0 +1,2 @@\n+def test_more():\n+    pass\n",
                "problem_statement": "negate", "version": "1.0", "environment_setup_commit": commits["fixed"],
                "FAIL_TO_PASS": ["tests/test_ops.py::test_negate"], "PASS_TO_PASS": []}
    (tmp_path / "instances.json").write_text(json.dumps([instance]))
    report = import_swebench(tmp_path / "instances.json", tmp_path / "plain", repos=repo.parent)
    assert "no environment recipe for example/mathlib" in report.notes["example__mathlib-7"]
    assert load_task(tmp_path / "plain" / "example__mathlib-7").spec.environment is None
    monkeypatch.setenv("MINIDEBUG_RECIPES", str(recipes))
    report = import_swebench(tmp_path / "instances.json", tmp_path / "recipe", repos=repo.parent)
    assert "example__mathlib-7" not in report.notes
    spec = load_task(tmp_path / "recipe" / "example__mathlib-7").spec
    assert (spec.environment.recipe, spec.environment.version, spec.environment.commit) == \
        ("example/mathlib", "1.0", commits["fixed"])
    assert spec.eval.startswith("python -m pytest -rA tests/")
    assert os.path.basename(spec.source.git) == "mathlib"


def test_a_removed_repository_clone_is_made_again(tmp_path, upstream, cache_dir):
    import shutil

    from minidebug.store.repos import store_path

    repo, commits = upstream
    task = source_task(tmp_path, repo, commits["negate_bug"], "", "negate_again", ("x", "-x"))
    with minidebug.make(task, cache_dir=cache_dir) as env:
        env.reset()
    shutil.rmtree(store_path(cache_dir, str(repo)))
    with minidebug.make(task, cache_dir=cache_dir) as env:
        env.reset()
        assert "    return x\n" in (env.workspace.root / "src" / "mathlib" / "ops.py").read_text()
    assert store_path(cache_dir, str(repo)).is_dir()


PIP_BUILD_FAILED = """\
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [3 lines of output]
      Traceback (most recent call last):
        File "<string>", line 1, in <module>
      ModuleNotFoundError: No module named 'numpy'
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error
"""


@pytest.mark.parametrize("output, why", [
    ("Collecting x\nERROR: Package 'sqlfluff' requires a different Python: 3.9.18 not in '>=3.10'\n",
     "sqlfluff needs Python >=3.10, not the venv's 3.9.18"),
    ("Traceback (most recent call last):\n  ...\n    raise KeyError(name)\nModuleNotFoundError: No module named 'numpy'\n",
     "ModuleNotFoundError: No module named 'numpy'"),
    (PIP_BUILD_FAILED, "ModuleNotFoundError: No module named 'numpy'"),  # pip's heading says no why
    ("x.c: In function 'f':\nx.c:3:5: error: unknown type name 'foo'\nerror: command 'gcc' failed\n",
     "x.c:3:5: error: unknown type name 'foo'"),
    ("cloning\nfatal: not a git repository (or any of the parent directories): .git\n",
     "fatal: not a git repository (or any of the parent directories): .git"),
    ("sh: 1: make: not found\n", "sh: 1: make: not found"),
    ("step 1\n[timed out after 1800 s; the process group was killed]\n",
     "[timed out after 1800 s; the process group was killed]"),
    ("building...\nnone of the requirement files requirements.txt is in this checkout\n\n",
     "none of the requirement files requirements.txt is in this checkout"),  # no error line: the last one
    ("", ""),
])
def test_a_failed_build_says_why_on_its_first_line(output, why):
    assert reason(output) == why
    error = SetupError.of("setup command `make`", output, 2)
    assert str(error).splitlines()[0] == f"setup command `make` failed: {why or 'exit status 2, and no output'}"


def test_a_step_is_shown_on_one_line():
    script = "import sys\n" + "print(sys.argv)\n" * 40
    assert shown(f"python -c {shlex.quote(script)} requirements.txt") == \
        f"python -c <{len(script)} characters> requirements.txt"
    assert shown("pip install -e .") == "pip install -e ."
    assert shown("echo " + "word " * 60).endswith(" ... (305 characters)")
