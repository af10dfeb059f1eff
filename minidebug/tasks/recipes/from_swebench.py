"""Write the recipe tables of SWE-bench's repositories from SWE-bench's own harness specs.

    python -m minidebug.tasks.recipes.from_swebench [--out DIR] [REPOSITORY...]

reads `MAP_REPO_VERSION_TO_SPECS` of the installed `swebench` package (its 4.x releases: 5.0 no longer
ships the specs, so `pip install 'swebench<5'`) and writes one table per repository of `TABLES` (default:
all, into this folder). A spec becomes a recipe version like this:

- `python` as is; `packages`: the spec's conda packages (as pip requirements), then its `pip_packages`,
  then `ADJUSTMENTS`; of two requirements with one name a pinned one wins over a bare one, else the later.
  `setuptools<70` (which still has pkg_resources) unless a spec pins setuptools, and `wheel` for installs
  without build isolation.
- conda's "requirements.txt" / "environment.yml" become `requirement_files`: the repository's candidate paths.
- apt-get and locale steps become `system` (what to look for here) and `system_install` (how to get it),
  unless `PIP_EQUIVALENTS` has a pip package for them; other `pre_install` commands stay (run through `sh -c`
  when they need a shell); SWE-bench's download of qhull is dropped (matplotlib's build fetches it itself).
- `python setup.py install` becomes `python -m pip install .`, so pip records the files it copies and the
  venv keeps the project's metadata alone; `--no-use-pep517`, which pip 25 and later refuse, is left out.
- `test`: pytest runs as `python -m pytest ...`; Django's runtests.py as SWE-bench writes it; sympy's bin/test
  and sphinx's tox (which runs pytest) as `python -m pytest -rA`.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import textwrap
from pathlib import Path

from .requirement_files import conda_requirement

HERE = Path(__file__).resolve().parent

TABLES = {  # repository -> (table file name, other names of the repository)
    "astropy/astropy": ("astropy", []),
    "django/django": ("django", []),
    "marshmallow-code/marshmallow": ("marshmallow", []),
    "matplotlib/matplotlib": ("matplotlib", []),
    "mwaskom/seaborn": ("seaborn", []),
    "pallets/flask": ("flask", []),
    "psf/requests": ("requests", []),
    "pvlib/pvlib-python": ("pvlib", []),
    "pydata/xarray": ("xarray", []),
    "pydicom/pydicom": ("pydicom", []),
    "pylint-dev/astroid": ("astroid", ["PyCQA/astroid"]),
    "pylint-dev/pylint": ("pylint", ["PyCQA/pylint"]),
    "pytest-dev/pytest": ("pytest", []),
    "pyvista/pyvista": ("pyvista", []),
    "scikit-learn/scikit-learn": ("scikit-learn", []),
    "sphinx-doc/sphinx": ("sphinx", []),
    "sqlfluff/sqlfluff": ("sqlfluff", []),
    "sympy/sympy": ("sympy", []),
}

ADJUSTMENTS = {  # repository -> (fields added to every version, why)
    "pylint-dev/astroid": ({"packages": ["pytest<8"], "install": ["python -m pip install --no-build-isolation -e ."]},
                           "pytest 8 rejects its old configuration; built with this venv's setuptools<70"),
    "pydicom/pydicom": ({"packages": ["numpy<2", "pytest<8", "flit_core"],  # 3.0's build backend
                        "install": ["python -m pip install --no-deps --no-build-isolation -e ."]},
                        "numpy 2 and pytest 8 break its tests; built with this venv's setuptools<70"),
    "sqlfluff/sqlfluff": ({"packages": ["pytest<8"], "install": ["python -m pip install --no-build-isolation -e ."]},
                          "pytest 8 rejects its old configuration; built with this venv's setuptools<70"),
    "pylint-dev/pylint": ({"packages": ["toml"], "install": ["python -m pip install --no-build-isolation -e ."]},
                          "built with this venv's setuptools (its pinned setuptools~=62.6 cannot install editable); "
                          "toml, which base commits before pylint moved to tomli import (the venv is installed "
                          "at the environment commit, which may have moved already: 2.13)"),
    "pvlib/pvlib-python": ({"packages": ["numpy<2"]}, "numpy 2 removed names its code uses (np.Inf)"),
    "pytest-dev/pytest": ({"packages": ["importlib-metadata", "wcwidth"]},
                          "importlib-metadata, which base commits of 4.6 import on every Python while the "
                          "environment commit asks it below 3.8 only; wcwidth, which base commits of 5.4 import "
                          "(its terminal summary) while its environment commit vendors it"),
    "sphinx-doc/sphinx": ({"packages": ["docutils<0.22"]},
                          "docutils 0.22 removed docutils.utils.roman, which sphinx 3 imports (asking docutils>=0.12)"),
}

SYSTEM = {  # a Debian package SWE-bench installs -> what shows it is here (programs, `lib:` libraries)
    "cm-super": [], "dvipng": ["dvipng"], "ffmpeg": ["ffmpeg"], "graphviz": ["dot"], "hunspell-en-us": [],
    "imagemagick": ["convert"], "libenchant-2-dev": ["lib:enchant-2"], "libfreetype6-dev": ["lib:freetype"],
    "libsm6": ["lib:SM"], "libxext6": ["lib:Xext"], "libxrender1": ["lib:Xrender"], "locales": [],
    "pkg-config": ["pkg-config"], "texlive": ["latex"], "texlive-fonts-recommended": [],
    "texlive-latex-extra": [], "texlive-luatex": ["lualatex"], "texlive-xetex": ["xelatex"],
}
PIP_EQUIVALENTS = {  # (repository, Debian package) -> the pip package that gives the same
    ("pyvista/pyvista", "ffmpeg"): "imageio-ffmpeg",  # pyvista writes movies through imageio's ffmpeg plugin
}
SETUPTOOLS = "setuptools<70"  # the last releases with pkg_resources that old projects import
FIELDS = ("python", "packages", "requirement_files", "pre_install", "install", "test", "system", "system_install")
SHELL_OPERATORS = set("();<>|&")


def load_specs() -> tuple[dict, dict, dict, str]:
    """SWE-bench's specs, requirement file paths and environment.yml paths, and the swebench version.

    Raises:
        SystemExit: swebench is not installed or has no specs (5.0 and later).
    """
    try:
        import swebench
        from swebench.harness import constants
    except ImportError:
        raise SystemExit("swebench is not installed: pip install 'swebench>=4,<5'") from None
    if not hasattr(constants, "MAP_REPO_VERSION_TO_SPECS"):
        raise SystemExit(f"swebench {swebench.__version__} has no harness specs (5.0 dropped them): run this "
                         "with swebench 4 on the path (pip install 'swebench>=4,<5', or PYTHONPATH=its folder)")
    return (constants.MAP_REPO_VERSION_TO_SPECS, constants.MAP_REPO_TO_REQS_PATHS,
            constants.MAP_REPO_TO_ENV_YML_PATHS, swebench.__version__)


def recipe_version(repo: str, spec: dict, reqs_paths: dict, env_paths: dict) -> tuple[dict, list[str]]:
    """A spec as recipe fields, and notes on what was changed or left out."""
    notes: list[str] = []
    packages = spec.get("packages", "")
    files = {"requirements.txt": reqs_paths, "environment.yml": env_paths}.get(packages)
    conda = [] if files is not None else [conda_requirement(p) for p in shlex.split(packages)]
    apt: list[str] = []
    locales: list[str] = []
    pre_install = []
    for command in spec.get("pre_install", []) + [c for c in spec.get("eval_commands", []) if "locale" in c]:
        if "apt-get" in command or "locale" in command:
            for found in re.finditer(r"apt-get\s+(?:-y\s+)?install((?:\s+[\w.+-]+)+)", command):
                apt += [name for name in found.group(1).split() if name != "-y"]
            locales += re.findall(r"\b([a-z]{2}_[A-Z]{2}\.UTF-8)\b", command)
        elif "QHULL" in command or "qhull" in command:
            notes.append("SWE-bench downloads qhull into build/ ahead; matplotlib's build fetches it itself")
        else:
            pre_install.append(shell(command))
    exports = [c.split(None, 1)[1] for c in spec.get("eval_commands", []) if c.startswith("export ")]
    if exports:
        notes.append(f"SWE-bench runs the tests with {' '.join(exports)}")
    system, extra, unknown = [], [], sorted(set(apt) - set(SYSTEM))
    if unknown:
        raise SystemExit(f"{repo}: no entry in SYSTEM for the Debian package(s) {', '.join(unknown)}")
    for name in dict.fromkeys(apt):
        if (repo, name) in PIP_EQUIVALENTS:
            extra.append(PIP_EQUIVALENTS[repo, name])
        else:
            system += [need for need in SYSTEM[name] if need not in system]
    system += [f"locale:{name}" for name in dict.fromkeys(locales)]
    kept_apt = [name for name in dict.fromkeys(apt) if (repo, name) not in PIP_EQUIVALENTS]
    how = [f"apt-get install -y {' '.join(kept_apt)}"] if kept_apt else []
    how += [f"locale-gen {name}" for name in dict.fromkeys(locales)]
    install = spec.get("install", "")
    if "setup.py install" in install:
        notes.append(f"SWE-bench installs with `{install}`; here pip, which records what it copies")
        install = "python -m pip install ."
    if " --no-use-pep517" in install:
        notes.append("SWE-bench's --no-use-pep517 is left out: pip 25 and later refuse it")
        install = install.replace(" --no-use-pep517", "")
    adjusted, _ = ADJUSTMENTS.get(repo, ({}, ""))
    fields = {
        "python": spec["python"],
        "packages": merged(conda, spec.get("pip_packages", []), extra, adjusted.get("packages", [])),
        "requirement_files": list(files.get(repo, [])) if files is not None else [],
        "pre_install": pre_install,
        "install": adjusted.get("install", [install] if install else []),
        "test": test_command(spec["test_cmd"], notes),
        "system": system,
        "system_install": " && ".join(how),
    }
    fields["packages"] = merged([SETUPTOOLS], fields["packages"])
    if any("--no-build-isolation" in c for c in fields["install"]):
        fields["packages"] = merged(fields["packages"], ["wheel"])
    return fields, notes


def test_command(command: str, notes: list[str]) -> str:
    """SWE-bench's test command as a recipe's `test`."""
    if command.startswith("pytest"):
        return "python -m " + command
    if "runtests.py" in command:
        return command
    notes.append(f"SWE-bench runs `{command}`; here pytest")
    return "python -m pytest -rA"


def shell(command: str) -> str:
    """A command as a recipe runs it (split into arguments, no shell): through `sh -c` when it needs one."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    needs_shell = any(token and set(token) <= SHELL_OPERATORS for token in lexer)
    if not needs_shell:
        return command
    return f'sh -c "{command}"' if not set(command) & set('"$`\\') else shlex.join(["sh", "-c", command])


