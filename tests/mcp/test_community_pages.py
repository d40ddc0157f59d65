"""detectCommunities pages its answer: on a graph whose communities, unpaged, are more than 1 MB
of JSON, every page stays well under it, and the pages hold every community once, the same ones
(seeded) as the unpaged answer, in the same order."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from mcp.client.session import ClientSession
from mcp_types import CallToolResult

from graphwright.db import Database
from graphwright.graphmode import analysis
from graphwright.graphmode.client import EmbeddedGraphBackend
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import EdgeInput, NodeInput
from graphwright.graphmode.service import GraphService
from tests.mcp.support import stdio_session, text_of

CONVERSATION = "conv-communities"
WHEELS, SPOKES = 200, 24  # 200 wheels of 25 nodes: Louvain finds each wheel as one community
PAD = "x" * 250  # long labels: 20 members of each community are listed
SEED = 7
WELL_UNDER = 400_000  # bytes of one answer, text and structuredContent together


def wheel_graph() -> tuple[list[NodeInput], list[EdgeInput]]:
    nodes, edges = [], []
    for wheel in range(WHEELS):
        ids = [f"W{wheel}:{i}" for i in range(SPOKES + 1)]
        nodes += [
            NodeInput(id=node_id, label=f"{node_id} {PAD}", type="gene" if i else "protein")
            for i, node_id in enumerate(ids)
        ]
        for i in range(1, SPOKES + 1):
            edges.append(EdgeInput(id=f"hub{wheel}_{i}", source=ids[0], target=ids[i]))
            rim = ids[i % SPOKES + 1]
            edges.append(EdgeInput(id=f"rim{wheel}_{i}", source=ids[i], target=rim))
    return nodes, edges


def build(service: GraphService) -> None:
    nodes, edges = wheel_graph()
    for start in range(0, len(nodes), 5_000):
        service.add_nodes(CONVERSATION, nodes[start : start + 5_000], actor="test")
    for start in range(0, len(edges), 8_000):
        service.add_edges(CONVERSATION, edges[start : start + 8_000], actor="test")


def answer_bytes(result: CallToolResult) -> int:
    return len(text_of(result).encode()) + len(orjson.dumps(result.structured_content))


async def ok(session: ClientSession, arguments: dict[str, Any]) -> CallToolResult:
    result = await session.call_tool("detectCommunities", arguments)
    assert not result.is_error, text_of(result)
    return result


async def test_detect_communities_pages_a_large_answer(tmp_path: Path, database: Database) -> None:
    service = GraphService(database, create_graph_events(database))
    build(service)
    rows = await EmbeddedGraphBackend(service, CONVERSATION).rows()
    unpaged = analysis.communities(rows.nodes, rows.edges, seed=SEED)
    assert unpaged["count"] == WHEELS
    assert len(orjson.dumps(unpaged)) > 1_000_000  # what the tool answered before it paged

    env = {
        "GRAPHWRIGHT_HOME": str(tmp_path),
        "GRAPHWRIGHT_DATABASE_URL": database.url,
        "GRAPHWRIGHT_CONVERSATION": CONVERSATION,
        # the code under test, where the venv's editable install points at another checkout
        **{key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ},
    }
    async with stdio_session("graph", env) as session:
        first = await ok(session, {"seed": SEED})
        page = first.structured_content
        shown = len(page["communities"])
        assert (page["count"], page["offset"]) == (WHEELS, 0) and 0 < shown <= 50
        assert page["communities"] == unpaged["communities"][:shown]
        assert answer_bytes(first) < WELL_UNDER
        assert text_of(first).startswith(f"{WHEELS} communities (Louvain, modularity ")
        assert f'call detectCommunities with cursor "{page["nextCursor"]}"' in text_of(first)

        # The largest pages a caller can ask for are cut by size, and cover every community.
        walked, sizes = [], []
        arguments: dict[str, Any] = {"seed": SEED, "limit": 500}
        while True:
            result = await ok(session, arguments)
            sizes.append(answer_bytes(result))
            page = result.structured_content
            assert page["offset"] == len(walked)
            walked += page["communities"]
            if page["nextCursor"] is None:
                break
            arguments = {"cursor": page["nextCursor"], "limit": 500}
        assert len(sizes) > 1 and max(sizes) < WELL_UNDER, sizes
        assert [c["index"] for c in walked] == list(range(WHEELS))
        assert walked == unpaged["communities"]
        assert all(len(c["members"]) == 20 and c["size"] == SPOKES + 1 for c in walked)

        garbage = await session.call_tool("detectCommunities", {"cursor": "garbage"})
        assert garbage.is_error
        assert "is not one that detectCommunities returned" in text_of(garbage)

        service.add_nodes(
            CONVERSATION, [NodeInput(id="late", label="late", type="gene")], actor="t"
        )
        stale = await session.call_tool(
            "detectCommunities", {"cursor": first.structured_content["nextCursor"]}
        )
        assert stale.is_error
        assert text_of(stale).startswith("The graph changed since this cursor was issued")
