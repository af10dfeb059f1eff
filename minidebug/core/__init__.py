"""The episode itself: `DebugEnv` (reset, step, close, and `exec` for a confined shell command), `make()`,
tool calls as agents send them (native and text), token budgets, and the typed trajectory records a run
writes. It composes the rooms below it along the data path: a task (`tasks`), its cached repo and venv
(`store`), the worktree (`workspace`), the scorer (`scoring`) and the tools (`tools`), every program started
through `sandbox`. It may import any of those and nothing above it (agents, run, report, integrations).
"""
