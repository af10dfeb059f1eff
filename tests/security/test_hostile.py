"""Hostile actions (random JSON, wrong types, huge strings, odd paths) never raise out of step()."""

import json
import os

import pytest

pytest.importorskip("hypothesis", reason="hypothesis is part of the test extra; install it")

from hypothesis import HealthCheck, given, settings, strategies as st

import minidebug

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=10,
)
paths = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["..", "../..", "/etc/passwd", ".git/HEAD", "calc.py/..", "a" * 5000, "\0", "~", "calc.py\n",
                     "x", "escape", "escape/calc.py", "escape/new.py", "loop_a", "loop_b/y", "calc.py"]),
    st.lists(st.sampled_from(["..", ".", "calc.py", "x", "ü", ""]), max_size=6).map("/".join),
)
tool_names = st.sampled_from(["view", "edit", "listdir", "grep", "eval", "submit", "bash", ""]) | st.text(max_size=8)
arguments = st.fixed_dictionaries({}, optional={
    "path": paths | json_values, "start": st.integers(-10, 20) | json_values, "end": st.integers(-10, 20),
    "new_code": st.text(max_size=30), "old": st.text(max_size=5), "new": st.text(max_size=5),
    "pattern": st.text(max_size=10), "regex": st.booleans(), "depth": st.integers(-2, 5),
})
actions = st.one_of(
    json_values,
    st.text(max_size=100),
    st.builds(lambda n, a: {"name": n, "arguments": a}, tool_names.filter(lambda n: n not in ("eval", "submit")), arguments),
).map(lambda a: a)


@pytest.fixture(scope="module")
def pdb_env(tmp_path_factory, cache_dir):
    import textwrap

    from tests.conftest import CALC, CALC_PATCH, CALC_TOML

    root = tmp_path_factory.mktemp("pdbfuzz") / "calc"
    for rel, text in CALC.items():
        (root / "repo").mkdir(parents=True, exist_ok=True)
        (root / "repo" / rel).write_text(textwrap.dedent(text))
    (root / "task.toml").write_text(textwrap.dedent(CALC_TOML))
    (root / "solution.patch").write_text(textwrap.dedent(CALC_PATCH))
    env = minidebug.make(root, cache_dir=cache_dir, pdb_timeout=2,
                         max_steps=10**6, max_tokens=10**12)
    env.reset()
    yield env
    env.close()


def _outside_snapshot(env, canary):
    """Everything the fuzzing could reach outside the worktree: the episode's other dirs and a canary dir."""
    entries = {}
    for top in [p for p in env.workspace.dir.iterdir() if p != env.workspace.root] + [canary]:
        for path in [top, *top.rglob("*")]:
            entries[str(path)] = path.read_bytes() if path.is_file() else None
    return entries


@pytest.mark.parametrize("calls", [500, pytest.param(10_000, marks=pytest.mark.slow)])
def test_random_actions_never_raise(calc_task, cache_dir, tmp_path, calls):
    """At least `calls` generated calls: no exception out of step(), no write outside, read-only intact."""
    env = minidebug.make(calc_task, cache_dir=cache_dir, max_steps=10**6, max_tokens=10**12)
    readonly = None
    try:
        env.reset()
        root = env.workspace.root
        readonly = (root / "test_calc.py").read_bytes()
        os.symlink("loop_a", root / "loop_b")
        os.symlink("loop_b", root / "loop_a")
        canary = tmp_path / "canary"
        canary.mkdir()
        (canary / "calc.py").write_text("untouched\n")
        os.symlink(canary, root / "escape")
        os.symlink(canary / "calc.py", root / "x")
        before = _outside_snapshot(env, canary)

        @settings(max_examples=calls, deadline=None, suppress_health_check=list(HealthCheck))
        @given(action=actions, as_json=st.booleans())
        def check(action, as_json):
            if as_json:
                try:
                    action = json.dumps(action)
                except ValueError:
                    pass
            observation, reward, terminated, truncated, info = env.step(action)
            assert isinstance(observation, str) and isinstance(info, dict)
            assert reward == 0.0 and not terminated

        check()
        assert env.step({"name": "listdir"})[4]["step"] >= calls
        assert (root / "test_calc.py").read_bytes() == readonly
        assert _outside_snapshot(env, canary) == before
    finally:
        env.close()


PDB_COMMANDS = st.one_of(
    st.sampled_from(["c", "n", "s", "r", "w", "u", "d", "l", "ll", "a", "q", "restart", "cl", "b", "tbreak 3",
                     "b calc.py:2", "b calc.py:999", "b nowhere.py:1", "cl 7", "p a", "p 1/0", "interact",
                     "debug 1", "commands", "!import os", "p '(Pdb) '", "until 9", "j 1", "display a"]),
    st.text(max_size=40),
)


def _pdb_command_never_raises(env, command):
    observation, reward, terminated, truncated, info = env.step({"name": "pdb", "arguments": {"command": command}})
    assert isinstance(observation, str) and not terminated


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(command=PDB_COMMANDS)
def test_random_pdb_commands_never_raise(pdb_env, command):
    _pdb_command_never_raises(pdb_env, command)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(command=PDB_COMMANDS)
def test_many_random_pdb_commands_never_raise(pdb_env, command):
    _pdb_command_never_raises(pdb_env, command)
