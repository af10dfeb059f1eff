"""Adapters for other frameworks: Gymnasium, MCP, the pytest plugin, inspect_ai, mini-swe-agent, SkyRL-gym
and verifiers. Each is imported only when used and may need its extra; each builds its episode with `core`'s
`make()` and runs shell commands only through `DebugEnv.exec`, confined like every program of the episode.
"""
