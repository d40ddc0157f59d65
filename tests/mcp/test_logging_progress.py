"""Our MCP servers declare the logging capability, honour `logging/setLevel`, and report progress
of long calls (import, analysis) as MCP progress notifications."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from graphwright.db import Database
from graphwright.graphmode.backend_resolver import BackendResolver
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.service import GraphService
from graphwright.graphmode.tools import graph_server
from graphwright.settings import Settings

GRAPH = {
    "nodes": [{"id": f"N:{i}", "name": f"n{i}", "category": "gene"} for i in range(6)],
    "links": [{"source": f"N:{i}", "target": f"N:{i + 1}", "label": "to"} for i in range(5)],
}


async def test_logging_level_and_progress(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'g.db'}")
    service = GraphService(database, create_graph_events(database))
    settings = Settings(home=tmp_path, database_url=database.url, conversation="c1")
    server = graph_server(BackendResolver(settings, service))
    logs: list[Any] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    try:
        async with Client(server, mode="legacy", logging_callback=on_log) as client:
            assert client.server_capabilities.logging is not None
            await client.set_logging_level("info")
            imported = await client.call_tool(
                "importFromJSON", {"graph": GRAPH}, progress_callback=on_progress
            )
            assert not imported.is_error
            assert [p[:2] for p in progress] == [(0, 2), (2, 2)]
            assert progress[-1][2].startswith("Imported the graph")
            assert any("Importing the graph" in str(log.data) for log in logs)

            progress.clear()
            central = await client.call_tool(
                "findCentrality", {"measure": "pagerank"}, progress_callback=on_progress
            )
            assert not central.is_error
            assert [p[:2] for p in progress] == [(0, 2), (1, 2)]

            await client.set_logging_level("error")
            logs.clear()
            await client.call_tool("analyzeStructure", {})
            assert logs == []  # info lines are below the level the client asked for
    finally:
        database.dispose()
