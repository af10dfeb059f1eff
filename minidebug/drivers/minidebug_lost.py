"""asyncio tasks finished from outside while their coroutine runs: a test's own result lost.

A coroutine's task takes its result from the coroutine alone: `Task.set_result` refuses. Yet code can mark
the task that runs it finished through the base class (`Future.set_result(current_task(), None)`); the loop
that waits for that task then returns as if the coroutine had returned. What the coroutine raises next (a
test's failed assertion) only makes the task's next step fail with `InvalidStateError`, which the loop hands
to its exception handler and goes on; or the coroutine waits for ever and is never heard of again. No correct
program does either, so both are findings:

- a task step that fails with `InvalidStateError` (seen in `call_exception_handler`, whatever handler the
  loop was given);
- `run_until_complete` (which `asyncio.run`, `asyncio.Runner`, unittest's `IsolatedAsyncioTestCase` and
  pytest's asyncio plugins use) returning for a task that is done while its coroutine has not ended.

`install()` wraps both at the event loop's class, before any code of the project runs; the wrappers keep
where they report (`sink`, filled in by the run once it can report) as default values, which the watch
protects.
"""

LOST = "an asyncio task was marked finished from outside while its coroutine ran (what the coroutine raised " \
       "or returned next was lost)"


def install():
    """Wrap `BaseEventLoop.call_exception_handler` and `run_until_complete`; returns (the wrappers, their
    sink: a list whose first item the run sets to its `flag(finding)`)."""
    import asyncio
    from asyncio import base_events

    loop_class = base_events.BaseEventLoop
    sink = [None]

    def call_exception_handler(self, context, _original=loop_class.call_exception_handler, _sink=sink,
                               _lost=asyncio.InvalidStateError, _isinstance=isinstance, _type=type):
        exception = context.get("exception") if _type(context) is dict else None
        step = getattr(context.get("handle") if _type(context) is dict else None, "_callback", None)
        if _isinstance(exception, _lost) and _sink[0] is not None and (
                _type(step).__name__ == "TaskStepMethWrapper" or getattr(step, "__name__", "") == "__step"):
            _sink[0](LOST)
        return _original(self, context)

    def run_until_complete(self, future, _original=loop_class.run_until_complete, _sink=sink,
                           _task=asyncio.Task, _isinstance=isinstance):
        try:
            return _original(self, future)
        finally:
            if _isinstance(future, _task) and future.done() and _sink[0] is not None \
                    and getattr(future.get_coro(), "cr_frame", None) is not None:
                _sink[0](LOST)

    loop_class.call_exception_handler = call_exception_handler
    loop_class.run_until_complete = run_until_complete
    return (call_exception_handler, run_until_complete), sink
