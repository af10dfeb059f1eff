import pytest

from tests.conftest import CALC, CALC_PATCH, CALC_TOML


def _eval(make_env, task_dir, files, toml=CALC_TOML, **options):
    env = make_env(task_dir(files, toml), **options)
    env.reset()
    observation, reward, terminated, truncated, info = env.step({"name": "eval"})
    return observation, reward, info


def test_scores_from_pytest_results_not_printed_text(make_env, task_dir):
    files = dict(CALC)
    files["test_more.py"] = """\
        import pytest

        def test_prints_lies():
            print("10 passed, 0 failed")

        @pytest.mark.skip
        def test_skipped():
            pass

        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_param(n):
            assert n < 3
        """
    observation, reward, info = _eval(make_env, task_dir, files)
    assert (info["score"], info["max_score"]) == (4, 7)  # a skipped test is a test that did not pass
    assert observation.startswith("eval: 4 passed, 2 failed, 1 skipped (score 4/7)")


def test_collection_error_scores_zero(make_env, task_dir):
    files = dict(CALC, **{"test_broken.py": "def test_x(:\n    pass\n"})
    observation, reward, info = _eval(make_env, task_dir, files)
    assert reward == 0.0 and info["score"] == 0
    assert "SyntaxError" in observation and "error" in observation.splitlines()[0]


def test_import_error_scores_zero(make_env, task_dir):
    files = dict(CALC, **{"calc.py": "import not_a_module\n"})
    observation, reward, info = _eval(make_env, task_dir, files)
    assert reward == 0.0 and "ModuleNotFoundError" in observation


def test_crash_scores_zero(make_env, task_dir):
    files = dict(CALC, **{"test_crash.py": "import os\n\ndef test_die():\n    os._exit(3)\n"})
    observation, reward, info = _eval(make_env, task_dir, files)
    assert reward == 0.0 and "no pytest results were recorded" in observation


def test_eval_timeout_kills_and_scores_zero(make_env, task_dir):
    files = dict(CALC, **{"test_hang.py": "import time\n\ndef test_hang():\n    time.sleep(600)\n"})
    observation, reward, info = _eval(make_env, task_dir, files, eval_timeout=2)
    assert reward == 0.0 and "timed out after 2 s" in observation


def test_a_non_pytest_eval_command_is_refused_when_the_task_loads(make_env, task_dir):
    from minidebug.errors import TaskError

    toml = 'description = "x"\neval = "python -c \'print(42)\'"\n'
    with pytest.raises(TaskError, match="eval must run pytest"):
        make_env(task_dir(CALC, toml))


@pytest.mark.parametrize("requirement", [pytest.param("six==1.16.0", marks=pytest.mark.slow)])  # a venv
def test_task_requirements_are_installed_in_the_venv(make_env, task_dir, requirement):
    files = {"test_six.py": "import six\n\ndef test_version():\n    assert six.__version__ == '1.16.0'\n"}
    toml = f'description = "x"\neval = "python -m pytest -q"\nrequirements = ["{requirement}"]\n'
    observation, reward, info = _eval(make_env, task_dir, files, toml)
    assert reward == 1.0, observation


def test_a_test_whose_id_changes_from_run_to_run_never_counts(make_env, task_dir):
    files = dict(CALC)
    files["test_stamp.py"] = """\
        import time

        import pytest

        @pytest.mark.parametrize("when", [str(time.time_ns())])  # the id differs in every run
        def test_stamped(when):
            assert when
        """
    env = make_env(task_dir(files, CALC_TOML, CALC_PATCH))
    env.reset()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b"}})
    for _ in range(2):  # the first measures the counted tests, the second forks
        result = env.evaluate()
        assert (result.score, result.max_score) == (2, 2)  # test_add and test_mul: the stamped test never counts
        assert not any("did not run" in note for note in result.notes)
