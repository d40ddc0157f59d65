"""Jupyter display of the client's objects: the anywidget views of graphwright.notebook.widgets
(`GraphView`, `BibliographyView`), imported only when a notebook shows an object; a short HTML
and text summary when anywidget (the `notebook` extra) is not installed."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any


def widgets() -> Any | None:
    """graphwright.notebook.widgets, or None when it or anywidget cannot be imported."""
    try:
        from graphwright.notebook import widgets as module
    except ImportError:
        return None
    return module


def _widget_bundle(make: Callable[[Any], Any]) -> dict[str, Any] | None:
    module = widgets()
    if module is None:
        return None
    view = make(module)
    bundle = view._repr_mimebundle_()
    # ipywidgets answers (data, metadata); Jupyter takes the data.
    return bundle[0] if isinstance(bundle, tuple) else bundle


def text_bundle(title: str, text: str) -> dict[str, Any]:
    return {
        "text/plain": f"{title}\n{text}",
        "text/html": f"<b>{html.escape(title)}</b><pre>{html.escape(text)}</pre>",
    }


def graph_bundle(graph: dict[str, Any], title: str) -> dict[str, Any]:
    """A graph ({"nodes", "links"} or {"nodes", "edges"}) as GraphView, else a summary."""
    shown = _widget_bundle(lambda m: m.GraphView(graph))
    if shown is not None:
        return shown
    nodes, edges = graph.get("nodes", []), graph.get("links", graph.get("edges", []))
    summary = f"{len(nodes)} nodes, {len(edges)} edges"
    rows = "".join(
        f"<li>{html.escape(str(n.get('name') or n.get('label') or n.get('id')))}</li>"
        for n in nodes[:20]
    )
    return {
        "text/plain": f"{title}: {summary}",
        "text/html": f"<b>{html.escape(title)}</b>: {summary}<ul>{rows}</ul>",
    }


def live_graph_bundle(url: str, token: str, conversation_id: str, title: str) -> dict[str, Any]:
    """A Graph Mode graph as a live GraphView (it follows the graph's change events)."""
    shown = _widget_bundle(lambda m: m.GraphView.live(url, token, conversation_id))
    if shown is not None:
        return shown
    return text_bundle(title, f"Graph Mode graph of conversation {conversation_id}")


def bibliography_bundle(records: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """Citations as a sortable BibliographyView, else an HTML table."""
    shown = _widget_bundle(lambda m: m.BibliographyView(records))
    if shown is not None:
        return shown
    rows = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(str(r.get(k) or ''))}</td>" for k in ("title", "year"))
        + "</tr>"
        for r in records[:50]
    )
    return {
        "text/plain": f"{title}: {len(records)} citations",
        "text/html": f"<b>{html.escape(title)}</b><table>{rows}</table>",
    }
