"""graphwright's three MCP Apps views, each one self-contained HTML document.

A document inlines everything it runs: the stylesheet, the bridge (`static/bridge.js`), the
view's script and, for the graph views, ECharts from the installed NiceGUI. It loads nothing, and
says so twice: the resource's `_meta.ui.csp` declares no outside origin (the host then applies
the spec's restrictive default), and the document's own Content-Security-Policy allows its
inline scripts by hash only and no connection, frame, form or base URL.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from graphwright.mcp_apps.echarts import echarts_module

STATIC = files("graphwright.mcp_apps") / "static"


@dataclass(frozen=True)
class View:
    uri: str
    name: str
    title: str
    description: str
    body: str  # file in static/: the markup inside page.html's <body>
    scripts: tuple[str, ...]  # files in static/, inlined in this order after the bridge
    charts: bool  # inline ECharts


GRAPH_DOCUMENT: dict[str, Any] = {
    "body": "graph.html",
    "scripts": ("graph.js", "graph_page.js"),
    "charts": True,
}
KNOWLEDGE_GRAPH_VIEW = View(
    uri="ui://graphwright/knowledge-graph",
    name="knowledge-graph",
    title="Knowledge graph",
    description="An interactive knowledge graph: zoom, pan, search, node details with "
    "evidence links, and a legend of categories.",
    **GRAPH_DOCUMENT,
)
GRAPH_MODE_VIEW = View(
    uri="ui://graphwright/graph-mode",
    name="graph-mode",
    title="Graph Mode",
    description="The conversation's live graph, with undo and redo.",
    **GRAPH_DOCUMENT,
)
BIBLIOGRAPHY_VIEW = View(
    uri="ui://graphwright/bibliography",
    name="bibliography",
    title="Bibliography",
    description="A sortable table of citations with BibTeX and RIS export.",
    body="bibliography.html",
    scripts=("bibliography.js", "bibliography_page.js"),
    charts=False,
)
VIEWS = (KNOWLEDGE_GRAPH_VIEW, BIBLIOGRAPHY_VIEW, GRAPH_MODE_VIEW)

_SLOT = re.compile(r"\{\{ (\w+) \}\}")


def _static(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy(scripts: list[str]) -> str:
    """The document's own policy: its inline scripts (by hash) and styles, data: images."""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {' '.join(_sha256(script) for script in scripts)}",
            "style-src 'unsafe-inline'",  # ECharts sets inline styles on its tooltip
            "img-src data:",
            "font-src data:",
            "connect-src 'none'",
            "frame-src 'none'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


@cache
def document(view: View) -> str:
    """The view's HTML, built once per process."""
    scripts = [_static("bridge.js") + "\n" + "\n".join(_static(name) for name in view.scripts)]
    if view.charts:
        scripts.insert(0, echarts_module())
    slots = {
        "csp": html.escape(content_security_policy(scripts)),
        "title": html.escape(view.title),
        "view": view.name,
        "style": _static("view.css"),
        "scripts": "\n".join(f'<script type="module">{script}</script>' for script in scripts),
    }
    slots["body"] = _fill(_static(view.body), slots)
    return _fill(_static("page.html"), slots)


def _fill(template: str, slots: dict[str, str]) -> str:
    return _SLOT.sub(lambda match: slots[match.group(1)], template)
