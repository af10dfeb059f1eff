from pathlib import Path

import pytest

import minidebug
from minidebug.tasks.task import bundled_task_names, load_task
from tests.conftest import CALC, CALC_PATCH, CALC_TOML

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)


def test_bundled_tasks_load():
    names = bundled_task_names()
    assert {"sum_tree", "late_handlers", "report_stats"} <= set(names)
    for name in names:
        task = load_task(name)
        assert task.description and task.eval_command and task.solution is not None


def test_unknown_bundled_name_suggests_closest():
    with pytest.raises(minidebug.TaskError, match="did you mean sum_tree"):
        load_task("sum_tre")


def test_entrypoint_defaults_to_eval(calc_task):
    task = load_task(calc_task)
    assert task.entrypoint == ["python", "-m", "pytest", "-q"]


@pytest.mark.parametrize(
    "toml, message",
    [
        ('eval = "python -m pytest"\n', "field 'description': Field required"),
        ('description = "x"\n', "field 'eval': Field required"),
        ('description = "x"\neval = "pytest"\nflavour = 1\n', "field 'flavour': unknown field"),
        ('description = "x"\neval = "pytest"\nreadonly = "tests"\n', "field 'readonly'"),
        ('description = "x"\neval = "pytest"\nreadonly = ["../x"]\n', "'..' is not allowed"),
        ('description = "x"\neval = "pytest"\nhidden = ["!"]\n', "field 'hidden'"),
        ('description = "x"\neval = "pytest \'unclosed"\n', "field 'eval': Value error, not a valid command line"),
        ('description = "x"\neval = "pytest"\n[limits]\nmax_steps = 0\n', "field 'limits.max_steps'"),
        ('description = "x"\neval = "pytest"\n[limits]\nmax_stepz = 3\n', "field 'limits.max_stepz': unknown field"),
        ('description = "x"\neval = "pytest"\npython = "three"\n', "field 'python'"),
        ('description = = "x"', "not valid TOML"),
    ],
)
def test_bad_task_toml_names_file_and_field(task_dir, toml, message):
    root = task_dir(CALC, toml)
    with pytest.raises(minidebug.TaskError) as caught:
        load_task(root)
    assert str(root / "task.toml") in str(caught.value)
    assert message in str(caught.value)


def test_missing_repo_folder(tmp_path):
    (tmp_path / "task.toml").write_text('description = "x"\neval = "pytest"\n')
    with pytest.raises(minidebug.TaskError, match="missing repo/"):
        load_task(tmp_path)


def test_solution_that_does_not_apply_is_a_task_error(task_dir, cache_dir):
    bad_patch = CALC_PATCH.replace("return a - b", "return a // b")
    env = minidebug.make(task_dir(CALC, CALC_TOML, bad_patch), cache_dir=cache_dir)
    with env, pytest.raises(minidebug.TaskError, match="solution.patch: does not apply"):
        env.reset()


def test_solution_touching_readonly_file_is_a_task_error(task_dir, cache_dir):
    patch = CALC_PATCH.replace("calc.py", "test_calc.py")
    env = minidebug.make(task_dir(CALC, CALC_TOML, patch), cache_dir=cache_dir)
    with env, pytest.raises(minidebug.TaskError, match="read-only or hidden"):
        env.reset()


def test_content_hash_follows_every_file(calc_task: Path):
    before = load_task(calc_task).content_hash()
    assert load_task(calc_task).content_hash() == before
    (calc_task / "repo" / "calc.py").write_text("changed\n")
    assert load_task(calc_task).content_hash() != before


def test_make_rejects_unknown_tool(calc_task):
    with pytest.raises(ValueError, match="unknown tool 'vew'. Did you mean 'view'"):
        minidebug.make(calc_task, tools=["vew"])


def test_make_overrides_task_limits(calc_task):
    env = minidebug.make(calc_task, max_steps=7, eval_timeout=5)
    assert env.limits.max_steps == 7 and env.limits.eval_timeout == 5
    with pytest.raises(ValueError):
        minidebug.make(calc_task, max_steps=-1)


def test_the_pdb_entrypoint_of_an_instance_names_its_failing_tests(tmp_path):
    root = tmp_path / "t"
    (root / "repo" / "tests").mkdir(parents=True)
    (root / "repo" / "tests" / "test_a.py").write_text("def test_x():\n    pass\n")
    (root / "task.toml").write_text(
        'description = "d"\neval = "python -m pytest -rA -p no:cacheprovider tests/test_a.py tests/"\n'
        'fail_to_pass = ["tests/test_a.py::test_x[select", "tests/test_a.py::test_x[select"]\n')
    assert load_task(root).entrypoint == ["python", "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                                          "tests/test_a.py::test_x"]
