"""A pytest plugin for testing agents in CI: fixtures `minidebug_task` and `minidebug_env`, and a marker.

    import pytest

    @pytest.mark.minidebug_tasks("smoke")          # once per built-in smoke task (or names / paths)
    def test_my_agent_fixes_it(minidebug_env):
        obs, info = minidebug_env.reset()
        ...                                        # drive your agent
        assert info["score"] == info["max_score"]

When a test that uses `minidebug_env` fails, its report gets a section "minidebug episode": the path of the
episode's trajectory (`<task>.jsonl` in the test's `tmp_path`, written as the test plays) and the env's diff.

Loaded automatically (entry point `pytest11`) wherever minidebug is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .recorder import EpisodeRecorder

SMOKE = "smoke"
SECTION = "minidebug episode"
RECORDER: pytest.StashKey[EpisodeRecorder] = pytest.StashKey()  # the test's EpisodeRecorder, in its item's stash


def _expand(selectors) -> list[str]:
    from minidebug.tasks.task import smoke_task_paths

    expanded = []
    for selector in selectors:
        expanded += [str(p) for p in smoke_task_paths()] if selector == SMOKE else [str(selector)]
    return expanded


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "minidebug_tasks(*tasks): run the test once per task (bundled names, folder paths, or 'smoke')")


def pytest_generate_tests(metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("minidebug_tasks")
    if marker is None:
        return
    if "minidebug_task" not in metafunc.fixturenames:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: the minidebug_tasks marker needs the "
                                "minidebug_task or minidebug_env fixture")
    tasks = _expand(marker.args or (SMOKE,))
    ids = [task.rstrip("/").rsplit("/", 1)[-1] for task in tasks]
    metafunc.parametrize("minidebug_task", tasks, indirect=True, ids=ids)


@pytest.fixture
def minidebug_task(request):
    """The task under test: the marker's parameter, else the first smoke task."""
    from minidebug.tasks.task import load_task

    selector = getattr(request, "param", None) or _expand([SMOKE])[0]
    return load_task(selector)


@pytest.fixture
def minidebug_env(minidebug_task, request, tmp_path):
    """An env on `minidebug_task`, closed after the test (call reset() first); its episode is recorded in
    `tmp_path/<task>.jsonl`."""
    from ..core.make import make
    from .recorder import EpisodeRecorder

    env = make(minidebug_task)
    recorder = request.node.stash[RECORDER] = EpisodeRecorder(env, tmp_path / f"{minidebug_task.name}.jsonl")
    try:
        yield env
        recorder.finish()
    finally:
        env.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report gets the episode's trajectory path and diff, taken before the env closes."""
    outcome = yield
    report = outcome.get_result()
    recorder = item.stash.get(RECORDER, None)
    if report.when == "call" and report.failed and recorder is not None:
        if recorder.started:
            text = f"trajectory: {recorder.path}\ndiff:\n{recorder.diff() or '(no changes)'}"
        else:
            text = "no episode: the test did not call reset()"
        report.sections.append((SECTION, text))
