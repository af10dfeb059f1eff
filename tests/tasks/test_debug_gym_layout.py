"""Folders in debug-gym's layout load directly, with gitignore semantics for their pattern files."""

import textwrap

import pytest

import minidebug
from minidebug.errors import TaskError
from minidebug.tasks.task import load_task


def make_folder(root):
    files = {
        "shapes.py": "def area(w, h):\n    return w + h\n",
        "helpers/util.py": "SCALE = 1\n",
        "notes/answer.txt": "the fix is w * h\n",
        "test.py": "from shapes import area\n\ndef test_area():\n    assert area(2, 3) == 6\n",
        ".debugignore": "# hidden from the agent\nnotes/\n*.txt\n",
        ".debugreadonly": "helpers/**\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_debug_gym_folder_loads_and_plays(tmp_path, cache_dir):
    folder = make_folder(tmp_path / "area_bug")
    task = load_task(folder)
    assert task.spec.eval == "python -m pytest -sq test.py" and "test.py" in task.description
    with minidebug.make(folder, cache_dir=cache_dir) as env:
        env.reset()
        root = env.workspace.root
        assert not (root / "notes").exists() and not (root / ".debugignore").exists()
        listing = env.step({"name": "listdir", "arguments": {"depth": 3}})[0]
        assert "answer" not in listing and "util.py" in listing
        for path in ("helpers/util.py", "test.py"):
            observation = env.step({"name": "edit", "arguments": {"path": path, "old": "S", "new": "s"}})[0]
            assert "read-only" in observation or "occurs 0 times" in observation
        assert "read-only" in env.step({"name": "edit", "arguments": {"path": "test.py", "old": "6", "new": "5"}})[0]
        _, reward, *_ = env.step({"name": "eval"})
        assert reward == 0.0
        env.step({"name": "edit", "arguments": {"path": "shapes.py", "old": "w + h", "new": "w * h"}})
        _, reward, terminated, *_ = env.step({"name": "eval"})
        assert reward == 1.0 and terminated


def test_edited_pattern_files_change_the_task_hash(tmp_path):
    folder = make_folder(tmp_path / "area_bug")
    before = load_task(folder).content_hash()
    (folder / ".debugreadonly").write_text("helpers/**\nshapes.py\n")
    assert load_task(folder).content_hash() != before
    assert load_task(folder).readonly.match("shapes.py")


SIX_TEST = "import six\nfrom shapes import area\n\ndef test_area():\n    assert six.PY3 and area(2, 3) == 6\n"


def test_requirements_txt_goes_into_the_venv_and_pdb_gets_one_s(tmp_path, cache_dir):
    from minidebug.tools.pdb import pdb_arguments

    folder = make_folder(tmp_path / "needs_six")
    (folder / "test.py").write_text(SIX_TEST)
    (folder / "requirements.txt").write_text("# what test.py imports\nsix==1.16.0  # pinned\n")
    task = load_task(folder)
    assert task.spec.requirements == ["six==1.16.0"]
    assert pdb_arguments(task.eval_command) == ["-m", "pytest", "-sq", "test.py"]  # -s is already there
    with minidebug.make(folder, cache_dir=cache_dir, sandbox=None) as env:
        env.reset()
        env.step({"name": "edit", "arguments": {"path": "shapes.py", "old": "w + h", "new": "w * h"}})
        observation, reward, *_ = env.step({"name": "eval"})
        assert reward == 1.0, observation
    (folder / "requirements.txt").write_text("-r other.txt\n")
    with pytest.raises(TaskError, match="not a pip requirement"):
        load_task(folder)


def test_make_adds_requirements_to_any_task(tmp_path, cache_dir):
    folder = make_folder(tmp_path / "needs_six")
    (folder / "test.py").write_text(SIX_TEST)
    plain = load_task(folder)
    with minidebug.make(folder, cache_dir=cache_dir, sandbox=None, requirements=["six==1.16.0"]) as env:
        assert env.task.spec.requirements == ["six==1.16.0"] and env.task.content_hash() != plain.content_hash()
        env.reset()
        env.step({"name": "edit", "arguments": {"path": "shapes.py", "old": "w + h", "new": "w * h"}})
        observation, reward, *_ = env.step({"name": "eval"})
        assert reward == 1.0, observation
    with minidebug.make(folder, cache_dir=cache_dir, sandbox=None) as env:  # without it: the import fails
        env.reset()
        env.step({"name": "edit", "arguments": {"path": "shapes.py", "old": "w + h", "new": "w * h"}})
        observation, reward, *_ = env.step({"name": "eval"})
        assert reward == 0.0 and "six" in observation
    with pytest.raises(TaskError, match="not a pip requirement"):
        minidebug.make(folder, requirements=["--index-url=http://x"])
