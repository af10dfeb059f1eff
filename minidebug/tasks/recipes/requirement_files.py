"""Install the first requirement file of a checkout that exists: `python requirement_files.py FILE...`.

A recipe's `requirement_files` run this with the venv's interpreter (which may be as old as Python 3.5, so
it keeps to the syntax such interpreters know). A pip requirements file is read as SWE-bench reads it:
`-r` files inlined, the lines that install the project itself (`-e .`, `.[test]`) left out (the recipe's
`install` does that). A conda environment.yml gives its conda dependencies (`name=1.2` becomes
`name==1.2.*`) and its pip ones; conda packages that pip has no release of are named and left out.
"""

import os
import re
import subprocess
import sys
import tempfile

SELF_INSTALLS = ("-e .", "#", ".[test")
RENAMED = {"types-pkg_resources": "types-setuptools", "pytables": "tables", "matplotlib-base": "matplotlib",
           "pyqt": "PyQt5", "cairo": "pycairo", "python-graphviz": "graphviz", "hdf5": None, "pip": None,
           "python": None, "iris": "scitools-iris"}


def requirement_lines(path, seen=()):
    """The requirements of a pip requirements file, `-r` files inlined, the project's own lines left out."""
    lines = []
    with open(path) as handle:
        for line in handle.read().splitlines():
            stripped = line.strip()
            if stripped.startswith("-r"):
                included = os.path.join(os.path.dirname(path), stripped[2:].strip())
                if os.path.isfile(included) and included not in seen:
                    lines += requirement_lines(included, seen + (path,))
            elif stripped and not stripped.startswith(SELF_INSTALLS):
                name = re.split(r"[<>=!~;\[ ]", stripped, maxsplit=1)[0]
                lines.append(stripped if name not in RENAMED else RENAMED[name] or "")
    return [line for line in lines if line]


def conda_lines(path):
    """The conda and pip dependencies of an environment.yml, as pip requirements."""
    conda, pip, section, pip_indent = [], [], None, 0
    with open(path) as handle:
        for line in handle.read().splitlines():
            item = re.match(r"^(\s*)-\s*(.+?)\s*(#.*)?$", line)
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if section == "pip" and item and len(item.group(1)) <= pip_indent:  # back among the dependencies
                section = "dependencies"
            if not line.startswith((" ", "-")):
                section = line.split(":", 1)[0].strip()
            elif section == "dependencies" and item and item.group(2) == "pip:":
                section, pip_indent = "pip", len(item.group(1))
            elif section == "dependencies" and item:
                conda.append(item.group(2))
            elif section == "pip" and item:
                pip.append(item.group(2))
    return [requirement for requirement in map(conda_requirement, conda) if requirement], pip


def conda_requirement(spec):
    """A conda package spec as a pip requirement (`name=1.2` is `name==1.2.*`); "" for conda's own ones."""
    spec = spec.split("::")[-1].replace(" ", "")
    name = re.split(r"[<>=!~]", spec, maxsplit=1)[0]
    if name in RENAMED:
        if RENAMED[name] is None:
            return ""
        spec, name = RENAMED[name] + spec[len(name):], RENAMED[name]
    exact = re.match(r"^([\w.-]+)=([\w.*]+)$", spec)
    if exact:
        version = exact.group(2)
        spec = "%s==%s" % (name, version if version.endswith("*") else version + ".*")
    return spec


def pip_install(requirements, folder):
    """Run pip on a requirements list written next to the file it came from; returns pip's exit status."""
    descriptor, listing = tempfile.mkstemp(prefix=".requirements-", suffix=".txt", dir=folder)
    with os.fdopen(descriptor, "w") as handle:
        handle.write("\n".join(requirements) + "\n")
    try:
        return subprocess.call([sys.executable, "-m", "pip", "install", "-r", listing])
    finally:
        os.unlink(listing)


def main(paths):
    found = [path for path in paths if os.path.isfile(path)]
    if not found:
        sys.exit("none of the requirement files %s is in this checkout" % ", ".join(paths))
    path = found[0]
    folder = os.path.dirname(os.path.abspath(path))
    if not path.endswith((".yml", ".yaml")):
        sys.exit(pip_install(requirement_lines(path), folder))
    conda, pip = conda_lines(path)
    if pip_install(conda + pip, folder) == 0:
        return
    left_out = [spec for spec in conda if pip_install([spec], folder) != 0]
    if pip and pip_install(pip, folder) != 0:
        sys.exit("pip could not install the pip dependencies of %s" % path)
    if left_out:
        print("left out of %s, no pip release: %s" % (path, ", ".join(left_out)))


if __name__ == "__main__":
    main(sys.argv[1:])
