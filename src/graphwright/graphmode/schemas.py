"""Pydantic bodies of the Graph Mode API and service: camelCase on the wire, snake_case here."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Generic, Literal, NamedTuple, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictFloat, model_validator
from pydantic.alias_generators import to_camel

T = TypeVar("T")


class Written(NamedTuple, Generic[T]):
    """What a write returns: its result and the project's new version."""

    data: T
    version: int


class ApiModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
    )


class Position(ApiModel):
    # Strict: `false` or "3" is a client's mistake, not 0.0 or 3.0 (an int is still a number).
    x: StrictFloat
    y: StrictFloat


class NodeInput(ApiModel):
    id: str | None = Field(
        default=None,
        validation_alias=AliasChoices("id", "customId", "custom_id", "canonicalId"),
        description="CURIE such as NCBIGene:7157; generated when absent. `customId` is an alias.",
    )
    label: str = Field(min_length=1, max_length=10_000)
    type: str = Field(min_length=1, max_length=200)
    data: dict[str, Any] = Field(default_factory=dict)
    position: Position | None = None


class NodePatch(ApiModel):
    """Fields to change. `data` is merged key by key; a key set to null is removed."""

    label: str | None = Field(default=None, min_length=1, max_length=10_000)
    type: str | None = Field(default=None, min_length=1, max_length=200)
    data: dict[str, Any] | None = None
    position: Position | None = None


class EdgeInput(ApiModel):
    id: str | None = Field(default=None, max_length=500)
    source: str = Field(min_length=1, max_length=500)
    target: str = Field(min_length=1, max_length=500)
    label: str | None = Field(default=None, max_length=10_000)
    type: str | None = Field(default=None, max_length=200)
    data: dict[str, Any] = Field(default_factory=dict)


class EdgePatch(ApiModel):
    """Fields to change. `data` is merged key by key; a key set to null is removed."""

    source: str | None = Field(default=None, min_length=1, max_length=500)
    target: str | None = Field(default=None, min_length=1, max_length=500)
    label: str | None = None
    type: str | None = None
    data: dict[str, Any] | None = None


class EdgeUpdate(EdgePatch):
    id: str


class Node(ApiModel):
    model_config = ConfigDict(**{**ApiModel.model_config, "extra": "ignore"})

    id: str
    label: str
    type: str
    data: dict[str, Any]
    position: Position | None = None
    created_at: datetime
    updated_at: datetime


class Edge(ApiModel):
    model_config = ConfigDict(**{**ApiModel.model_config, "extra": "ignore"})

    id: str
    source: str
    target: str
    label: str | None = None
    type: str | None = None
    data: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class GraphMetadata(ApiModel):
    node_count: int
    edge_count: int
    version: int
    last_updated: datetime | None
    offset: int = 0
    limit: int | None = None
    has_more: bool = False


class GraphState(ApiModel):
    nodes: list[Node]
    edges: list[Edge]
    metadata: GraphMetadata


class GraphSummary(ApiModel):
    version: int
    node_count: int
    edge_count: int
    node_types: dict[str, int]
    edge_labels: dict[str, int]
    last_updated: datetime | None


class GraphListing(ApiModel):
    conversation_id: str
    version: int
    node_count: int
    edge_count: int
    created_at: datetime
    updated_at: datetime
    has_conversation: bool | None = None


class GraphList(ApiModel):
    items: list[GraphListing]
    total: int
    offset: int
    limit: int


# A degree is compared with an SQL count: past a 32-bit integer no node can have it, and past
# 64 bits the databases fail (each differently), so the bound is checked before.
DEGREE_MAX = 2**31 - 1


class NodeSelection(ApiModel):
    """Which nodes a bulk remove takes: by ids, by type, or by degree (give one of them)."""

    ids: list[str] | None = None
    types: list[str] | None = None
    exclude_types: list[str] | None = None
    min_degree: int | None = Field(default=None, ge=0, le=DEGREE_MAX)
    max_degree: int | None = Field(default=None, ge=0, le=DEGREE_MAX)
    degree: int | None = Field(default=None, ge=0, le=DEGREE_MAX)
    type: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> NodeSelection:
        by_degree = any(v is not None for v in (self.min_degree, self.max_degree, self.degree))
        kinds = [
            self.ids is not None,
            self.types is not None or bool(self.exclude_types),
            by_degree,
        ]
        if sum(kinds) != 1:
            raise ValueError(
                "Select nodes by exactly one of: ids; types/excludeTypes; "
                "minDegree/maxDegree/degree (with optional type)"
            )
        return self


