"""`graphwright mcp knowledge` and `graphwright mcp miner`, started beside a `graphwright serve`
that holds the embedded store on the same home, read the knowledge base through that server
(with GRAPHWRIGHT_TOKEN or a token they mint in the home) instead of failing on Oxigraph's lock."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import free_port, wait_until_serving
from tests.mcp.support import stdio_session, text_of

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"


@pytest.fixture
def served_home(tmp_path: Path) -> Iterator[dict[str, str]]:
    home = tmp_path / "home"
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRAPHWRIGHT_")}
    env |= {"GRAPHWRIGHT_HOME": str(home), "GRAPHWRIGHT_OFFLINE": "true"}
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "graphwright", "serve"], env={**env, "GRAPHWRIGHT_PORT": str(port)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", server)
        yield env
    finally:
        server.terminate()
        server.communicate(timeout=60)


async def test_the_knowledge_server_queries_through_the_running_server(
    served_home: dict[str, str],
) -> None:
    async with stdio_session("knowledge", served_home) as session:
        result = await session.call_tool("dkg-sparql-query", {"query": COUNT})
    assert not result.is_error, text_of(result)
    assert int(result.structured_content["rows"][0]["n"]["value"]) > 0  # the sample assets


async def test_the_miner_server_starts_its_service_through_the_running_server(
    served_home: dict[str, str],
) -> None:
    async with stdio_session("miner", served_home) as session:
        tools = await session.list_tools()
        result = await session.call_tool("knowledge-miner", {"query": "TP53", "maxIterations": 1})
    assert [tool.name for tool in tools.tools] == ["knowledge-miner"]
    assert "lock" not in text_of(result).lower(), text_of(result)
