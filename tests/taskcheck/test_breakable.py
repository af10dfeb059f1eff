"""Where the pdb check stops: the executable line nearest to a gold patch's change, for every shape of patch."""

import textwrap

import pytest

from minidebug.taskcheck.breakable import changed_regions, probe_lines, scopes
from minidebug.taskcheck.check import check_task
from minidebug.tasks.patch import parse_patch
from minidebug.tasks.task import load_task

SOURCE = textwrap.dedent('''\
    """A module docstring."""
    import functools

    LIMIT = 10


    @functools.lru_cache(
        maxsize=None,
    )
    def total(a,
              b):
        """Add them."""
        # the bug is below

        result = a - b
        return result


    class Account:
        """An account."""
        rate = 2

        def interest(self, amount):
            return amount * self.rate
    ''')


def line_of(text):
    return SOURCE.splitlines().index(text) + 1


def patch(hunk_header, body):
    return parse_patch(f"--- a/m.py\n+++ b/m.py\n{hunk_header}\n{textwrap.dedent(body)}")[0]


def probe(file_patch):
    (line,) = probe_lines(scopes(SOURCE), changed_regions(file_patch))
    return line


def test_the_scopes_lines_come_from_the_line_tables():
    lines = set().union(*(scope.lines for scope in scopes(SOURCE)))
    assert line_of("    result = a - b") in lines and line_of("        return amount * self.rate") in lines
    for text in ['    """Add them."""', "    # the bug is below", "", '"""A module docstring."""', "          b):"]:
        assert line_of(text) not in lines, text
    with pytest.raises(SyntaxError):
        scopes("def broken(:\n")


@pytest.mark.parametrize("shape, header, body, expected", [
    ("an ordinary change", "@@ -15,1 +15,1 @@", "-    result = a - b\n+    result = a + b\n",
     "    result = a - b"),
    ("a comment, then the code", "@@ -13,3 +13,3 @@", "-    # the bug is below\n+    # fixed\n \n-    result = a - b\n"
     "+    result = a + b\n", "    result = a - b"),
    ("only a comment and a blank line", "@@ -13,2 +13,2 @@", "-    # the bug is below\n-\n+    # fixed\n+\n",
     "    result = a - b"),
    ("a docstring", "@@ -12,1 +12,1 @@", '-    """Add them."""\n+    """Add a and b."""\n', "    result = a - b"),
    ("whitespace only", "@@ -16,1 +16,1 @@", "-    return result\n+    return result  \n", "    return result"),
    ("inserting lines only", "@@ -15,0 +16,1 @@", "+    result = abs(result)\n", "    result = a - b"),
    ("inserting at the top of a body", "@@ -14,0 +15,1 @@", "+    a = int(a)\n", "    result = a - b"),
    ("a decorator's argument", "@@ -8,1 +8,1 @@", "-    maxsize=None,\n+    maxsize=128,\n", "    maxsize=None,"),
    ("a class body", "@@ -21,1 +21,1 @@", "-    rate = 2\n+    rate = 3\n", "    rate = 2"),
    ("a class docstring (pdb refuses docstring lines)", "@@ -20,1 +20,1 @@", '-    """An account."""\n'
     '+    """A bank account."""\n', "    rate = 2"),
    ("module level", "@@ -4,1 +4,1 @@", "-LIMIT = 10\n+LIMIT = 11\n", "LIMIT = 10"),
    ("a continued signature line", "@@ -11,1 +11,1 @@", "-          b):\n+          b=0):\n",
     "    result = a - b"),
])
def test_probe_line_for_each_shape_of_patch(shape, header, body, expected):
    assert probe(patch(header, body)) == line_of(expected), shape


def test_one_probe_per_changed_region():
    file_patch = parse_patch("--- a/m.py\n+++ b/m.py\n@@ -15,1 +15,1 @@\n-    result = a - b\n+    result = a + b\n"
                             "@@ -16,1 +16,1 @@\n-    return result\n+    return result + 0\n"
                             "@@ -24,1 +24,1 @@\n-        return amount * self.rate\n+        return amount * 2\n")[0]
    assert probe_lines(scopes(SOURCE), changed_regions(file_patch)) == [15, 16, 24]


def test_a_region_without_code_is_probed_at_the_code_nearest_to_it():
    file_patch = parse_patch("--- a/m.py\n+++ b/m.py\n@@ -13,1 +13,1 @@\n-    # the bug is below\n+    # x\n"
                             "@@ -24,1 +24,1 @@\n-        return amount * self.rate\n+        return amount * 2\n")[0]
    assert changed_regions(file_patch) == [(13, 13), (24, 24)]
    assert probe_lines(scopes(SOURCE), changed_regions(file_patch)) == [line_of("    result = a - b"), 24]


COMMENTED = {
    "calc.py": '''\
        def add(a, b):
            """Add two numbers."""
            # returns the sum
            return a - b
        ''',
    "test_calc.py": '''\
        from calc import add


        def test_add():
            assert add(2, 3) == 5
        ''',
}


@pytest.mark.parametrize("gold", [
    # the docstring and comment change first, the code after them
    """\
    --- a/calc.py
    +++ b/calc.py
    @@ -1,4 +1,4 @@
     def add(a, b):
    -    \"\"\"Add two numbers.\"\"\"
    -    # returns the sum
    -    return a - b
    +    \"\"\"Add two numbers, correctly.\"\"\"
    +    # returns the sum of both
    +    return a + b
    """,
    # a patch that only inserts a line
    """\
    --- a/calc.py
    +++ b/calc.py
    @@ -1,4 +1,5 @@
     def add(a, b):
         \"\"\"Add two numbers.\"\"\"
         # returns the sum
    +    b = -b
         return a - b
    """,
])
def test_check_holds_on_patches_whose_first_changed_line_cannot_stop(gold, task_dir, cache_dir):
    task = load_task(task_dir(COMMENTED, 'description = "add is wrong"\neval = "python -m pytest -q"\n'
                                         'readonly = ["test_*.py"]\n', gold))
    report = check_task(task, cache_dir=cache_dir, sandbox=None)
    assert report.results["pdb"] == "ok", report.results
    assert report.probe == "calc.py:4"
