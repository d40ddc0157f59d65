"""Graph Mode tables: projects, nodes, edges, the change log and the stash of undone imports."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Table,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from graphwright.db import Base, UtcDateTime

TZ = UtcDateTime()
Row = dict[str, Any]  # a node, edge or changeset row as the repository reads and writes it

# The node and edge columns, in the order their rows travel (bulk loads, the stash).
NODE_COLUMNS = (
    "id",
    "label",
    "type",
    "data",
    "position",
    "created_version",
    "created_at",
    "updated_at",
)
EDGE_COLUMNS = (
    "id",
    "source",
    "target",
    "label",
    "type",
    "data",
    "created_version",
    "created_at",
    "updated_at",
)


class _NodeFields:
    """A node's columns, shared by the live table and the stash."""

    label: Mapped[str] = mapped_column(String)
    type: Mapped[str] = mapped_column(String(200))
    data: Mapped[dict[str, Any]]
    position: Mapped[dict[str, Any] | None]
    created_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(TZ)
    updated_at: Mapped[datetime] = mapped_column(TZ)


class _EdgeFields:
    """An edge's columns, shared by the live table and the stash."""

    source: Mapped[str] = mapped_column(String(500))
    target: Mapped[str] = mapped_column(String(500))
    label: Mapped[str | None] = mapped_column(String)
    type: Mapped[str | None] = mapped_column(String(200))
    data: Mapped[dict[str, Any]]
    created_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(TZ)
    updated_at: Mapped[datetime] = mapped_column(TZ)


class GraphProject(Base):
    __tablename__ = "graph_projects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(String(200), unique=True)
    version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(TZ)
    updated_at: Mapped[datetime] = mapped_column(TZ)


class GraphNode(_NodeFields, Base):
    __tablename__ = "graph_nodes"
    __table_args__ = (
        Index("ix_graph_nodes_type", "project_id", "type"),
        Index("ix_graph_nodes_created", "project_id", "created_version"),
    )

    project_id: Mapped[int] = mapped_column(
        ForeignKey("graph_projects.id", ondelete="CASCADE"), primary_key=True
    )
    id: Mapped[str] = mapped_column(String(500), primary_key=True)


class GraphEdge(_EdgeFields, Base):
    __tablename__ = "graph_edges"
    __table_args__ = (
        ForeignKeyConstraint(
            ["project_id", "source"],
            ["graph_nodes.project_id", "graph_nodes.id"],
            ondelete="CASCADE",
        ),
        ForeignKeyConstraint(
            ["project_id", "target"],
            ["graph_nodes.project_id", "graph_nodes.id"],
            ondelete="CASCADE",
        ),
        Index("ix_graph_edges_source", "project_id", "source"),
        Index("ix_graph_edges_target", "project_id", "target"),
        Index("ix_graph_edges_created", "project_id", "created_version"),
    )

    project_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(500), primary_key=True)


class GraphChangeset(Base):
    """One operation: the ops it applied and the ops that reverse them."""

    __tablename__ = "graph_changesets"
    __table_args__ = (
        UniqueConstraint("project_id", "version", name="uq_graph_changesets_version"),
        Index("ix_graph_changesets_undo", "project_id", "undo_state", "version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("graph_projects.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(10))
    command: Mapped[str] = mapped_column(String(50))
    actor: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(TZ)
    forward: Mapped[list[Any]]
    inverse: Mapped[list[Any]]
    summary: Mapped[dict[str, Any]]
    undo_state: Mapped[str | None] = mapped_column(String(10))
    target_version: Mapped[int | None] = mapped_column(Integer)
    dropped_versions: Mapped[list[Any] | None]


class _StashKey:
    """The key of a stashed row: its project, the version that stashed it and its id.

    Listed first among the bases, so these columns (and the primary key) come first.
    """

    project_id: Mapped[int] = mapped_column(
        ForeignKey("graph_projects.id", ondelete="CASCADE"), primary_key=True
    )
    stash_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(500), primary_key=True)


class GraphNodeStash(_StashKey, _NodeFields, Base):
    """Nodes of an undone import, kept for its redo and for time travel."""

    __tablename__ = "graph_node_stash"


class GraphEdgeStash(_StashKey, _EdgeFields, Base):
    __tablename__ = "graph_edge_stash"


projects: Table = GraphProject.__table__  # type: ignore[assignment]
nodes: Table = GraphNode.__table__  # type: ignore[assignment]
edges: Table = GraphEdge.__table__  # type: ignore[assignment]
changesets: Table = GraphChangeset.__table__  # type: ignore[assignment]
node_stash: Table = GraphNodeStash.__table__  # type: ignore[assignment]
edge_stash: Table = GraphEdgeStash.__table__  # type: ignore[assignment]
