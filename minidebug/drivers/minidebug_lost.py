"""A test's own result lost inside its runner's machinery, with nothing patched: the runner reports a pass
for a test whose code never finished.

- **An asyncio task finished from outside.** A coroutine's task takes its result from the coroutine alone:
  `Task.set_result` refuses. Yet code can mark the task that runs it finished through the base class
  (`Future.set_result(current_task(), None)`); the loop that waits for that task then returns as if the
  coroutine had returned. What the coroutine raises next (a test's failed assertion) only makes the task's next
  step fail with `InvalidStateError`, which the loop hands to its exception handler and goes on; or the
  coroutine waits for ever and is never heard of again. Seen in `call_exception_handler` (a task step failing
  that way, whatever handler the loop was given) and in `run_until_complete` (which `asyncio.run`,
  `asyncio.Runner`, unittest's `IsolatedAsyncioTestCase`, pytest's asyncio plugins and a test's own loop
  use: it returning for a task that is done while its coroutine has not ended).
- **unittest's stop signal raised by code under test.** unittest runs each part of a test (setUp, the test
  method, each subtest, tearDown) in a handler that lets `_ShouldStop` end the part silently, leaving it a
  success: unittest raises it itself only after a subtest failed under failfast, or once an expected failure
  was recorded. Raised anywhere else (from project code, under either pytest or Django's runner), it is an
  error of the test and a finding.

`install()` wraps these at the classes, before any code of the project runs; the wrappers keep where they
report (`sink`, filled in by the run once it can report) as default values, which the watch protects.
"""

LOST = "an asyncio task was marked finished from outside while its coroutine ran (what the coroutine raised " \
       "or returned next was lost)"
STOPPED = "unittest's _ShouldStop was raised by the code under test, which would end the test as a success"


def install():
    """Install the wrappers; returns (the wrappers, their sink: a list whose first item the run sets to its
    `flag(finding)`)."""
    sink = [None]
    return _watch_asyncio(sink) + _watch_unittest(sink), sink


def _watch_asyncio(sink):
    import asyncio
    from asyncio import base_events

    loop_class = base_events.BaseEventLoop

    def call_exception_handler(self, context, _original=loop_class.call_exception_handler, _sink=sink,
                               _lost=asyncio.InvalidStateError, _isinstance=isinstance, _type=type):
        exception = context.get("exception") if _type(context) is dict else None
        step = getattr(context.get("handle") if _type(context) is dict else None, "_callback", None)
        if _isinstance(exception, _lost) and _sink[0] is not None and (
                _type(step).__name__ == "TaskStepMethWrapper" or getattr(step, "__name__", "") == "__step"):
            _sink[0](LOST)
        return _original(self, context)

    def run_until_complete(self, future, _original=loop_class.run_until_complete, _sink=sink,
                           _task=asyncio.Task, _ensure=asyncio.ensure_future, _isfuture=asyncio.isfuture,
                           _iscoroutine=asyncio.iscoroutine, _isinstance=isinstance):
        if _iscoroutine(future) and not _isfuture(future):  # its task made here, so that it can be checked
            future = _ensure(future, loop=self)
            future._log_destroy_pending = False  # as the loop does for a task it makes itself
        try:
            return _original(self, future)
        finally:
            if _isinstance(future, _task) and future.done() and _sink[0] is not None \
                    and getattr(future.get_coro(), "cr_frame", None) is not None:
                _sink[0](LOST)

    loop_class.call_exception_handler = call_exception_handler
    loop_class.run_until_complete = run_until_complete
    return (call_exception_handler, run_until_complete)


def _watch_unittest(sink):
    import contextlib
    from unittest import case

    outcome_class, names = case._Outcome, vars(case)

    @contextlib.contextmanager
    def testPartExecutor(self, test_case, *part, _original=outcome_class.testPartExecutor,  # noqa: N802
                         _stop=case._ShouldStop, _names=names, _sink=sink, _isinstance=isinstance,
                         _type=type, **named):
        # part: (subTest,) from 3.11, (isTest,) before, as unittest passes it (by position or by name)
        with _original(self, test_case, *part, **named):
            try:
                yield
            except Exception as exc:
                current = _names.get("_ShouldStop")
                stops = _isinstance(exc, _stop) or (_isinstance(current, _type) and _isinstance(exc, current))
                if stops and self.success and self.expectedFailure is None:  # not unittest's own
                    if _sink[0] is not None:
                        _sink[0](STOPPED)
                    raise RuntimeError(STOPPED) from None
                raise

    outcome_class.testPartExecutor = testPartExecutor
    return (testPartExecutor.__wrapped__,)
