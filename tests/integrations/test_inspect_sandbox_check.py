"""inspect_ai's own conformance checks for sandbox providers (`inspect_ai.util._sandbox.self_check`), run against
the `minidebug` sandbox in every sandbox mode, and what inspect's contract asks beyond them. As in inspect's own
runner, the checks of a mode share one episode: each cleans up what it made."""

import asyncio

import pytest

pytest.importorskip("inspect_ai", reason="the [inspect] extra is part of the test extra; install it")

from inspect_ai.util._sandbox import self_check

from minidebug.integrations.inspect_ai import MinidebugSandbox, MinidebugSandboxConfig
from minidebug.sandbox.choose import bwrap_works, landlock_works

from ..conftest import processes_left

# The checks that cannot apply to this sandbox, and why; every other check runs in every mode.
OUTSIDE = ("it works on a path outside the project (/tmp, /etc or /usr/bin), and the sandbox's files and working "
           "folders are the project's alone")
OUTSIDE_FOLDER = OUTSIDE + " (the test after these asks the same of a project folder)"
NOT_APPLICABLE = {
    "test_cwd_absolute": OUTSIDE,
    "test_cwd_custom": OUTSIDE,
    "test_read_and_write_file_including_directory_absolute": OUTSIDE,
    "test_read_file_is_directory": OUTSIDE_FOLDER,
    "test_write_text_file_is_directory": OUTSIDE_FOLDER,
    "test_write_binary_file_is_directory": OUTSIDE_FOLDER,
    "test_exec_as_user": "an episode's programs run as one user, the one running minidebug: a command as any other "
                         "raises SandboxUserUnsupportedError (test_exec_as_nonexistent_user checks it), so there is "
                         "no user to add or to run as",
}
# Under Landlock a program cannot change a file's mode (the seccomp filter refuses chmod, so that no program
# passes bits to another through a file's mode: see minidebug/sandbox/README.md), and these checks start by
# making a file unreadable or unwritable with `chmod`.
CHMOD = "under Landlock no program can chmod a file, which this check starts by doing"
NOT_UNDER_LANDLOCK = {
    "test_read_file_not_allowed": CHMOD,
    "test_write_text_file_without_permissions": CHMOD,
    "test_write_binary_file_without_permissions": CHMOD,
}
MODES = {None: True, "landlock": landlock_works(), "bwrap": bwrap_works()}


def params():
    for mode, works in MODES.items():
        for check in sorted(self_check.__all__):
            reason = NOT_APPLICABLE.get(check) or (NOT_UNDER_LANDLOCK.get(check) if mode == "landlock" else None)
            if not works:
                reason = f"the {mode} sandbox does not work on this machine"
            marks = [pytest.mark.skip(reason=reason)] if reason else []
            if mode != "bwrap":  # the default sandbox's in the default tier, every mode's with -m slow
                marks.append(pytest.mark.slow)
            yield pytest.param(mode, check, marks=marks, id=f"{check}-{mode}")


@pytest.fixture(scope="module")
def boxes(cache_dir):
    """boxes(mode) -> the module's episode of that sandbox mode, as inspect's sample_init makes it."""
    made = {}

    def box(mode):
        if mode not in made:
            config = MinidebugSandboxConfig(task="sum_tree", sandbox=mode)
            made[mode] = asyncio.run(MinidebugSandbox.sample_init("self-check", config, {}))
        return made[mode]["default"].as_type(MinidebugSandbox)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINIDEBUG_CACHE", str(cache_dir))
        yield box
        for environments in made.values():
            asyncio.run(MinidebugSandbox.sample_cleanup("self-check", None, environments, False))
    assert not processes_left()


@pytest.mark.parametrize("mode, check", list(params()))
def test_inspects_sandbox_self_check(boxes, mode, check):
    asyncio.run(getattr(self_check, check)(boxes(mode)))


@pytest.mark.parametrize("mode", [pytest.param(mode, marks=[] if works else pytest.mark.skip(reason="no such sandbox"))
                                  for mode, works in MODES.items()])
def test_a_project_folder_is_a_directory_to_read_and_write_and_a_missing_program_a_failed_result(boxes, mode):
    """What inspect's contract says beyond its checks: read_file and write_file of a folder raise
    IsADirectoryError; a program that is not there is a failed result, not an exception."""
    box = boxes(mode)

    async def scenario():
        await box.write_file("folder/file", "content")
        for attempt in (lambda: box.read_file("folder"), lambda: box.write_file("folder", "content")):
            with pytest.raises(IsADirectoryError, match="directory"):
                await attempt()
        assert (await box.exec(["rm", "-r", "folder"])).success
        missing = await box.exec(["no-such-program", "--flag"])
        assert (missing.success, missing.returncode) == (False, 127) and "no-such-program" in missing.stderr

    asyncio.run(scenario())