def requirement_name(requirement: str) -> str:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return canonicalize_name(Requirement(requirement).name)


def merged(*sources: list[str]) -> list[str]:
    """Requirements in order, one per name: a pinned one wins over a bare one, else the later one."""
    chosen: dict[str, str] = {}
    for source in sources:
        for requirement in source:
            name = requirement_name(requirement)
            if not (name in chosen and bare(requirement) and not bare(chosen[name])):
                chosen[name] = requirement
    return list(chosen.values())


def bare(requirement: str) -> bool:
    from packaging.requirements import Requirement

    parsed = Requirement(requirement)
    return not parsed.specifier and parsed.url is None


def version_key(version: str) -> tuple:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def table_text(repo: str, versions: dict[str, tuple[dict, list[str]]], swebench_version: str) -> str:
    """A recipe table: the newest version's fields as `[defaults]` (the best guess for a version SWE-bench
    does not list), then the other versions' own fields, versions with the same ones sharing a table."""
    order = sorted(versions, key=version_key)
    defaults = versions[order[-1]][0]
    name, aliases = TABLES[repo]
    lines = [f"# {repo}: generated from SWE-bench's harness specs (swebench {swebench_version}) by",
             "# `python -m minidebug.tasks.recipes.from_swebench`: change that, not this file."]
    if repo in ADJUSTMENTS:
        lines += wrapped(f"Beyond the specs: {ADJUSTMENTS[repo][1]}.")
    notes: dict[str, list[str]] = {}
    for version in order:
        for note in dict.fromkeys(versions[version][1]):
            notes.setdefault(note, []).append(version)
    for note, where in notes.items():
        lines += wrapped(note + ("" if len(where) == len(order) else f" (versions {', '.join(where)})") + ".")
    if any(versions[v][0]["system"] for v in order):
        lines += wrapped("`system`: what no pip package gives; named when this machine lacks it.")
    lines += [f"repositories = {toml_value([repo, *aliases])}", "", "[defaults]"]
    lines += [f"{field} = {toml_value(defaults[field])}" for field in FIELDS if defaults[field]]
    groups: dict[str, list[str]] = {}
    for version in order:
        changed = {f: versions[version][0][f] for f in FIELDS if versions[version][0][f] != defaults[f]}
        groups.setdefault(json.dumps(changed), []).append(version)
    for changes, names in groups.items():
        lines += ["", f"[versions.{toml_value(', '.join(names))}]" + ("  # the defaults" if changes == "{}" else "")]
        lines += [f"{field} = {toml_value(value)}" for field, value in json.loads(changes).items()]
    return "\n".join(lines) + "\n"


