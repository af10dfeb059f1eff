"""trace and inspect against real programs, with sys.settrace (3.11) and sys.monitoring (3.12)."""

import pytest

PROGRAM = {
    "shop.py": """\
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)


        def evens(limit):
            for i in range(limit):
                if i % 2 == 0:
                    yield i


        class Account:
            def __init__(self):
                self.balance = 0

            def deposit(self, amount):
                if amount <= 0:
                    raise ValueError("amount must be positive")
                self.balance += amount
                return self.balance


        def unused():
            return 0


        def total(limit):
            acc = 0
            for i in range(limit):
                acc += i
            return acc
        """,
    "main.py": """\
        from shop import Account, evens, fact, total

        print(fact(4), list(evens(5)), total(3))
        account = Account()
        account.deposit(5)
        try:
            account.deposit(-1)
        except ValueError:
            pass
        """,
    "test_shop.py": "from shop import fact\n\ndef test_fact():\n    assert fact(3) == 6\n",
    "secret.py": "def hidden():\n    return 1\n",
}


@pytest.fixture(params=[None, "3.12"], ids=["settrace", "monitoring"])
def env(request, make_env, task_dir):
    toml = 'description = "x"\neval = "python -m pytest -q"\nentrypoint = "python main.py"\nhidden = ["secret.py"]\n'
    if request.param:
        toml += f'python = "{request.param}"\n'
    env = make_env(task_dir(PROGRAM, toml))
    env.reset()
    return env


def call(env, name, **arguments):
    return env.step({"name": name, "arguments": arguments})[0]


def test_trace_recursion(env):
    text = call(env, "trace", target="fact")
    assert text.splitlines() == [
        "trace of fact while running `python main.py`: 4 calls",
        "#1 fact(n=4)  from main.py:3 in <module>", "   returned: 24", "   locals at exit: n=4",
        "#2 fact(n=3)  from shop.py:2 in fact", "   returned: 6", "   locals at exit: n=3",
        "#3 fact(n=2)  from shop.py:2 in fact", "   returned: 2", "   locals at exit: n=2",
        "#4 fact(n=1)  from shop.py:2 in fact", "   returned: 1", "   locals at exit: n=1",
    ]


def test_trace_generator_and_max_calls(env):
    text = call(env, "trace", target="evens")
    assert "   yielded: 0, 2, 4" in text and "   returned: None" in text
    text = call(env, "trace", target="fact", max_calls=1)
    assert "[3 more calls not shown; raise max_calls to see them]" in text


def test_trace_method_that_raises(env):
    lines = call(env, "trace", target="Account.deposit").splitlines()
    assert lines[0].endswith(": 2 calls")
    assert lines[1] == "#1 Account.deposit(self=Account(balance=0), amount=5)  from main.py:5 in <module>"
    assert lines[2] == "   returned: 5"
    assert lines[5] == "   raised: ValueError('amount must be positive')"


def test_trace_by_file_range_and_never_called(env):
    # the class body, __init__ and two deposits: everything defined in those lines
    assert call(env, "trace", target="shop.py:11-19").splitlines()[0].endswith(": 4 calls")
    assert call(env, "trace", target="refund") == "refund was never called while running `python main.py`."


def test_inspect_first_hit_inside_a_loop(env):
    text = call(env, "inspect", at="shop.py:29", expr=["acc + 100", "undefined_name"])
    assert text.splitlines() == [
        "reached shop.py:29 in total",
        "stack (innermost first):", "  shop.py:29 in total", "  main.py:3 in <module>",
        *([line for line in text.splitlines() if "frames outside" in line]),
        "locals: limit=3, acc=0, i=0",
        "acc + 100 = 100",
        "undefined_name = error: NameError: name 'undefined_name' is not defined",
    ]


def test_inspect_exception_and_never_reached(env):
    text = call(env, "inspect", at="exception", expr=["amount"])
    assert text.startswith("reached shop.py:17 in deposit — exception ValueError('amount must be positive')")
    assert "amount = -1" in text
    assert call(env, "inspect", at="shop.py:23") == "shop.py:23 was never reached while running `python main.py`."


def test_same_output_twice_and_hidden_targets_refused(env):
    first = call(env, "trace", target="Account.deposit")
    assert call(env, "trace", target="Account.deposit") == first
    assert "no such file" in call(env, "inspect", at="secret.py:2")
    assert "no such file" in call(env, "trace", target="secret.py:1-2")
    assert call(env, "inspect", at="nowhere").startswith("error: inspect: at must be")


def test_probes_leave_pdb_alone(env):
    call(env, "pdb", command="b shop.py:29")
    call(env, "inspect", at="shop.py:2")
    assert call(env, "pdb", command="c").endswith("[at shop.py:29] acc += i")
