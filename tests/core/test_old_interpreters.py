"""Evals under the interpreters recipes ask for, back to 3.6: what their runtime holds that newer ones do not.

- Before 3.10, `unicodedata.ucd_3_2_0` is an instance of a static type that is not readied until first used:
  its `__mro__` is None. A module that holds one (requests does, through idna) is read by the checks the eval
  driver makes of what modules hold; a crash there left every test "not run".
- Before 3.11, unittest calls `_Outcome.testPartExecutor(test_case, isTest=True)`, not `subTest`: the driver's
  wrapper of it takes what it is given, or every unittest test case (requests' own) fails with a TypeError.
"""

from __future__ import annotations

import pytest

UCD = {
    "names.py": """\
        import unicodedata
        from unicodedata import ucd_3_2_0


        def category(char):
            return ucd_3_2_0.category(char) if char else unicodedata.category(" ")
        """,
    "test_names.py": """\
        from names import category


        def test_letter():
            assert category("a") == "Ll"


        def test_space():
            assert category("") == "Zs"
        """,
    "test_cases.py": """\
        import unittest

        from names import category


        class CategoryTest(unittest.TestCase):
            def setUp(self):
                self.letter = "b"

            def test_letter(self):
                self.assertEqual(category(self.letter), "Ll")

            def test_sub_tests(self):
                for char in "xy":
                    with self.subTest(char=char):
                        self.assertEqual(category(char), "Ll")
        """,
}


@pytest.mark.slow  # a venv of Python 3.9 (pyenv's, uv's or the system's) built with pytest in it
def test_python_3_9_a_module_holding_a_type_not_readied_yet_and_unittest_cases(make_env, task_dir):
    toml = 'description = "names"\neval = "python -m pytest -q"\npython = "3.9"\n'
    env = make_env(task_dir(UCD, toml, name="ucd"), sandbox=None)
    env.reset()
    observation, reward, terminated, truncated, info = env.step({"name": "eval"})
    assert reward == 1.0, observation
    assert "4 passed" in observation, observation
    assert not info.get("suspicious"), info
