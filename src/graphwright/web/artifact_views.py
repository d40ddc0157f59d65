"""How each kind of artifact is shown: knowledge graph, bibliography, markdown, anything else."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from nicegui import ui

from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN, ChatArtifact
from graphwright.core.citation_formats import (
    WRITERS,
    citation_row,
    pmid_links,
    read_citations,
    write_citations,
)
from graphwright.core.formats import FORMATS, write_graph
from graphwright.core.graph import load_graph
from graphwright.drawing.layout import place
from graphwright.drawing.options import categories, node_type
from graphwright.web.common import code, guarded, markdown
from graphwright.web.graph_view import GraphView

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(title: str) -> str:
    return _SAFE_NAME.sub("-", title).strip("-")[:60] or "artifact"


def show_artifact(
    chat: ChatArtifact, *, open_in_graph_mode: Callable[[], Awaitable[None]] | None = None
) -> None:
    if chat.type == KNOWLEDGE_GRAPH:
        KnowledgeGraphArtifact(chat, open_in_graph_mode)
    elif chat.type == BIBLIOGRAPHY:
        bibliography(chat)
    elif chat.type == MARKDOWN:
        with (
            ui.column()
            .classes("w-full prose max-w-none")
            .mark("markdown-artifact")
            .props('data-testid="markdown-artifact"')
        ):
            markdown(chat.content)
    else:
        raw(chat)


def raw(chat: ChatArtifact) -> None:
    filename = (chat.metadata or {}).get("filename") or file_stem(chat.title)
    ui.label(f"{chat.type}: shown as it is").classes("text-sm text-gray-700")
    textual = chat.type.startswith("text/") or "json" in chat.type or "xml" in chat.type
    if textual:
        code(chat.content[:200_000]).classes("w-full").mark("raw-artifact").props(
            'data-testid="raw-artifact"'
        )
        payload = chat.content.encode()
    else:
        try:
            payload = base64.b64decode(chat.content, validate=True)
        except binascii.Error:
            payload = chat.content.encode()
        ui.label(f"{len(payload):,} bytes of binary content").mark("raw-artifact").props(
            'data-testid="raw-artifact"'
        )
    ui.button(
        "Download",
        icon="download",
        on_click=lambda: ui.download.content(payload, filename, chat.type),
    ).mark("download-raw").props('data-testid="download-raw"')


# --- bibliography -------------------------------------------------------------------------------


def bibliography(chat: ChatArtifact) -> None:
    citations = read_citations(chat.content) or []
    rows = [{"key": index, **citation_row(c)} for index, c in enumerate(citations)]
    with ui.row().classes("items-center gap-2"):
        ui.label(f"{len(rows)} references").classes("font-medium")
        for fmt, (_, extension, media_type) in WRITERS.items():
            ui.button(
                fmt.upper() if fmt != "bibtex" else "BibTeX",
                icon="download",
                on_click=lambda f=fmt, e=extension, m=media_type: ui.download.content(
                    write_citations(citations, f), f"{file_stem(chat.title)}.{e}", m
                ),
            ).props("outline dense").mark(f"export-{fmt}").props(f'data-testid="export-{fmt}"')
    columns = [
        {"name": "title", "label": "Title", "field": "title", "sortable": True, "align": "left"},
        {"name": "authors", "label": "Authors", "field": "authors", "align": "left"},
        {"name": "journal", "label": "Journal", "field": "journal", "sortable": True},
        {"name": "year", "label": "Year", "field": "year", "sortable": True},
        {"name": "pmid", "label": "Links", "field": "pmid", "sortable": True},
    ]
    table = ui.table(columns=columns, rows=rows, row_key="key", pagination=25)
    table.classes("w-full").props("dense wrap-cells flat bordered").mark("bibliography").props(
        'data-testid="bibliography"'
    )
    table.add_slot(
        "body-cell-pmid",
        r"""
        <q-td :props="props">
          <a v-if="props.row.pubmed" :href="props.row.pubmed" target="_blank"
             rel="noopener noreferrer">PMID {{ props.row.pmid }}</a>
          <a v-if="props.row.doi" :href="props.row.doi" target="_blank" rel="noopener noreferrer"
             class="q-ml-sm">DOI</a>
          <q-badge v-if="props.row.synthetic" color="grey-7" class="q-ml-sm">synthetic</q-badge>
        </q-td>
        """,
    )


# --- knowledge graph ----------------------------------------------------------------------------


class KnowledgeGraphArtifact:
    """A knowledge-graph artifact: the graph view with search, type filter, node details,
    export in every format the CLI writes, and "open in Graph Mode"."""

    def __init__(
        self, chat: ChatArtifact, open_in_graph_mode: Callable[[], Awaitable[None]] | None
    ) -> None:
        self.chat = chat
        try:
            self.graph = load_graph(orjson.loads(chat.content))
        except Exception as exc:  # a malformed artifact is shown raw, with why
            ui.label(f"This knowledge graph cannot be drawn: {exc}").classes("text-red-800")
            raw(chat)
            return
        self.nodes = [{**n, "label": n.get("name") or n["id"]} for n in self.graph["nodes"]]
        self.edges = [
            {**link, "id": f"link-{index}"} for index, link in enumerate(self.graph["links"])
        ]
        self.by_id = {n["id"]: n for n in self.nodes}
        with ui.row().classes("w-full items-end gap-2"):
            self.search = (
                ui.input("Search nodes", on_change=self._filter)
                .props('clearable debounce=200 aria-label="Search nodes"')
                .mark("graph-search")
                .props('data-testid="graph-search"')
            )
            self.types = (
                ui.select(
                    categories(self.nodes),
                    multiple=True,
                    label="Show types",
                    value=categories(self.nodes),
                    on_change=self._filter,
                )
                .classes("min-w-[12rem]")
                .props("use-chips dense")
                .mark("graph-types")
                .props('data-testid="graph-types"')
            )
            with (
                ui.dropdown_button("Export", icon="download")
                .props("outline")
                .mark("graph-export")
                .props('data-testid="graph-export"')
            ):
                for fmt in FORMATS.values():
                    ui.item(
                        f"{fmt.name} ({fmt.extensions[0]})",
                        on_click=lambda f=fmt: self._export(f.name, f.extensions[0]),
                    ).mark(f"export-{fmt.name}").props(f'data-testid="export-{fmt.name}"')
            if open_in_graph_mode is not None:
                ui.button(
                    "Open in Graph Mode", icon="hub", on_click=guarded(open_in_graph_mode)
                ).props("outline").mark("open-graph-mode").props('data-testid="open-graph-mode"')
        ui.label(f"{len(self.nodes)} nodes, {len(self.edges)} links").classes("text-sm")
        self.view = GraphView(on_node=self._details, on_edge=self._edge_details, height="55vh")
        self.placement = place(self.nodes, self.edges)
        self.view.show(self.nodes, self.edges, self.placement)
        self.details = (
            ui.column().classes("w-full").mark("node-details").props('data-testid="node-details"')
        )

    def _export(self, fmt: str, extension: str) -> None:
        content = write_graph(self.graph, fmt)
        payload = content if isinstance(content, bytes) else content.encode()
        ui.download.content(payload, f"{file_stem(self.chat.title)}{extension}")

    def _filter(self) -> None:
        text = (self.search.value or "").strip().casefold()
        hits = {
            n["id"]
            for n in self.nodes
            if text and (text in str(n["label"]).casefold() or text in n["id"].casefold())
        }
        hidden = set(categories(self.nodes)) - set(self.types.value or [])
        self.view.show(self.nodes, self.edges, self.placement, highlight=hits, hidden_types=hidden)

    def _details(self, node_id: str) -> None:
        node = self.by_id.get(node_id)
        self.details.clear()
        if node is None:
            return
        with self.details, ui.card().classes("w-full").props("flat bordered"):
            ui.label(str(node["label"])).classes("text-lg font-bold")
            ui.label(f"{node['id']} · {node_type(node)}").classes("text-sm text-gray-700")
            extra = {k: v for k, v in node.items() if k not in ("id", "name", "label", "type")}
            if extra:
                code(orjson.dumps(extra, option=orjson.OPT_INDENT_2).decode()).classes("w-full")
            touching = [e for e in self.edges if node_id in (e["source"], e["target"])]
            ui.label(f"{len(touching)} links").classes("font-medium")
            for edge in touching[:50]:
                self._edge_line(edge)

    def _edge_details(self, edge_id: str) -> None:
        edge = next((e for e in self.edges if e["id"] == edge_id), None)
        self.details.clear()
        if edge is not None:
            with self.details:
                self._edge_line(edge)

    def _edge_line(self, edge: dict[str, Any]) -> None:
        source = self.by_id.get(edge["source"], {}).get("label", edge["source"])
        target = self.by_id.get(edge["target"], {}).get("label", edge["target"])
        with ui.row().classes("items-center gap-2 text-sm"):
            ui.label(f"{source} —{edge.get('label') or ''}→ {target}")
            for text, url in pmid_links(edge.get("evidence", []))[:20]:
                ui.link(text, url, new_tab=True).mark("evidence-link").props(
                    'data-testid="evidence-link"'
                )
