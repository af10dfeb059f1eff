"""Proving tasks runnable: `check` (the tests fail on the base, the gold patch passes, reset brings the bug
back, a breakpoint is hit near the change, nothing hidden is visible) and `validate` (SWE-bench-style
FAIL_TO_PASS and PASS_TO_PASS), both built on one gold-patch routine that applies a task's solution through
`edit`. It builds on `core` and the oracle agent.
"""
