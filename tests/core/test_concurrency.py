"""Many envs of one task at once: threads and separate processes keep independent states."""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import minidebug
from tests.conftest import processes_left


def _episode(task, cache_dir, index):
    with minidebug.make(task, cache_dir=cache_dir) as env:
        env.reset()
        marker = f"# env {index}"
        env.step({"name": "edit", "arguments": {"path": "calc.py", "start": 1, "end": 0, "new_code": marker}})
        if index % 2 == 0:
            env.step({"name": "edit", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
        _, reward, *_ = env.step({"name": "eval"})
        text = (env.workspace.root / "calc.py").read_text()
        return reward, text.splitlines()[0], text.count("# env")


def test_threads_keep_independent_worktrees(calc_task, cache_dir):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: _episode(calc_task, cache_dir, i), range(4)))
    assert results == [(1.0, "# env 0", 1), (0.5, "# env 1", 1), (1.0, "# env 2", 1), (0.5, "# env 3", 1)]
    assert not processes_left()


WORKER = """
import json, sys
sys.path.insert(0, {root!r})
from tests.core.test_concurrency import _episode
print(json.dumps(_episode({task!r}, {cache!r}, int(sys.argv[1]))))
"""


def test_processes_share_the_cache_safely(calc_task, tmp_path):
    # A cold cache: four processes race to build the same bare repo and venv under the file locks.
    cache = str(tmp_path / "cold-cache")
    code = WORKER.format(root=str(__import__("pathlib").Path(__file__).parents[2]), task=str(calc_task), cache=cache)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i)], stdout=subprocess.PIPE, text=True)
             for i in range(4)]
    results = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [r[0] for r in results] == [1.0, 0.5, 1.0, 0.5]
    assert [r[1] for r in results] == [f"# env {i}" for i in range(4)]
