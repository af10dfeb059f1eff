"""`minidebug mcp TASK`: one episode's tools, plus `reset`, served over MCP stdio (extra `[mcp]`).

Built on the low-level `mcp.server.Server` of the official SDK (2.x), because the tools and their
schemas come from the env at run time rather than from decorated functions.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import UsageError
from .strategy_check import adapter_strategy

RESET_TOOL = "reset"


def build_server(env: Any):
    """An MCP server whose tools are the env's tools plus `reset`; calls run one at a time. When the env's
    tool set changes (a strategy unlocks the debugger, or a reset takes it back) the client is sent
    `notifications/tools/list_changed`."""
    try:
        import mcp_types as types
        from mcp.server import Server
    except ImportError:
        raise UsageError("the MCP server needs the mcp SDK: pip install 'minidebug[mcp]'") from None

    lock = asyncio.Lock()

    async def list_tools(ctx, params) -> types.ListToolsResult:
        tools = [types.Tool(name=s["name"], description=s["description"], input_schema=s["input_schema"])
                 for s in env.tool_schemas("anthropic")]
        tools.append(types.Tool(name=RESET_TOOL, description="Restart the episode: files back to the start, "
                                "pdb session and budgets reset. Returns the problem statement.",
                                input_schema={"type": "object", "properties": {}}))
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        async with lock:
            before = list(env.tools)
            if params.name == RESET_TOOL:
                observation, info = await asyncio.to_thread(env.reset)
                result = _result(types, observation, {"info": info}, error=False)
            else:
                action = {"name": params.name, "arguments": dict(params.arguments or {})}
                observation, reward, terminated, truncated, info = await asyncio.to_thread(env.step, action)
                extra = {"reward": reward, "terminated": terminated, "truncated": truncated, "info": info}
                result = _result(types, observation, extra, error="error" in info)
            if list(env.tools) != before:
                await ctx.session.send_tool_list_changed()
        return result

    return Server("minidebug", on_list_tools=list_tools, on_call_tool=call_tool)


def _result(types, text: str, structured: dict[str, Any], error: bool):
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured, is_error=error)


async def serve_stdio(env: Any) -> None:
    """Serve env over stdin/stdout until the client disconnects."""
    from mcp.server.stdio import stdio_server

    server = build_server(env)
    async with stdio_server() as (read_stream, write_stream):
        from mcp.server.lowlevel.server import NotificationOptions

        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        await server.run(read_stream, write_stream, options)


def main(task: str, bash: bool = False, strategy: str = "debug") -> None:
    """Make and reset an env on task, serve it over stdio, close it when the client goes.

    Raises:
        UsageError: an unknown strategy.
    """
    from ..core.make import make

    adapter_strategy(strategy, "the MCP server")
    with make(task, bash=bash, strategy=strategy) as env:
        env.reset()
        asyncio.run(serve_stdio(env))
