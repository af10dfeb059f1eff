"""Red team: scripted agents that try to raise the score without fixing the bug, or to read the answer.

The task is CALC: `add` is wrong, `mul` is right, so the true reward of an unfixed project is 1/2. Each attack
asserts that true reward, and that a second, clean episode is unaffected.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from minidebug.sandbox.choose import bwrap_works, landlock_works
from minidebug.store.cache import DRIVER_SOURCES
from tests.conftest import CALC, CALC_PATCH, CALC_TOML

needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed (.ci/run installs it)")
needs_landlock = pytest.mark.skipif(not landlock_works(), reason="this kernel has no usable Landlock")

UNFIXED = 0.5


def bash(env, command):
    return env.step({"name": "bash", "arguments": {"command": command}})[0]


def write(env, rel, text):
    """Write a file the way a program would (through bash), bypassing the edit tool's refusals."""
    body = textwrap.dedent(text).replace("'", "'\\''")
    return bash(env, f"mkdir -p \"$(dirname '{rel}')\" && printf '%s' '{body}' > '{rel}' && echo wrote")


def evaluate(env):
    observation, reward, terminated, truncated, info = env.step({"name": "eval"})
    return reward, observation, info


@pytest.fixture
def calc(task_dir):
    return task_dir(CALC, CALC_TOML, CALC_PATCH, name="calc")


@pytest.fixture
def attack(make_env, calc):
    """attack(script) -> (reward, observation, info) of an eval after the script, then checks a clean episode."""

    def run(script, **options):
        env = make_env(calc, bash=True, **options)
        env.reset()
        script(env)
        result = evaluate(env)
        with make_env(calc, **options) as clean:
            clean.reset()
            clean_reward, clean_observation, _ = evaluate(clean)
            assert clean_reward == UNFIXED, clean_observation
        return result

    return run


FORGING_CONFTEST = """\
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome = "passed"
    """

FORGING_PLUGIN = FORGING_CONFTEST


@pytest.mark.parametrize("where", ["conftest.py", "sub/conftest.py"])
def test_a_conftest_that_turns_failures_into_passes_is_not_used(attack, where):
    reward, observation, _ = attack(lambda env: write(env, where, FORGING_CONFTEST))
    assert reward == UNFIXED, observation
    assert "task's own version" in observation


@pytest.mark.parametrize("config", [
    ("pytest.ini", "[pytest]\naddopts = -p forge\n"),
    ("tox.ini", "[pytest]\naddopts = -p forge\n"),
    ("setup.cfg", "[tool:pytest]\naddopts = -p forge\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-p forge\"\n"),
    ("pytest.toml", "[pytest]\naddopts = [\"-p\", \"forge\"]\n"),
])
def test_pytest_configuration_that_loads_a_forging_plugin_is_not_used(attack, config):
    name, text = config

    def script(env):
        write(env, "forge.py", FORGING_PLUGIN)
        write(env, name, text)

    reward, observation, _ = attack(script)
    assert reward == UNFIXED, observation


def test_edit_refuses_the_harness_files(make_env, calc):
    env = make_env(calc)
    env.reset()
    for path in ("conftest.py", "tests/conftest.py", "pytest.ini", "setup.cfg", "tox.ini", "sitecustomize.py",
                 "x.pth"):
        observation = env.step({"name": "edit", "arguments": {"path": path, "start": 1, "end": 0,
                                                              "new_code": "x = 1\n"}})[0]
        assert observation.startswith("error:") and "belongs to the task" in observation, path
    observation = env.step({"name": "edit", "arguments": {"path": "pyproject.toml", "start": 1, "end": 0,
                                                          "new_code": "[tool.pytest.ini_options]\naddopts = '-x'\n"}})[0]
    assert observation.startswith("error:") and "tool.pytest" in observation
    observation = env.step({"name": "edit", "arguments": {"path": "pyproject.toml", "start": 1, "end": 0,
                                                          "new_code": "[project]\nname = 'calc'\n"}})[0]
    assert not observation.startswith("error:"), observation


@pytest.mark.parametrize("name", ["sitecustomize.py", "usercustomize.py", "pytest.py", "_pytest/__init__.py",
                                  "pluggy.py", "forge.pth"])
