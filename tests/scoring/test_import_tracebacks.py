"""An import error's traceback, as pytest shows it in an eval's output, is the project's alone: the driver's
wrapper of importlib's loading (see drivers/minidebug_pristine.py) is hidden as importlib's own frames are
(pytest's own test of a conftest's import error compares each line of it)."""

import pytest

FILES = {
    "helper.py": "import minidebug_no_such_module\n",
    "test_at_import.py": "import helper\n",  # a collection error
    "test_in_a_test.py": "def test_imports():\n    import helper\n\n\ndef test_passes():\n    pass\n",
}


@pytest.mark.parametrize("mode", ["fork", "fresh"])
def test_an_import_error_s_traceback_shows_no_frame_of_the_driver(make_env, task_dir, mode):
    toml = 'description = "d"\neval = "python -m pytest -q --continue-on-collection-errors"\n'
    env = make_env(task_dir(FILES, toml), eval_mode=mode)
    env.reset()
    output = env.evaluate().output
    assert "ImportError while importing test module" in output and "helper.py:1: in <module>" in output, output
    assert "test_in_a_test.py:2: \n" in output and "helper.py:1: ModuleNotFoundError" in output, output
    assert "_load_unlocked" not in output and "minidebug_" not in output.replace("minidebug_no_such_module", ""), \
        output
