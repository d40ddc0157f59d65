"""How many tools, and how many schema tokens, one chat turn offers the model.

graphwright's own MCP servers run over stdio as the chat runs them (offline, a temporary home),
and one turn per mode goes through `ChatService` with the scripted fake model, which records the
tool schemas it is bound with: exactly what a real model is sent each turn. Tokens are counted
with OpenAI's o200k_base encoding (the `bpe-openai` package, which ships it) on the JSON of the
tools as the model receives them.

- baseline: every tool graphwright's MCP servers list, as an MCP client such as Claude Desktop
  sees them (`McpManager.tools()` over every server).
- graphwright: the tools a turn offers, in the normal mode and in Graph Mode.

Run: .venv/bin/python benchmarks/chat_tools_bench.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
from bpe_openai import get_encoding

from graphwright.chat.config import load_mcp_servers
from graphwright.chat.mcp_manager import McpManager, ToolSpec
from graphwright.chat.models import ChatRequest, Mode
from graphwright.db import Database
from graphwright.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.chat.fakes import ScriptedChatModel, chat_service  # noqa: E402

ENCODING = get_encoding("o200k_base")


def tokens(tools: list[dict[str, Any]]) -> int:
    return len(ENCODING.encode(orjson.dumps(tools).decode()))


def as_offered(spec: ToolSpec) -> dict[str, Any]:
    """A tool as an MCP client lists it, in the function-calling shape a model is sent."""
    function = {"name": spec.qualified, "description": spec.description,
                "parameters": spec.input_schema}  # fmt: skip
    return {"type": "function", "function": function}


async def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(_env_file=None, home=Path(home), offline=True)  # type: ignore[call-arg]
        manager = McpManager(load_mcp_servers(settings, environ={}))
        database = Database(settings.resolved_database_url)
        service = chat_service(database, manager, api_base_url="http://127.0.0.1:1")
        try:
            every, failures = await manager.tools()
            assert not failures, failures
            rows = [("baseline: every tool of graphwright's MCP servers", every_tools(every))]
            for mode in (Mode.NORMAL, Mode.GRAPH):
                service.model = ScriptedChatModel.with_script(["ok"])
                turn = await service.start_turn(
                    ChatRequest(message="hello", mode=mode), actor="bench"
                )
                await turn.response()
                schemas = service.model.schemas
                offered = [{"type": "function", "function": schema} for schema in schemas.values()]
                rows.append((f"graphwright: one turn in the {mode.value} mode", offered))
        finally:
            await service.aclose()
            database.dispose()
    baseline = tokens(rows[0][1])
    print(f"{'what':<54} {'tools':>5} {'tokens':>7} {'tokens/baseline':>16}")
    for name, tools in rows:
        count = tokens(tools)
        print(f"{name:<54} {len(tools):>5} {count:>7} {count / baseline:>15.2f}x")


def every_tools(specs: list[ToolSpec]) -> list[dict[str, Any]]:
    return [as_offered(spec) for spec in specs]


if __name__ == "__main__":
    asyncio.run(main())
