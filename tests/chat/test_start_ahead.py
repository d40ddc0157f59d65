"""ChatService.start_servers: with a model, every MCP server starts in the background; one that
cannot start is logged once, in plain words, and started again on its first use; without a
model nothing starts ahead; closing the service during the start stops what was starting."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from graphwright.chat.config import StdioServer
from graphwright.chat.mcp_manager import McpManager, ServerConnection
from graphwright.db import Database
from tests.chat.fakes import ScriptedChatModel, chat_service

FLAKY = Path(__file__).parents[1] / "fixtures" / "chat" / "flaky_server.py"


def manager(tmp_path: Path) -> McpManager:
    return McpManager(
        {
            "flaky": StdioServer(command=sys.executable, args=[str(FLAKY)]),
            "broken": StdioServer(command=str(tmp_path / "no-such-program")),
        }
    )


def connection(manager: McpManager, name: str) -> ServerConnection:
    found = manager.connections[name]
    assert isinstance(found, ServerConnection)
    return found


async def test_with_a_model_servers_start_ahead_and_a_failure_is_logged_once(
    database: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    servers = manager(tmp_path)
    service = chat_service(database, servers, api_base_url="http://127.0.0.1:9")
    service.model = ScriptedChatModel.with_script([])
    try:
        with caplog.at_level(logging.WARNING, logger="graphwright.chat"):
            service.start_servers()
            service.start_servers()  # once is enough: a second call starts nothing more
            assert service._starting_servers is not None
            await service._starting_servers
        assert connection(servers, "flaky").running
        assert connection(servers, "flaky").starts == 1
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "MCP server 'broken' could not start" in warnings[0]
        assert "again" in warnings[0] and "Traceback" not in warnings[0]
        # Started again on its first use, as before.
        outcome = await servers.call_tool("broken", "anything", {})
        assert "could not start" in (outcome.error or "")
        assert connection(servers, "broken").starts == 2
    finally:
        await service.aclose()


async def test_without_a_model_nothing_starts_ahead(database: Database, tmp_path: Path) -> None:
    servers = manager(tmp_path)
    service = chat_service(database, servers, api_base_url="http://127.0.0.1:9")
    service.start_servers()
    await asyncio.sleep(0.5)
    assert service._starting_servers is None
    assert all(connection(servers, name).starts == 0 for name in ("flaky", "broken"))
    await service.aclose()


async def test_closing_while_servers_start_stops_them_at_once(
    database: Database, tmp_path: Path
) -> None:
    servers = manager(tmp_path)
    service = chat_service(database, servers, api_base_url="http://127.0.0.1:9")
    service.model = ScriptedChatModel.with_script([])
    service.start_servers()
    await asyncio.sleep(0.05)  # the flaky server's process is starting, not yet answering
    started = asyncio.get_running_loop().time()
    await service.aclose()
    # Not the 10 s a running server is given to stop: the start is cancelled, and the SDK
    # stops the process (closing stdin, then terminating it after 2 s).
    assert asyncio.get_running_loop().time() - started < 5
    assert not connection(servers, "flaky").running
