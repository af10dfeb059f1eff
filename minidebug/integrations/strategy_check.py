"""The strategies an adapter can run, checked when the adapter is built rather than at its first episode."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from ..tools.strategies import Strategy, parse_strategy

EVERY_STRATEGY = ("debug", "rewrite", "debug-after-N")
FIXED_TOOLS = ("debug", "rewrite")  # the strategies whose tools stay the same for the whole episode


def adapter_strategy(name: Any, adapter: str, runs: tuple[str, ...] = EVERY_STRATEGY, why: str = "") -> Strategy:
    """The strategy called `name`, if `adapter` runs it (`runs` names "debug-after-N" for every N >= 1).

    Raises:
        UsageError: in one line naming the strategies the adapter runs (and `why` it runs no other), for an
            unknown strategy or one the adapter cannot run.
    """
    try:
        strategy = parse_strategy(str(name))
    except ValueError:
        strategy = None
    family = None if strategy is None else "debug-after-N" if strategy.unlock_after_edits else strategy.name
    if strategy is None or family not in runs:
        shown = repr(str(name)[:60])
        problem = f"unknown strategy {shown}" if strategy is None else \
            f"cannot run strategy {shown}" + (f" ({why})" if why else "")
        after = " with N >= 1" if "debug-after-N" in runs else ""
        raise UsageError(f"{adapter}: {problem}; it runs {', '.join(runs)}{after}")
    return strategy