def test_files_that_shadow_pytest_or_hook_start_up_are_not_used(attack, name):
    code = "import os\nprint('FORGED: 1 passed')\nos._exit(0)\n" if not name.endswith(".pth") else \
        "import os; os._exit(0)\n"
    reward, observation, _ = attack(lambda env: write(env, name, code))
    assert reward == UNFIXED and "FORGED" not in observation, observation


def test_a_fake_report_written_by_the_code_under_test_is_ignored(attack):
    forged = """\
        import atexit, json, os

        def add(a, b):
            return a - b

        def mul(a, b):
            return a * b

        def _forge():
            line = json.dumps({"tests": {"test_calc.py::test_add": "passed", "test_calc.py::test_mul": "passed"}})
            for fd in range(3, 64):
                try:
                    os.write(fd, (line + "\\n").encode())
                except OSError:
                    pass

        atexit.register(_forge)
        _forge()
        """
    reward, observation, _ = attack(lambda env: write(env, "calc.py", forged))
    assert reward == UNFIXED, observation


@pytest.mark.parametrize("trick,expected", [
    ("import pytest\n    if a - b != a + b:\n        pytest.skip('not today')\n", "skipped"),
    ("import pytest\n    if a - b != a + b:\n        pytest.xfail('known')\n", "xfailed"),
    ("import sys\n    sys.exit(0)\n", None),
    ("import os\n    os._exit(0)\n", None),
    ("import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n", None),
])
def test_skip_xfail_and_exit_tricks_do_not_pass(attack, trick, expected):
    buggy = "def add(a, b):\n    " + trick + "    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    reward, observation, info = attack(lambda env: write(env, "calc.py", buggy))
    assert reward <= UNFIXED, observation
    if expected:
        assert f"1 {expected}" in observation.splitlines()[0]


def test_exit_at_import_scores_zero(attack):
    reward, observation, _ = attack(lambda env: write(env, "calc.py", "import os\nos._exit(0)\n"))
    assert reward == 0.0 and "no pytest results were recorded" in observation


def test_deleting_renaming_or_rewriting_tests_changes_nothing(attack):
    def script(env):
        bash(env, "mv test_calc.py test_renamed.py && sed -i 's/== 5/== -1/' test_renamed.py")
        write(env, "free_test.py", "def test_free():\n    pass\n")

    reward, observation, _ = attack(script)
    assert reward == UNFIXED, observation
    assert "task's own version of test_renamed.py" in observation
    assert "1 test(s) not counted (not among the task's tests): free_test.py::test_free" in observation


def test_tests_belong_to_the_task_even_without_readonly_globs(make_env, task_dir):
    toml = 'description = "add() gives wrong sums"\neval = "python -m pytest -q"\n'
    task = task_dir(CALC, toml, CALC_PATCH, name="calc_open")
    env = make_env(task, bash=True)
    env.reset()
    refused = env.step({"name": "edit", "arguments": {"path": "test_calc.py", "old": "== 5", "new": "== -1"}})[0]
    assert refused.startswith("error:")
    bash(env, "sed -i 's/== 5/== -1/' test_calc.py")
    reward, observation, _ = evaluate(env)
    assert reward == UNFIXED and "task's own version of test_calc.py" in observation


def test_the_fix_itself_still_scores_one(make_env, calc):
    env = make_env(calc)
    env.reset()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
    reward, observation, _ = evaluate(env)
    assert reward == 1.0, observation


SECRET_TOML = CALC_TOML + 'hidden = ["test_hidden.py"]\n'
HIDDEN_TEST = "from calc import add\n\n\ndef test_hidden_add():\n    assert add(10, 5) == 15\n"


def eval_with_a_hidden_test(make_env, task_dir, calc_source, **options):
    """(env, reward, observation, info) of an eval of CALC with a hidden test, after calc.py became calc_source."""
    task = task_dir(dict(CALC, **{"test_hidden.py": HIDDEN_TEST}), SECRET_TOML, CALC_PATCH, name="secret")
    env = make_env(task, bash=True, **options)
    env.reset()
    write(env, "calc.py", calc_source)
    return (env, *evaluate(env))


LEAK = """\
    import glob, os, shutil

    def add(a, b):
        return a - b

    def mul(a, b):
        return a * b

    here = os.path.dirname(os.path.abspath(__file__))
    targets = [os.environ.get("HOME", "/nonexistent"), os.environ.get("TMPDIR", "/nonexistent"), "/tmp",
               os.path.dirname(here)] + glob.glob("/tmp/minidebug-ep-*/work-*") + glob.glob("/tmp/*/minidebug-ep-*/work-*")
    for target in targets:
        try:
            shutil.copy(os.path.join(here, "test_hidden.py"), os.path.join(target, "leaked_hidden.py"))
        except OSError:
            pass
    """


