"""What a chat turn gives back, as Python objects: the turn, its tool calls and its artifacts
(a KnowledgeGraph, a Bibliography, or a plain Artifact for text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from graphwright.client import display
from graphwright.core import graph_objects as go
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH
from graphwright.core.citation_formats import citation_row, read_citations, write_citations

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd
    import polars as pl


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool the turn called: `tool` is `server.tool`, `seconds` how long it took."""

    call_id: str
    tool: str
    is_error: bool
    seconds: float


@dataclass(slots=True)
class Artifact:
    """An artifact of a turn: its id, media type, title and content as the server sent it."""

    id: str
    type: str
    title: str
    content: str
    version: int | None = None

    def __str__(self) -> str:
        return self.content

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        return display.text_bundle(self.title, self.content[:2000])


@dataclass(slots=True)
class KnowledgeGraph(Artifact):
    """A knowledge graph artifact (`application/vnd.knowledge-graph`).

    >>> kg = KnowledgeGraph.from_networkx(nx.MultiDiGraph([("A", "B", "binds")]))
    >>> kg.to_networkx().number_of_edges()
    1
    """

    @property
    def graph(self) -> dict[str, Any]:
        """The content as `{"nodes": [...], "links": [...]}`."""
        return orjson.loads(self.content) if self.content else {"nodes": [], "links": []}

    def to_networkx(self) -> nx.MultiDiGraph:
        """A MultiDiGraph: node attributes `name`, `category`..., edges keyed by label."""
        return go.kg_to_networkx(self.graph)

    def to_pandas(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(nodes, edges) pandas frames."""
        graph = self.graph
        return go.frames_pandas(graph.get("nodes", []), graph.get("links", []))

    def to_polars(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(nodes, edges) polars frames."""
        graph = self.graph
        return go.frames_polars(graph.get("nodes", []), graph.get("links", []))

    @classmethod
    def from_networkx(cls, graph: nx.Graph, title: str = "Knowledge graph") -> KnowledgeGraph:
        """A knowledge graph (not stored) from a networkx graph, e.g. to load into Graph Mode."""
        content = orjson.dumps(go.networkx_to_kg(graph)).decode()
        return cls(id="", type=KNOWLEDGE_GRAPH, title=title, content=content)

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        return display.graph_bundle(self.graph, self.title)


@dataclass(slots=True)
class Bibliography(Artifact):
    """A bibliography artifact (`application/vnd.bibliography`): citations as dicts."""

    @property
    def records(self) -> list[dict[str, Any]]:
        return read_citations(self.content) or []

    def to_pandas(self) -> pd.DataFrame:
        """One row per citation: title, authors, journal, year, pmid, pubmed, doi."""
        import pandas as pd

        return pd.DataFrame([citation_row(c) for c in self.records])

    def to_bibtex(self) -> str:
        return write_citations(self.records, "bibtex")

    def to_ris(self) -> str:
        return write_citations(self.records, "ris")

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        return display.bibliography_bundle(self.records, self.title)


_KINDS: dict[str, type[Artifact]] = {KNOWLEDGE_GRAPH: KnowledgeGraph, BIBLIOGRAPHY: Bibliography}


def artifact(data: dict[str, Any], version: int | None = None) -> Artifact:
    """The Python object for an artifact as the chat API sends it."""
    kind = _KINDS.get(str(data.get("type")), Artifact)
    return kind(
        id=str(data.get("artifactId") or data.get("id") or ""),
        type=str(data.get("type") or ""),
        title=str(data.get("title") or ""),
        content=str(data.get("content") or ""),
        version=version,
    )


@dataclass(slots=True)
class Turn:
    """One chat turn: the answer's `text`, its `tool_calls` and `artifacts`, and in Graph Mode
    the conversation's graph version after it."""

    conversation_id: str
    message_id: str | None
    status: str
    stop_reason: str
    text: str
    mode: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    graph_version: int | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        versions = {
            ref.get("artifactId"): ref.get("version") for ref in data.get("artifactVersions") or []
        }
        graph = data.get("graph") or {}
        return cls(
            conversation_id=data["conversationId"],
            message_id=data.get("messageId"),
            status=data.get("status", ""),
            stop_reason=data.get("stopReason", ""),
            text=data.get("content", ""),
            mode=data.get("mode", ""),
            tool_calls=[
                ToolCall(c["callId"], c["tool"], bool(c.get("isError")), float(c["seconds"]))
                for c in data.get("toolCalls") or []
            ],
            artifacts=[
                artifact(a, versions.get(a.get("artifactId") or a.get("id")))
                for a in data.get("artifacts") or []
            ],
            graph_version=graph.get("version"),
        )

    def artifact(self, kind: type[Artifact]) -> Artifact:
        """The turn's first artifact of `kind` (e.g. `turn.artifact(KnowledgeGraph)`)."""
        found = next((a for a in self.artifacts if isinstance(a, kind)), None)
        if found is None:
            raise LookupError(f"This turn made no {kind.__name__} artifact")
        return found

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a streamed turn (`token`, `tool_call`, `artifact`, `done`...)."""

    type: str
    data: dict[str, Any]
