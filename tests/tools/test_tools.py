import pytest


@pytest.fixture
def env(make_env, calc_task):
    env = make_env(calc_task)
    env.reset()
    return env


def step(env, name, **arguments):
    observation, reward, terminated, truncated, info = env.step({"name": name, "arguments": arguments})
    return observation, info


def test_view_numbers_lines_and_windows(env):
    observation, _ = step(env, "view", path="calc.py")
    assert observation.splitlines()[0] == "calc.py (6 lines)"
    assert "2      return a - b" in observation
    observation, _ = step(env, "view", path="calc.py", start=5, end=99)
    assert observation.splitlines() == ["calc.py (lines 5-6 of 6)", "5  def mul(a, b):", "6      return a * b"]


@pytest.mark.parametrize("arguments, message", [
    ({"path": "calc.py", "start": 0}, "need 1 <= start <= end"),
    ({"path": "calc.py", "start": 4, "end": 2}, "need 1 <= start <= end"),
    ({"path": "calc.py", "start": 50}, "start=50 is past the end"),
    ({"path": "nope.py"}, "no such file"),
    ({"path": "."}, "is a directory"),
    ({"path": "calc.py", "start": "1"}, "'start': Input should be a valid integer"),
    ({"path": "calc.py", "colour": 1}, "'colour': unknown argument"),
    ({}, "'path': Field required"),
])
def test_view_errors(env, arguments, message):
    observation, info = step(env, "view", **arguments)
    assert observation.startswith("error:") and message in observation
    assert info["error"]


def test_edit_by_line_range_shows_a_diff(env):
    observation, _ = step(env, "edit", path="calc.py", start=2, end=2, new_code="    return a + b")
    assert "-    return a - b\n+    return a + b" in observation
    assert (env.workspace.root / "calc.py").read_text().splitlines()[1] == "    return a + b"


def test_edit_insert_delete_and_append(env):
    step(env, "edit", path="calc.py", start=1, end=0, new_code="import math\n")
    step(env, "edit", path="calc.py", start=2, end=3, new_code="")
    step(env, "edit", path="calc.py", start=6, end=5, new_code="# end\n")
    assert (env.workspace.root / "calc.py").read_text() == (
        "import math\n\n\ndef mul(a, b):\n    return a * b\n# end\n"
    )


def test_edit_by_unique_snippet(env):
    step(env, "edit", path="calc.py", old="a - b", new="a + b")
    assert "return a + b" in (env.workspace.root / "calc.py").read_text()
    observation, _ = step(env, "edit", path="calc.py", old="return", new="yield")
    assert "occurs 2 times" in observation
    observation, _ = step(env, "edit", path="calc.py", old="absent", new="x")
    assert "occurs 0 times" in observation


def test_edit_creates_a_new_file(env):
    observation, _ = step(env, "edit", path="pkg/util.py", start=1, end=0, new_code="X = 1")
    assert "--- /dev/null" in observation and "+X = 1" in observation
    assert (env.workspace.root / "pkg" / "util.py").read_text() == "X = 1\n"


@pytest.mark.parametrize("arguments, message", [
    ({"path": "test_calc.py", "old": "add", "new": "sub"}, "read-only"),
    ({"path": "calc.py", "start": 1, "end": 1}, "either start, end and new_code, or old and new"),
    ({"path": "calc.py", "start": 1, "end": 1, "new_code": "x", "old": "a", "new": "b"}, "either start"),
    ({"path": "calc.py", "start": -3, "end": 1, "new_code": "x"}, "bad range"),
    ({"path": "calc.py", "start": 9, "end": 9, "new_code": "x"}, "bad range"),
    ({"path": "calc.py", "start": 3, "end": 1, "new_code": "x"}, "bad range"),
    ({"path": "nothere.py", "start": 3, "end": 3, "new_code": "x"}, "no such file"),
    ({"path": "calc.py", "old": "", "new": "x"}, "'old' is empty"),
    ({"path": "calc.py", "old": "a", "new": "x" * 1_000_001}, "too long"),
])
def test_edit_errors_leave_the_file_alone(env, arguments, message):
    before = (env.workspace.root / "calc.py").read_bytes()
    observation, info = step(env, "edit", **arguments)
    assert observation.startswith("error:") and message in observation, observation
    assert (env.workspace.root / "calc.py").read_bytes() == before


def test_listdir_and_depth(env):
    step(env, "edit", path="a/b/c/deep.py", start=1, end=0, new_code="")
    observation, _ = step(env, "listdir")
    assert observation.splitlines() == ["./", "  a/", "    b/", "  calc.py", "  test_calc.py"]
    observation, _ = step(env, "listdir", path="a", depth=3)
    assert "deep.py" in observation
    assert ".git" not in step(env, "listdir", depth=5)[0]


def test_grep_plain_and_regex(env):
    observation, _ = step(env, "grep", pattern="def ")
    assert observation.splitlines() == [
        "calc.py:1: def add(a, b):", "calc.py:5: def mul(a, b):",
        "test_calc.py:4: def test_add():", "test_calc.py:8: def test_mul():",
    ]
    observation, _ = step(env, "grep", pattern=r"a [-*] b", regex=True, path="calc.py")
    assert observation.splitlines() == ["calc.py:2:     return a - b", "calc.py:6:     return a * b"]
    observation, _ = step(env, "grep", pattern="(", regex=True)
    assert observation.startswith("error: grep: bad regex")


def test_bash_is_off_by_default(env):
    observation, info = step(env, "bash", command="ls")
    assert "unknown tool 'bash'" in observation


def test_bash_runs_in_the_venv_with_a_timeout(make_env, calc_task):
    env = make_env(calc_task, bash=True, command_timeout=1)
    env.reset()
    observation, _ = step(env, "bash", command="which python; pwd")
    assert observation.splitlines() == ["$VENV/bin/python", "."]
    observation, _ = step(env, "bash", command="echo partial; sleep 30")
    assert "partial" in observation and "timed out after 1 s" in observation
    observation, _ = step(env, "bash", command="exit 4")
    assert "[exit code 4]" in observation
