"""The MCP server, driven by the official SDK's client over stdio, as an MCP host would."""

import asyncio
import os
import sys

import pytest

mcp = pytest.importorskip("mcp", reason="the [mcp] extra is part of the test extra; install it")
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


def test_a_whole_episode_over_mcp(calc_task, cache_dir):
    params = StdioServerParameters(command=sys.executable, args=["-m", "minidebug.run.cli", "mcp", str(calc_task)],
                                   env={**os.environ, "MINIDEBUG_CACHE": str(cache_dir)})

    async def episode():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name: t for t in (await session.list_tools()).tools}
                assert {"pdb", "view", "edit", "eval", "submit", "reset"} <= set(tools)
                assert tools["edit"].input_schema["properties"]["path"]["type"] == "string"

                async def call(name, **arguments):
                    result = await session.call_tool(name, arguments)
                    return result.content[0].text, result

                text, _ = await call("pdb", command="b calc.py:2")
                assert "Breakpoint 1 at calc.py:2" in text
                text, _ = await call("pdb", command="c")
                assert text.endswith("[at calc.py:2] return a - b")
                text, _ = await call("pdb", command="p a, b")
                assert text.startswith("(2, 3)")
                text, result = await call("view", path="../secret")
                assert result.is_error and "not allowed" in text
                text, _ = await call("edit", path="calc.py", old="a - b", new="a + b")
                assert "+    return a + b" in text
                text, result = await call("eval")
                assert text == "eval: 2 passed (score 2/2)"
                assert result.structured_content["reward"] == 1.0 and result.structured_content["terminated"]
                text, _ = await call("reset")
                assert text.startswith("add() gives wrong sums")
                text, _ = await call("view", path="calc.py", start=2, end=2)
                assert text.endswith("2      return a - b")  # the bug is back, the breakpoint gone

    asyncio.run(asyncio.wait_for(episode(), 120))


def test_an_unlock_tells_the_client_the_tool_list_changed(calc_task, cache_dir):
    params = StdioServerParameters(command=sys.executable, args=["-m", "minidebug.run.cli", "mcp", str(calc_task),
                                                                 "--strategy", "debug-after-1"],
                                   env={**os.environ, "MINIDEBUG_CACHE": str(cache_dir)})
    notices = []

    async def handler(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            notices.append(message)

    async def names(session):
        return {t.name for t in (await session.list_tools()).tools}

    async def episode():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=handler) as session:
                await session.initialize()
                assert "pdb" not in await names(session)
                await session.call_tool("view", {"path": "calc.py"})
                assert not notices
                result = await session.call_tool("edit", {"path": "calc.py", "old": "a * b", "new": "b * a"})
                assert "[new tools available from now on]" in result.content[0].text
                for _ in range(50):  # the notification travels beside the call's answer
                    if notices:
                        break
                    await asyncio.sleep(0.05)
                assert len(notices) == 1 and {"pdb", "trace", "inspect"} <= await names(session)
                await session.call_tool("reset", {})
                for _ in range(50):
                    if len(notices) == 2:
                        break
                    await asyncio.sleep(0.05)
                assert len(notices) == 2 and "pdb" not in await names(session)

    asyncio.run(asyncio.wait_for(episode(), 120))


def test_an_unknown_strategy_is_a_usage_error_before_any_episode(calc_task, capsys):
    from minidebug.errors import UsageError
    from minidebug.integrations.mcp_server import main as serve
    from minidebug.run.cli import main

    with pytest.raises(UsageError, match="unknown strategy 'debug-after-0'; it runs debug, rewrite, "
                                         "debug-after-N with N >= 1$"):
        serve(str(calc_task), strategy="debug-after-0")
    assert main(["mcp", str(calc_task), "--strategy", "bogus"]) == 2
    assert capsys.readouterr().err == ("minidebug: the MCP server: unknown strategy 'bogus'; it runs debug, "
                                       "rewrite, debug-after-N with N >= 1\n")
