"""Hostile actions (random JSON, wrong types, huge strings, odd paths) never raise out of step()."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minidebug

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=10,
)
paths = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["..", "../..", "/etc/passwd", ".git/HEAD", "calc.py/..", "a" * 5000, "\0", "~", "calc.py\n"]),
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


def test_random_actions_never_raise(calc_task, cache_dir):
    env = minidebug.make(calc_task, cache_dir=cache_dir, max_steps=10_000, max_tokens=10**9)
    readonly = None
    try:
        env.reset()
        readonly = (env.workspace.root / "test_calc.py").read_bytes()

        @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
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
        assert (env.workspace.root / "test_calc.py").read_bytes() == readonly
        outside = env.workspace.dir.parent
        assert not any(p.name in ("calc.py", "x") for p in outside.iterdir() if p.is_file())
    finally:
        env.close()
