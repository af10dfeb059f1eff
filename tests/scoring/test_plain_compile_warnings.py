"""Eval compiles with the warnings a plain run shows and no more. A plain run reads the bytecode pip wrote for
a venv module, so compiling it never warns; eval reads no bytecode, and a compile-time warning (an invalid
escape sequence) under `filterwarnings = error` must not become an error there. A file of the tree warns in
both (flask 2.0's conftest)."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import zipfile

import pytest

ESCAPING = 'import re\n\nSTAR = re.compile("a\\*")\n'  # an invalid escape sequence: compiling it warns
TREE = {
    "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
    "tests/conftest.py": "import escpkg  # noqa: F401\n",
    "tests/test_x.py": "import escpkg\n\n\ndef test_x():\n    assert escpkg.STAR.pattern == 'a' + chr(92) + '*'\n",
}


def wheel(folder) -> str:
    """A wheel of `escpkg` (its module compiling with a warning), made by hand: no build, no index."""
    files = {"escpkg/__init__.py": ESCAPING,
             "escpkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: escpkg\nVersion: 1.0\n",
             "escpkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(text.encode())}" for name, text in files.items()] + ["escpkg-1.0.dist-info/RECORD,,"]
    path = folder / "escpkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in {**files, "escpkg-1.0.dist-info/RECORD": "\n".join(record) + "\n"}.items():
            archive.writestr(name, text)
    return f"escpkg @ {path.as_uri()}"


def plain(env, tmp_path) -> subprocess.CompletedProcess:
    """`python -m pytest tests` in a copy of the task's tree, in the task's venv."""
    copy = tmp_path / "plain"
    shutil.copytree(env.workspace.root, copy, ignore=shutil.ignore_patterns(".git"))
    return subprocess.run([str(env.workspace.venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests"], cwd=copy, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("escape_in", ["venv", pytest.param("tree", marks=pytest.mark.slow)])  # a venv each
def test_compile_warnings_are_errors_in_eval_only_where_a_plain_run_meets_them(make_env, task_dir, tmp_path,
                                                                            escape_in):
    files = dict(TREE, **({"tests/conftest.py": ESCAPING} if escape_in == "tree" else {}))
    toml = (f'description = "x"\neval = "python -m pytest -q tests"\ntests = ["tests/test_x.py::test_x"]\n'
            f'requirements = ["{wheel(tmp_path)}"]\n')
    task = task_dir(files, toml)
    fresh = make_env(task, eval_mode="fresh")
    fresh.reset()
    baseline = plain(fresh, tmp_path)
    results = [fresh.evaluate()]
    env = make_env(task)
    env.reset()
    results.append(env.evaluate())  # forked from a warm interpreter
    assert [r.forked for r in results] == [False, True]
    if escape_in == "venv":
        assert baseline.returncode == 0, baseline.stdout
        assert all(r.tests == {"tests/test_x.py::test_x": "passed"} for r in results), results[0].output[-3000:]
    else:
        assert baseline.returncode != 0 and "invalid escape sequence" in baseline.stderr, baseline.stderr
        for result in results:
            assert result.tests.get("tests/test_x.py::test_x") != "passed"
            assert "invalid escape sequence" in result.output, result.output[-3000:]