class Removal(ApiModel):
    preview: bool = False
    node_ids: list[str] = Field(default_factory=list)
    edge_ids: list[str] = Field(default_factory=list)
    node_count: int = 0
    edge_count: int = 0


class ImportReport(ApiModel):
    nodes_added: int
    nodes_merged: int
    edges_added: int
    edges_merged: int


class ChangesetSummary(ApiModel):
    version: int
    kind: Literal["edit", "undo", "redo"]
    command: str
    actor: str
    created_at: datetime
    summary: dict[str, Any]
    undo_state: str | None = None
    target_version: int | None = None
    dropped_versions: list[int] | None = None
    description: str = Field(
        default="", description='The change in words, e.g. "added node MYC (Gene)".'
    )


class ChangesetDetail(ChangesetSummary):
    forward: list[dict[str, Any]]
    inverse: list[dict[str, Any]]


class HistoryPage(ApiModel):
    items: list[ChangesetSummary]
    total: int
    offset: int
    limit: int
    version: int


class NodeChange(ApiModel):
    before: Node
    after: Node


class EdgeChange(ApiModel):
    before: Edge
    after: Edge


class GraphDiff(ApiModel):
    from_version: int
    to_version: int
    nodes_added: list[Node]
    nodes_removed: list[Node]
    nodes_changed: list[NodeChange]
    edges_added: list[Edge]
    edges_removed: list[Edge]
    edges_changed: list[EdgeChange]
    names: dict[str, str] = Field(
        default_factory=dict, description="The names of the nodes the listed edges join, by id."
    )


class AddNodeOp(ApiModel):
    op: Literal["addNode"]
    node: NodeInput


class UpdateNodeOp(ApiModel):
    op: Literal["updateNode"]
    id: str
    patch: NodePatch


class RemoveNodeOp(ApiModel):
    op: Literal["removeNode"]
    id: str


class AddEdgeOp(ApiModel):
    op: Literal["addEdge"]
    edge: EdgeInput


class UpdateEdgeOp(ApiModel):
    op: Literal["updateEdge"]
    id: str
    patch: EdgePatch


class RemoveEdgeOp(ApiModel):
    op: Literal["removeEdge"]
    id: str


BatchOperation = Annotated[
    AddNodeOp | UpdateNodeOp | RemoveNodeOp | AddEdgeOp | UpdateEdgeOp | RemoveEdgeOp,
    Field(discriminator="op"),
]


class BulkNodes(ApiModel):
    nodes: list[NodeInput] = Field(min_length=1)


class BulkEdges(ApiModel):
    edges: list[EdgeInput] = Field(min_length=1)


class BulkEdgeUpdates(ApiModel):
    edges: list[EdgeUpdate] = Field(min_length=1)


class BulkNodeRemoval(NodeSelection):
    preview: bool = False


class BulkEdgeRemoval(ApiModel):
    ids: list[str] = Field(min_length=1)
    preview: bool = False


class BatchRequest(ApiModel):
    operations: list[BatchOperation] = Field(min_length=1)


class ImportRequest(ApiModel):
    """A graph as seed JSON (`graph`), or text in any core format (`content` with `format`)."""

    model_config = ConfigDict(
        **{
            **ApiModel.model_config,
            "json_schema_extra": {"oneOf": [{"required": ["graph"]}, {"required": ["content"]}]},
        }
    )

    graph: dict[str, Any] | None = None
    content: str | None = None
    format: Literal["json", "trapi", "kgx-jsonl", "kgx-tsv", "graphml", "cx2"] = "json"

    @model_validator(mode="after")
    def _one_source(self) -> ImportRequest:
        if (self.graph is None) == (self.content is None):
            raise ValueError("Give exactly one of `graph` (JSON object) or `content` (text)")
        return self

    @property
    def source(self) -> dict[str, Any] | str:
        """The graph to import: `graph` or `content`, whichever was given."""
        if self.graph is not None:
            return self.graph
        assert self.content is not None  # `_one_source` guarantees one of them
        return self.content


class MergeNodesRequest(ApiModel):
    keep: str
    remove: list[str] = Field(min_length=1)
