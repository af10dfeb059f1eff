"""The pytest plugin, run with pytester as a user's CI would run it."""


def test_fixtures_marker_and_smoke_set(pytester, cache_dir, monkeypatch):
    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    pytester.makepyfile(test_agent="""
        import pytest
        from minidebug.agents.oracle import OracleAgent

        def solve(env):
            obs, info = env.reset()
            agent = OracleAgent()
            agent.start(env, obs, info)
            done = False
            while not done:
                obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
                done = terminated or truncated
            return reward

        @pytest.mark.minidebug_tasks("smoke")
        def test_every_smoke_task(minidebug_env):
            assert solve(minidebug_env) == 1.0

        @pytest.mark.minidebug_tasks("off_by_one")
        def test_named_task(minidebug_task):
            assert minidebug_task.name == "off_by_one"

        def test_default_env(minidebug_env):
            obs, info = minidebug_env.reset()
            assert minidebug_env.task.name == "off_by_one" and "last_n" in obs
    """)
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*test_every_smoke_task?off_by_one? PASSED*",
                                 "*test_every_smoke_task?wrong_operator? PASSED*"])


def test_marker_without_the_fixture_is_a_usage_error(pytester):
    pytester.makepyfile(test_bad="""
        import pytest

        @pytest.mark.minidebug_tasks("smoke")
        def test_nothing():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*the minidebug_tasks marker needs the minidebug_task or minidebug_env fixture*"])


def test_a_failing_test_reports_its_trajectory_and_diff(pytester, cache_dir, monkeypatch):
    from minidebug.core.trajectory import Trajectory, read_trajectory
    from minidebug.run.replay_check import replay

    monkeypatch.setenv("MINIDEBUG_CACHE", str(cache_dir))
    pytester.makepyfile(test_agent="""
        def test_a_wrong_fix(minidebug_env):
            minidebug_env.reset()
            minidebug_env.step({"name": "edit", "arguments": {"path": "items.py", "old": "[-n - 1:]",
                                                              "new": "[-n - 2:]"}})
            obs, reward, terminated, truncated, info = minidebug_env.step({"name": "eval"})
            assert reward == 1.0

        def test_no_episode(minidebug_env):
            assert False
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    result.stdout.fnmatch_lines(["*- minidebug episode -*", "trajectory: *off_by_one.jsonl", "diff:",
                                 "-    return items[[]-n - 1:[]]", "+    return items[[]-n - 2:[]]",
                                 "*- minidebug episode -*", "no episode: the test did not call reset()"])
    [path] = [line.split(": ", 1)[1] for line in output.splitlines() if line.startswith("trajectory: ")]
    trajectory = Trajectory.of(read_trajectory(path))  # the result line is written when the test ends
    assert [step.action.name for step in trajectory.steps] == ["edit", "eval"]
    assert not trajectory.result.solved and "+    return items[-n - 2:]" in trajectory.result.diff
    mismatches, _ = replay(path, cache_dir)
    assert mismatches == []
