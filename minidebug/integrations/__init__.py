"""Adapters for other frameworks: Gymnasium, MCP, the pytest plugin, inspect_ai, mini-swe-agent, SkyRL-gym
and verifiers. Each is imported only when used and may need its extra; each reaches the episode through
`core` (`make`, `DebugEnv.exec`) and never reaches into its worktree or confinement.
"""
