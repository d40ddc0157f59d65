"""What a linked tool's result carries for its view, under `_meta["graphwright/view"]`.

The model reads the result's text; the view draws from this payload, which hosts keep out of the
model's context (MCP Apps: `_meta` is not for the model). Graphs are laid out and turned into
the ECharts option on the server, by the same code as the web UI's graph view
(`drawing.layout.place` and `drawing.graph.drawing`), so the views only render. Bibliographies
come with their rows and their BibTeX and RIS, written by `core.citation_formats`.

The drawing modules are imported when a first graph payload is built: they load the layouts'
networkx, which a server whose client has no MCP Apps support never needs. Nothing here imports
the web UI (NiceGUI).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp_types import CallToolResult, EmbeddedResource, TextResourceContents

from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH
from graphwright.core.citation_formats import (
    citation_row,
    pmid_links,
    read_citations,
    write_citations,
)
from graphwright.core.graph import load_graph
from graphwright.errors import GraphwrightError

if TYPE_CHECKING:  # the graph servers' backends; the other servers never load them
    from graphwright.graphmode.client import GraphBackend

Row = Mapping[str, Any]
Positions = dict[str, tuple[float, float]]
MAX_DRAWN_NODES = 5_000  # above, a view shows the counts and points to the web UI
FRESH_LAYOUT_UP_TO = 100  # nodes
MAX_EVIDENCE_LINKS = 20  # per edge
EXPORTS = {"bibtex": "BibTeX", "ris": "RIS"}
_NOT_PROPERTIES = {"id", "name", "label", "type", "position", "data", "evidence"}


def artifact_text(result: CallToolResult, mime_type: str) -> tuple[str, str] | None:
    """(title, text) of the result's first artifact of `mime_type`, if any; the title is ""
    when the artifact has none."""
    for block in result.content:
        if isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            resource = block.resource
            if resource.mime_type == mime_type:
                return str((resource.meta or {}).get("title") or ""), resource.text
    return None


# --- graphs ----------------------------------------------------------------------------------


def evidence_links(values: Any) -> list[dict[str, str]]:
    """{text, url} for each piece of evidence that links somewhere (PMIDs, web addresses)."""
    return [{"text": text, "url": url} for text, url in pmid_links(values)[:MAX_EVIDENCE_LINKS]]


def _properties(item: Row) -> dict[str, Any]:
    data = item.get("data")
    own = {k: v for k, v in item.items() if k not in _NOT_PROPERTIES and v not in (None, "")}
    return {**own, **(data if isinstance(data, Mapping) else {})}


def _evidence(edge: Row) -> Any:
    data = edge.get("data")
    if edge.get("evidence"):
        return edge["evidence"]
    return data.get("evidence") if isinstance(data, Mapping) else None


def graph_payload(
    nodes: Sequence[Row],
    edges: Sequence[Row],
    *,
    title: str,
    version: int | None = None,
    known: Positions | None = None,
) -> tuple[dict[str, Any], Positions]:
    """The graph view's payload and the positions drawn (CPU-bound: call it in a thread).

    `nodes` need `id` and `label` or `name`; `edges` need `id`, `source` and `target`;
    `known` are positions to keep (see `drawing.layout.place`)."""
    from graphwright.core.palette import type_colour
    from graphwright.drawing.graph import drawing
    from graphwright.drawing.layout import place
    from graphwright.drawing.options import node_type

    if len(nodes) > MAX_DRAWN_NODES:
        return too_large(title, len(nodes), len(edges), version), {}
    labelled = [{**n, "label": n.get("label") or n.get("name") or n["id"]} for n in nodes]
    placement = place(labelled, edges, known)
    drawn = drawing(labelled, edges, placement, version=version)
    payload = {
        "view": "graph",
        "title": title,
        "version": version,
        "nodeCount": len(nodes),
        "edgeCount": len(edges),
        "note": placement.note,
        "option": drawn.options,
        "linkIds": drawn.link_ids,
        "seriesNodeIds": drawn.series_node_ids,
        "nodes": {
            n["id"]: {
                "name": str(n["label"]),
                "type": node_type(n),
                "colour": type_colour(node_type(n)),
                "properties": _properties(n),
            }
            for n in labelled
        },
        "edges": [
            {
                "id": str(e["id"]),
                "source": e["source"],
                "target": e["target"],
                "label": str(e.get("label") or e.get("type") or ""),
                "evidence": evidence_links(_evidence(e)),
            }
            for e in edges
        ],
    }
    return payload, dict(placement.positions)


def too_large(title: str, node_count: int, edge_count: int, version: int | None) -> dict[str, Any]:
    return {
        "view": "graph",
        "title": title,
        "version": version,
        "nodeCount": node_count,
        "edgeCount": edge_count,
        "tooLarge": True,
        "note": f"This graph has {node_count:,} nodes, more than a chat view draws "
        f"({MAX_DRAWN_NODES:,}); open it in graphwright's web UI.",
    }


async def knowledge_graph_payload(result: CallToolResult) -> dict[str, Any] | None:
    """The payload for a result that carries a knowledge-graph artifact (none without one)."""
    found = artifact_text(result, KNOWLEDGE_GRAPH)
    if found is None:
        return None
    title, text = found
    try:
        graph = load_graph(text)
    except GraphwrightError:
        return None
    edges = [{**link, "id": f"link-{index}"} for index, link in enumerate(graph["links"])]
    draw = partial(graph_payload, title=title or "Knowledge graph")
    payload, _ = await anyio.to_thread.run_sync(draw, graph["nodes"], edges)
    return payload


class ConversationDrawings:
    """Payloads of conversations' whole graphs.

    A graph of up to `FRESH_LAYOUT_UP_TO` nodes is laid out afresh at each drawing
    (deterministically), so a graph built one edit at a time is drawn as a whole, not as the trail
    of where each node first landed. A bigger one would cost seconds per edit: it keeps the
    positions of its last drawing (for the `limit` conversations drawn most recently), and only
    new nodes are placed, in free space near their neighbours. Positions saved on nodes always win.
    """

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._positions: OrderedDict[str, Positions] = OrderedDict()

    async def payload(self, graph: GraphBackend) -> dict[str, Any]:
        conversation = graph.conversation_id
        title = f"Graph of conversation '{conversation}'"
        info = await graph.summary()
        if info is not None and info.node_count > MAX_DRAWN_NODES:
            return too_large(title, info.node_count, info.edge_count, info.version)
        rows = await graph.rows()
        known = self._positions.get(conversation) if len(rows.nodes) > FRESH_LAYOUT_UP_TO else None
        draw = partial(graph_payload, title=title, version=rows.version, known=known)
        payload, positions = await anyio.to_thread.run_sync(draw, rows.nodes, rows.edges)
        self._positions[conversation] = positions
        self._positions.move_to_end(conversation)
        while len(self._positions) > self.limit:
            self._positions.popitem(last=False)
        return {**payload, "conversationId": conversation}


# --- bibliographies --------------------------------------------------------------------------


async def bibliography_payload(result: CallToolResult) -> dict[str, Any] | None:
    """The bibliography view's payload: rows to sort and the BibTeX and RIS to export."""
    found = artifact_text(result, BIBLIOGRAPHY)
    if found is None or (citations := read_citations(found[1])) is None:
        return None
    return {
        "view": "bibliography",
        "title": found[0] or "References",
        "citations": [citation_row(c) for c in citations],
        "exports": {
            fmt: {"label": label, "text": write_citations(citations, fmt)}
            for fmt, label in EXPORTS.items()
        },
    }