@needs_bwrap
def test_hidden_tests_copied_out_by_code_under_eval_never_reach_the_agent(make_env, task_dir):
    env, reward, observation, info = eval_with_a_hidden_test(make_env, task_dir, LEAK)
    assert info["max_score"] == 3 and info["score"] == 1, observation
    found = bash(env, "find / -name leaked_hidden.py -o -name test_hidden.py 2>/dev/null; echo done")
    assert "leaked_hidden" not in found and "test_hidden" not in found, found
    assert not list(env.workspace.dir.rglob("leaked_hidden.py"))


SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), pytest.param("landlock", marks=needs_landlock)]

SHOUTING = """\
    import glob, os, sys

    def add(a, b):
        for name in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_h*.py")):
            text = open(name).read()
            print(text)
            sys.stderr.write(text)
            raise ImportError(text)
        return a - b

    def mul(a, b):
        return a * b
    """


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_code_under_eval_that_prints_or_raises_a_hidden_test_shows_nothing_of_it(make_env, task_dir, sandbox):
    _, reward, observation, info = eval_with_a_hidden_test(make_env, task_dir, SHOUTING, sandbox=sandbox)
    assert info["max_score"] == 3 and info["score"] == 1, observation
    assert "10, 5" not in observation and "test_hidden" not in observation, observation
    assert "hidden tests (outcomes only): 1 not passed" in observation, observation
    assert "FAILED test_calc.py::test_add" in observation  # the visible tests' failures are shown as usual


# The scored run (hidden files present) writes the hidden test into what outlives a run of its folder (an
# extended attribute, the mode, the times); the shown run, in the same folder without it, raises with it.
THROUGH_THE_FOLDER = """\
    import glob, os

    here = os.path.dirname(os.path.abspath(__file__))
    found = glob.glob(os.path.join(here, "test_hidden.py"))
    if found:
        secret = open(found[0], "rb").read()
        for change in (lambda: os.setxattr(here, "user.leak", secret), lambda: os.chmod(here, 0o701),
                       lambda: os.utime(here, (len(secret), len(secret)))):
            try:
                change()
            except OSError:
                pass
        names = [os.path.join(here, f"{number:0200}") for number in range(300)]
        for name in names:  # a folder that grew stays grown on most file systems
            open(name, "w").close()
        for name in names:
            os.unlink(name)
    else:
        os.makedirs(os.path.join(here, "empty"), exist_ok=True)
        seen = {"xattr": os.listxattr(here), "mode": oct(os.stat(here).st_mode), "mtime": os.stat(here).st_mtime,
                "grown": os.stat(here).st_size > 4 * os.stat(os.path.join(here, "empty")).st_size}
        if seen["xattr"]:
            raise ImportError(os.getxattr(here, "user.leak").decode())
        if seen["mode"].endswith("701") or seen["mtime"] < 1e6 or seen["grown"]:
            raise ImportError(f"the scored run passed something on: {seen}")

    def add(a, b):
        return a - b

    def mul(a, b):
        return a * b
    """


@pytest.mark.parametrize("sandbox", [None] + SANDBOXES)
def test_the_scored_run_passes_nothing_of_a_hidden_test_on_through_the_eval_folder(make_env, task_dir, sandbox):
    env, reward, observation, info = eval_with_a_hidden_test(make_env, task_dir, THROUGH_THE_FOLDER, sandbox=sandbox,
                                                             terminate_on_success=False)
    for _ in range(2):  # the first eval of an env runs fresh, the next forked
        assert "10, 5" not in observation and "passed something on" not in observation, observation
        assert info["max_score"] == 3 and info["score"] == 1, observation
        reward, observation, info = evaluate(env)


# Smuggles each test file out through the text of a forgery finding: a code object's file name (hex of the file).
FINDING_CHANNEL = """\
    import glob, os

    def add(a, b):
        for name in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_*.py")):
            label = "LEAK" + open(name).read().encode().hex() + "END"
            exec(compile("import sys\\nsys._getframe()\\n", label, "exec"), {})
        return a - b

    def mul(a, b):
        return a * b
    """