def wrapped(text: str) -> list[str]:
    return ["# " + line for line in textwrap.wrap(text, 110, break_on_hyphens=False, break_long_words=False)]


def toml_value(value) -> str:
    """A string or a list of strings as TOML: literal strings where they read better."""
    if isinstance(value, list):
        items = [toml_value(item) for item in value]
        inline = "[" + ", ".join(items) + "]"
        return inline if len(inline) <= 100 else "[\n" + "".join(f"    {item},\n" for item in items) + "]"
    if "\n" in value or not ('"' in value or "\\" in value):
        return json.dumps(value, ensure_ascii=False)
    if "'" not in value:
        return f"'{value}'"
    if "'''" not in value and not value.endswith("'"):
        return f"'''{value}'''"
    return json.dumps(value, ensure_ascii=False)


def write_tables(out: Path, repos: list[str] | None = None, specs: tuple | None = None) -> list[Path]:
    """Write the tables of `repos` (default: every one of `TABLES`) into `out`; returns the files written."""
    version_specs, reqs_paths, env_paths, swebench_version = specs or load_specs()
    written = []
    for repo in repos or sorted(TABLES):
        if repo not in TABLES or repo not in version_specs:
            raise SystemExit(f"{repo}: not among {', '.join(sorted(set(TABLES) & set(version_specs)))}")
        versions = {v: recipe_version(repo, spec, reqs_paths, env_paths) for v, spec in version_specs[repo].items()}
        path = Path(out) / f"{TABLES[repo][0]}.toml"
        path.write_text(table_text(repo, versions, swebench_version), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minidebug.tasks.recipes.from_swebench",
                                     description="Write recipe tables from SWE-bench's harness specs.")
    parser.add_argument("repositories", nargs="*", help="owner/name (default: every bundled one)")
    parser.add_argument("--out", type=Path, default=HERE, help="the folder to write to (default: the bundled one)")
    args = parser.parse_args(argv)
    for path in write_tables(args.out, args.repositories or None):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
