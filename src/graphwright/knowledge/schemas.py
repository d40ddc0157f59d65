"""The knowledge base's shapes at its boundaries (REST, MCP, CLI), in camelCase on the wire."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class KbModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


Term = dict[str, str]
"""An RDF term as SPARQL 1.1 JSON results write it: {"type": "uri"|"literal"|"bnode", "value",
"datatype"?, "xml:lang"?}."""


class QueryAnswer(KbModel):
    """A SPARQL answer: rows for SELECT, a boolean for ASK, N-Triples for CONSTRUCT/DESCRIBE."""

    form: Literal["select", "ask", "graph"]
    variables: list[str] = Field(default_factory=list)
    rows: list[dict[str, Term]] = Field(default_factory=list)
    boolean: bool | None = None
    triples: str | None = Field(default=None, description="N-Triples, for CONSTRUCT and DESCRIBE")
    truncated: bool = Field(default=False, description="True when the row limit cut the answer")
    row_limit: int

    def sparql_json(self) -> dict[str, Any]:
        """The SPARQL 1.1 Query Results JSON document of a SELECT or ASK answer."""
        if self.form == "ask":
            return {"head": {}, "boolean": bool(self.boolean)}
        return {"head": {"vars": self.variables}, "results": {"bindings": self.rows}}


class AssetMetadata(KbModel):
    """What a DKG records about a knowledge collection. There is no stake per asset on the DKG:
    stake belongs to nodes, and `nodeStake` is set only where a node reports its own."""

    ual: str
    collection_ual: str
    publisher: str | None = None
    publish_time: datetime | None = None
    publish_tx: str | None = None
    published_at_block: int | None = None
    block_time: datetime | None = None
    owner: str | None = None
    later_states: int = Field(0, description="How many later revisions point back at it")
    revision_of: str | None = None
    approved_by: str | None = None
    synthetic: bool = False
    knowledge_assets: list[str] = Field(default_factory=list)
    node_stake: str | None = Field(default=None, description="The serving node's own stake")
    details: dict[str, Any] | None = Field(
        default=None,
        description="What the publication request's source recorded beside it, not published "
        "(a miner candidate's checks, confidence, linked assets and provenance)",
    )


class AssetContent(KbModel):
    """A knowledge asset or collection's public triples, as N-Triples lines."""

    ual: str
    public: list[str]
    private: list[str] = Field(default_factory=list)


class CollectionSummary(KbModel):
    ual: str
    name: str | None = None
    types: list[str] = Field(default_factory=list)
    assets: int
    publish_time: datetime | None = None
    synthetic: bool = False


class PublishedCollection(KbModel):
    ual: str
    knowledge_assets: list[str]
    publish_tx: str
    publish_time: datetime
    triples: int


class PublicationRequestView(KbModel):
    id: str
    status: Literal[
        "pending", "publishing", "published", "rejected", "failed", "removing", "removed"
    ]
    title: str
    content: Any
    requested_by: str
    created_at: datetime
    revision_of: str | None = None
    source: str | None = Field(default=None, description="Where it came from: a tool, Graph Mode")
    conversation_id: str | None = Field(
        default=None, description="The conversation it was asked from, if any"
    )
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None
    ual: str | None = None
    synthetic: bool = False
    details: dict[str, Any] | None = Field(
        default=None,
        description="What its source recorded beside the content, never published: for a "
        "knowledge-miner candidate its runId, checks, confidence, linked assets and provenance",
    )
    validated_hash: str | None = Field(
        default=None,
        description="SHA-256 of the content's RDFC-1.0 canonical N-Quads when its source "
        "validated it: approval publishes exactly that content",
    )


class SampleCollection(KbModel):
    """A collection of the bundled sample data."""

    ual: str
    title: str


class SampleDataRemoval(KbModel):
    removed: list[SampleCollection] = Field(
        description="The sample collections removed; none when there were none left"
    )


class RequestPage(KbModel):
    requests: list[PublicationRequestView]
    total: int


class PublishInput(KbModel):
    """A request to publish JSON-LD: one object, a list, or {"public": ..., "private": ...}."""

    content: Any = Field(description="JSON-LD as dkg.py's asset.create takes it")
    title: str | None = Field(default=None, max_length=500)
    revision_of: str | None = Field(
        default=None, description="The UAL this corrects: the new collection points back to it"
    )


class ApproveInput(KbModel):
    content: Any | None = Field(default=None, description="Edited JSON-LD to publish instead")


class QueryInput(KbModel):
    """A read-only SPARQL query and, optionally, fewer rows than the server's limit."""

    query: str = Field(min_length=1, max_length=100_000)
    limit: int | None = Field(default=None, ge=1)


class RejectInput(KbModel):
    reason: str = Field(min_length=1, max_length=2000)


class GraphPublishInput(KbModel):
    node_ids: list[str] | None = Field(
        default=None, description="Publish only these nodes and the edges between them"
    )
    title: str | None = Field(default=None, max_length=500)