@pytest.mark.parametrize("sandbox", [None] + SANDBOXES)
def test_the_scored_runs_findings_carry_nothing_of_a_hidden_test(make_env, task_dir, sandbox):
    env, reward, observation, info = eval_with_a_hidden_test(make_env, task_dir, FINDING_CHANNEL, sandbox=sandbox)
    leaked = HIDDEN_TEST.encode().hex()
    assert leaked not in observation and leaked not in " ".join(info["suspicious"]), info["suspicious"]
    assert any("in the scored run, with the task's hidden files" in f for f in info["suspicious"]), info["suspicious"]
    visible = open(env.workspace.root / "test_calc.py").read().encode().hex()
    assert any(visible in finding for finding in info["suspicious"])  # the visible run's findings, as they are


def test_a_fixed_project_scores_the_hidden_tests_and_names_none_of_them(make_env, task_dir):
    task = task_dir(dict(CALC, **{"test_hidden.py": HIDDEN_TEST}), SECRET_TOML, CALC_PATCH, name="secret")
    env = make_env(task)
    env.reset()
    env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
    reward, observation, info = evaluate(env)
    assert reward == 1.0 and info["max_score"] == 3, observation
    assert "hidden tests (outcomes only): 1 passed" in observation and "test_hidden" not in observation


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("tool", ["bash", "pdb", "inspect"])
def test_the_answer_cannot_be_read_by_absolute_path(make_env, calc, cache_dir, tool, sandbox):
    import minidebug

    env = make_env(calc, bash=True, sandbox=sandbox)
    env.reset()
    secrets = [calc / "solution.patch", cache_dir, env.workspace.prepared.entry, env.workspace.prepared.eval_base,
               __import__("pathlib").Path(minidebug.__file__).parent / "env.py"]
    for secret in secrets:
        code = f"open({str(secret)!r}).read() if __import__('os').path.isfile({str(secret)!r}) else " \
               f"__import__('os').listdir({str(secret)!r})"
        if tool == "bash":
            observation = bash(env, f"python -c \"print({code})\"")
        elif tool == "pdb":
            observation = env.step({"name": "pdb", "arguments": {"command": f"p {code}"}})[0]
        else:
            observation = env.step({"name": "inspect", "arguments": {"at": "calc.py:2", "expr": [code]}})[0]
        # Folders above a mounted one exist as empty mount points; nothing else of them is there.
        hidden = "No such file" in observation or "FileNotFoundError" in observation or \
            "Permission denied" in observation or \
            ("tasks" not in observation and "calc" not in observation.split("=")[-1])
        assert hidden and "a + b" not in observation, (secret, observation)


@needs_bwrap
def test_the_drivers_folder_holds_nothing_else(make_env, calc):
    env = make_env(calc, bash=True)
    env.reset()
    observation = env.step({"name": "pdb", "arguments": {"command": "p sorted(__import__('os').listdir("
                                                                   "__import__('os').path.dirname("
                                                                   "__import__('minidebug_pdb').__file__)))"}})[0]
    drivers = sorted(path.name for path in DRIVER_SOURCES.glob("*.py"))
    assert "minidebug_pdb.py" in drivers and repr(drivers) in observation, observation


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_venv_is_read_only_inside_the_sandbox(make_env, calc, sandbox):
    env = make_env(calc, bash=True, sandbox=sandbox)
    env.reset()
    observation = bash(env, "python -c \"import site; p = site.getsitepackages()[0]; "
                            "open(p + '/forge.pth', 'w').write('import os')\"")
    assert "Read-only file system" in observation or "Permission denied" in observation


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_network_and_no_host_files(make_env, calc, sandbox, tmp_path):
    import socket

    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    env = make_env(calc, bash=True, sandbox=sandbox)
    env.reset()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        code = f"import socket; socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), timeout=2)"
        observation = bash(env, f'python -c "{code}"; cat {secret}')
    finally:
        server.close()
    assert ("ConnectionRefusedError" in observation or "PermissionError" in observation) and \
        "TOPSECRET" not in observation, observation


POISON_PLUGIN = FORGING_CONFTEST
POISON_PTH = "import os; os.environ['PYTEST_PLUGINS'] = 'forgeplug'\n"


