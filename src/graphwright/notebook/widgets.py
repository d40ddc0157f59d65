"""Notebook views with the MCP Apps views' front end (notebook/assets.py): `GraphView`, a
knowledge graph or a Graph Mode graph (kept up to date with `live`), and `BibliographyView`, a
sortable table of citations with their BibTeX and RIS."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import anywidget
import httpx
import orjson
import traitlets

from graphwright.core.citation_formats import citation_row, write_citations
from graphwright.mcp_apps.payloads import EXPORTS, graph_payload
from graphwright.notebook.assets import bibliography_esm, graph_esm

Graph = Mapping[str, Any]


def view_payload(graph: Graph, title: str, version: int | None = None) -> dict[str, Any]:
    """The graph view's payload for a graph as the REST API gives it: `{nodes, links}` (a
    knowledge-graph artifact) or `{nodes, edges}` (Graph Mode's state, also in its envelope)."""
    if isinstance(graph.get("data"), Mapping):
        graph = graph["data"]
    edges = graph.get("edges", graph.get("links")) or []
    rows = [
        {**edge, "id": str(edge.get("id") or f"link-{index}")} for index, edge in enumerate(edges)
    ]
    payload, _ = graph_payload(list(graph.get("nodes") or []), rows, title=title, version=version)
    return payload


class GraphView(anywidget.AnyWidget):
    """An interactive graph: zoom, pan, search, node and link details with evidence links.

    >>> view = GraphView({"nodes": [{"id": "A:1", "name": "a"}], "links": []})
    >>> view.payload["nodeCount"]
    1
    """

    _esm = graph_esm()
    payload = traitlets.Dict().tag(sync=True)

    def __init__(self, graph: Graph, *, title: str = "Knowledge graph", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.title = title
        self._stop = threading.Event()
        self._follower: threading.Thread | None = None
        self.show(graph)

    def show(self, graph: Graph, version: int | None = None) -> None:
        """Draw `graph` instead of what is drawn."""
        self.payload = view_payload(graph, self.title, version)

    @classmethod
    def live(
        cls, url: str, token: str, conversation_id: str, *, timeout: float = 30.0
    ) -> GraphView:
        """The Graph Mode graph of `conversation_id` on the server at `url`, redrawn whenever it
        changes (a background thread follows the server's change events)."""
        client = _GraphClient(url, token, conversation_id, timeout)
        version, state = client.state()
        view = cls(state, title=f"Graph of conversation '{conversation_id}'")
        view.payload = view_payload(state, view.title, version)
        view._follower = threading.Thread(
            target=client.follow, args=(view,), name="graphwright-live-graph", daemon=True
        )
        view._follower.start()
        return view

    def stop(self) -> None:
        """Stop following the server (a live view); the drawing stays."""
        self._stop.set()
        if self._follower is not None:
            self._follower.join(timeout=5)


class _GraphClient:
    """The REST calls a live view makes: the state, and the change events."""

    def __init__(self, url: str, token: str, conversation_id: str, timeout: float) -> None:
        self.base = f"{url.rstrip('/')}/api/graph/{conversation_id}"
        self.headers = {"Authorization": f"Bearer {token}"}
        self.timeout = timeout

    def state(self) -> tuple[int | None, dict[str, Any]]:
        response = httpx.get(f"{self.base}/state", headers=self.headers, timeout=self.timeout)
        response.raise_for_status()
        data = response.json()["data"]
        return data.get("metadata", {}).get("version"), data

    def follow(self, view: GraphView) -> None:
        """Redraw `view` after each change event until `view.stop()`; reconnect after a drop."""
        while not view._stop.is_set():
            try:
                self._stream(view)
            except httpx.HTTPError:
                view._stop.wait(1.0)

    def _stream(self, view: GraphView) -> None:
        # The server pings every 15 s: a longer silence is a dropped connection.
        timeout = httpx.Timeout(self.timeout, read=20.0)
        with httpx.stream("GET", f"{self.base}/events", headers=self.headers, timeout=timeout) as r:
            r.raise_for_status()
            lines = r.iter_lines()
            while not view._stop.is_set():
                try:
                    line = next(lines)
                except StopIteration:
                    return
                except httpx.ReadTimeout:
                    return
                if line.startswith("event: change") or line.startswith("event: ready"):
                    version, state = self.state()
                    if version != view.payload.get("version"):
                        view.payload = view_payload(state, view.title, version)


def bibliography_payload(records: Any, title: str) -> dict[str, Any]:
    """The bibliography view's payload for citation records (a bibliography artifact's list of
    objects, or its JSON text)."""
    if isinstance(records, str | bytes):
        records = orjson.loads(records)
    citations = [dict(record) for record in records if isinstance(record, Mapping)]
    return {
        "view": "bibliography",
        "title": title,
        "citations": [citation_row(c) for c in citations],
        "exports": {
            fmt: {"label": label, "text": write_citations(citations, fmt)}
            for fmt, label in EXPORTS.items()
        },
    }


class BibliographyView(anywidget.AnyWidget):
    """Citations as a table sorted by any column, with their BibTeX and RIS to copy.

    >>> view = BibliographyView([{"pmid": "1", "title": "A", "year": 2020}])
    >>> view.payload["citations"][0]["year"]
    '2020'
    """

    _esm = bibliography_esm()
    payload = traitlets.Dict().tag(sync=True)

    def __init__(self, records: Any, *, title: str = "References", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.payload = bibliography_payload(records, title)