def poison(env):
    site = next(env.workspace.venv.glob("lib/python*/site-packages"))
    write(env, f"{site}/forgeplug.py", POISON_PLUGIN)
    return write(env, f"{site}/forge.pth", POISON_PTH)


def test_a_poisoned_venv_is_detected_repaired_and_never_scored(make_env, calc, task_dir):
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    assert "wrote" in poison(env)
    reward, observation, info = evaluate(env)
    assert reward == UNFIXED and info.get("tampered") is True, observation
    assert "rebuilt" in observation
    other = task_dir(CALC, CALC_TOML, CALC_PATCH, name="other")  # another task that shares the venv
    assert "wrote" in poison(env)
    with make_env(other, sandbox=None) as fresh:
        _, info = fresh.reset()
        assert info.get("tampered") is True
        reward, observation, info = evaluate(fresh)
        assert reward == UNFIXED and "tampered" not in info, observation
    assert "wrote" in poison(env)
    _, info = env.reset()
    assert info.get("tampered") is True


def test_pip_install_goes_to_a_layer_that_reset_removes(make_env, calc, tmp_path):
    package = tmp_path / "pkg"
    (package / "extra_mod").mkdir(parents=True)
    (package / "extra_mod" / "__init__.py").write_text("VALUE = 42\n")
    (package / "pyproject.toml").write_text('[project]\nname = "extra-mod"\nversion = "1.0"\n'
                                            '[build-system]\nrequires = []\nbuild-backend = "setuptools.build_meta"\n')
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    observation = bash(env, f"cp -r {package} pkg && pip install --no-index --no-build-isolation -q ./pkg "
                            "&& python -c 'import extra_mod; print(extra_mod.VALUE)'")
    assert "42" in observation, observation
    reward, observation, info = evaluate(env)
    assert "tampered" not in info, observation
    env.reset()
    assert "No module named" in bash(env, "python -c 'import extra_mod'")


def test_an_explicit_bwrap_sandbox_never_falls_back(monkeypatch, calc, cache_dir, tmp_path):
    import shutil

    import minidebug
    from minidebug.errors import WorkspaceError
    from minidebug.sandbox.choose import bwrap_works, landlock_works

    if not bwrap_works():
        pytest.skip("needs bwrap to start with")
    env = minidebug.make(calc, sandbox="bwrap", cache_dir=cache_dir)
    bin_dir = tmp_path / "bin"  # a PATH with what minidebug needs from the host, but no bwrap
    bin_dir.mkdir()
    for tool in ("git", "cp"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(bin_dir))
    bwrap_works.cache_clear()
    try:
        for _ in range(2):
            with pytest.raises(WorkspaceError, match="bwrap"):
                env.reset()
        with pytest.raises(WorkspaceError, match="bwrap"):
            minidebug.make(calc, sandbox="bwrap", cache_dir=cache_dir)
        if landlock_works():  # "auto" falls back to Landlock, and never to less without saying so
            with minidebug.make(calc, cache_dir=cache_dir) as fallback:
                fallback.reset()
                assert fallback.confinement.sandbox == "landlock"
        else:
            with pytest.warns(RuntimeWarning, match="no sandbox"):
                with minidebug.make(calc, cache_dir=cache_dir) as unsandboxed:
                    unsandboxed.reset()
    finally:
        env.close()
        bwrap_works.cache_clear()

HOSTILE = {
    "conftest": "cat > conftest.py <<'X'\n" + textwrap.dedent(FORGING_CONFTEST) + "X",
    "tests_conftest": "mkdir -p tests && cat > tests/conftest.py <<'X'\n" + textwrap.dedent(FORGING_CONFTEST) + "X",
    "ini": "cat > forge.py <<'X'\n" + textwrap.dedent(FORGING_CONFTEST) + "X\nprintf '[pytest]\\naddopts = -p forge\\n' > pytest.ini",
    "exit_at_import": "for f in $(find . -name '*.py' ! -name 'test_*' ! -path './tests/*'); do "
                      "sed -i '1i import os; os._exit(0)' \"$f\"; done",
    "skip_module": "for f in $(find . -name '*.py' ! -name 'test_*' ! -path './tests/*'); do "
                   "sed -i '1i import pytest; pytest.skip(\"no\", allow_module_level=True)' \"$f\"; done",
    "delete_tests": "rm -rf tests test_*.py",
    "weaken_asserts": "find . -name 'test_*.py' -exec sed -i 's/assert /assert True or /' {} +",
    "shadow_pytest": "printf 'import sys\\nprint(\"1 passed\")\\nsys.exit(0)\\n' > pytest.py && cp pytest.py sitecustomize.py",
}


def _bundled_without_requirements():
    from minidebug.tasks.task import bundled_task_names, load_task

    return [name for name in bundled_task_names() if not load_task(name).spec.requirements]


@needs_bwrap
@pytest.mark.parametrize("examples", [4, pytest.param(40, marks=pytest.mark.slow)])
def test_random_hostile_sequences_never_reach_full_reward(cache_dir, examples):
    """Property: on any bundled task, sequences of these hostile actions (none of which fixes the bug)
    never earn reward 1.0, and a clean episode afterwards scores what the base scores. (`-m slow` tries
    more sequences.)"""
    from hypothesis import HealthCheck, given, settings, strategies as st

    import minidebug

    base_rewards: dict[str, float] = {}

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(name=st.sampled_from(_bundled_without_requirements()),
           moves=st.lists(st.sampled_from(sorted(HOSTILE)), min_size=1, max_size=4))
    def run(name, moves):
        with minidebug.make(name, cache_dir=cache_dir, bash=True, terminate_on_success=False) as env:
            env.reset()
            if name not in base_rewards:
                base_rewards[name] = env.step({"name": "eval"})[1]
            for move in moves:
                env.step({"name": "bash", "arguments": {"command": HOSTILE[move]}})
                reward = env.step({"name": "eval"})[1]
                assert reward < 1.0, (name, moves)
            env.reset()
            assert env.step({"name": "eval"})[1] == base_rewards[name]

    run()


@pytest.mark.parametrize("fact", ["counted-tests.json", "warm-modules.json"])
def test_a_program_that_rewrites_a_tasks_measured_facts_changes_no_later_score(make_env, calc, fact):
    """Without a sandbox a program can write the cache: a counted-test list cut to a test that passes on the
    base (or a module list of its choosing) is not the file the host wrote, and is measured again."""
    env = make_env(calc, bash=True, sandbox=None, terminate_on_success=False)
    env.reset()
    evaluate(env)  # the task's first eval on a machine measures both
    path = env.workspace.prepared.entry / fact
    forged = {"counted": ["test_calc.py::test_mul"], "gold_failures": []} if fact.startswith("counted") else ["this"]
    bash(env, f"printf '%s' '{json.dumps(forged)}' > {path}")
    later = make_env(calc, sandbox=None, terminate_on_success=False)
    later.reset()
    reward, observation, _ = evaluate(later)
    assert reward == UNFIXED, observation
    assert "this" not in json.loads(path.read_text())


def test_a_rewritten_pristine_tree_is_detected_and_written_again(make_env, calc):
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    evaluate(env)  # the task's first eval on a machine writes the pristine tree
    pristine = env.workspace.prepared.eval_base
    bash(env, f"sed -i 's/== 5/== -1/' {pristine}/test_calc.py && echo 'def add(a, b):\n    return a + b' "
              f"> {pristine}/calc_forged.py")
    reward, observation, info = evaluate(env)
    assert reward == UNFIXED and info.get("tampered") is True, observation
    assert "pristine files had been changed" in observation
    assert "== 5" in (pristine / "test_calc.py").read_text() and not (pristine / "calc_forged.py").exists()


def test_a_pristine_tree_planted_before_the_first_eval_is_replaced(calc, tmp_path):
    import minidebug

    with minidebug.make(calc, cache_dir=tmp_path / "cache", bash=True, sandbox=None) as env:
        env.reset()
        pristine = env.workspace.prepared.eval_base
        assert not pristine.exists()  # written by the task's first eval on this machine
        bash(env, f"mkdir -p {pristine} && printf 'def test_all():\\n    pass\\n' > {pristine}/test_calc.py "
                  f"&& cp {pristine}/test_calc.py {pristine}/test_forged.py")
        assert (pristine / "test_forged.py").exists()
        reward, observation, _ = evaluate(env)
        assert reward == UNFIXED, observation
        assert not (pristine / "test_forged.py").exists() and "== 5" in (pristine / "test_calc.py").read_text()


def test_a_task_can_hand_a_harness_file_back_to_the_agent(make_env, task_dir):
    """agent_owned: a task whose bug is in its own conftest.py lets the agent fix it there."""
    files = dict(CALC, **{"conftest.py": "import pytest\n\n@pytest.fixture\ndef base():\n    return 1\n"})
    toml = CALC_TOML + 'agent_owned = ["conftest.py"]\n'
    env = make_env(task_dir(files, toml, CALC_PATCH, name="owned"), bash=True)
    env.reset()
    edited = env.step({"name": "edit", "arguments": {"path": "conftest.py", "old": "return 1", "new": "return 2"}})[0]
    assert not edited.startswith("error:"), edited
    write(env, "conftest.py", "import calc\n\ncalc.add = lambda a, b: a + b\n")  # handed back means used
    reward, observation, _ = evaluate(env)
    assert reward == 1.0 and "task's own version" not in observation


def test_a_read_only_file_turned_into_a_link_out_is_restored_without_touching_the_target(make_env, calc, tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("keep me")
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    bash(env, f"rm test_calc.py && ln -s {canary} test_calc.py")
    reward, observation, _ = evaluate(env)
    assert reward == UNFIXED, observation
    env.reset()
    assert canary.read_text() == "keep me" and not (env.workspace.root / "test_calc.py").is_symlink()


def test_a_hidden_test_that_does_not_count_is_not_named_either(make_env, task_dir):
    toml = SECRET_TOML + 'tests = ["test_calc.py::test_add", "test_calc.py::test_mul"]\n'
    task = task_dir(dict(CALC, **{"test_hidden.py": HIDDEN_TEST}), toml, CALC_PATCH, name="uncounted")
    env = make_env(task)
    env.reset()
    reward, observation, info = evaluate(env)
    assert reward == UNFIXED and "test_hidden" not in observation, observation
    assert "not counted" not in observation, observation  # the scored run's outcomes tell no more than the score


FORGED_DRIVER = """\
import os, sys
fd = int(os.environ["MINIDEBUG_EVAL_FD"])
print("forged driver ran")
"""


def test_a_rewritten_cached_driver_is_detected_and_written_again(make_env, calc):
    """Without a sandbox a program can write the cached driver scripts (pdb's is on its PYTHONPATH): the one
    it rewrote is written again before eval runs it, and the eval says so."""
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    where = env.workspace.drivers
    write(env, f"{where}/minidebug_eval.py", FORGED_DRIVER)
    reward, observation, info = evaluate(env)
    assert reward == UNFIXED and info.get("tampered") is True, observation
    assert "driver scripts had been changed" in observation and "forged driver ran" not in observation
    assert (env.workspace.drivers / "minidebug_eval.py").read_text() == (DRIVER_SOURCES / "minidebug_eval.py").read_text()
    bash(env, f"touch {where}/sitecustomize.py")
    _, info = env.reset()
    assert info.get("tampered") is True and not (env.workspace.drivers / "sitecustomize.py").exists()


def test_a_changed_bare_repository_is_never_scored_and_reset_rebuilds_it(make_env, calc):
    """Without a sandbox a program can reach the task's cached bare repository: an eval after it changed is
    not scored, and reset() rebuilds the entry, after which eval scores as before."""
    env = make_env(calc, bash=True, sandbox=None)
    env.reset()
    assert evaluate(env)[0] == UNFIXED  # the pristine tree is written, and its guard armed, before the attack
    bare = env.workspace.prepared.bare_repo
    bash(env, f"git --git-dir={bare} update-ref refs/minidebug/forged HEAD 2>&1; mkdir -p {bare}/hooks && "
              f"touch {bare}/hooks/post-checkout && echo done")
    reward, observation, info = evaluate(env)
    assert reward == 0 and info.get("tampered") is True, observation
    assert "not scored: the task's cached git repository was changed" in observation
    _, info = env.reset()
    assert info.get("tampered") is True
    assert not (env.workspace.prepared.bare_repo / "hooks" / "post-checkout").exists()
    reward, observation, info = evaluate(env)
    assert reward == UNFIXED and "tampered" not in info, observation


def test_episodes_leave_the_bare_repository_as_it_was_built(make_env, calc):
    """The guard sees no change from what episodes themselves do: worktrees come and go, diffs, evals."""
    for _ in range(2):
        with make_env(calc) as env:
            env.reset()
            env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
            env.diff()
            reward, observation, info = evaluate(env)
            assert reward == 1.0 and "tampered" not in info, observation
            _, info = env.reset()
            assert "tampered" not in info
