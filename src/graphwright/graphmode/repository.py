"""SQL for Graph Mode. Rows travel as plain dicts; the service and `ops` hold the rules."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import (
    Select,
    String,
    Table,
    and_,
    any_,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, aliased

from graphwright.db import RESULT_UNREAD
from graphwright.graphmode.models import (
    EDGE_COLUMNS,
    NODE_COLUMNS,
    Row,
    edges,
    nodes,
    projects,
)
from graphwright.graphmode.repository_bulk import BulkRows
from graphwright.graphmode.repository_history import HistoryRows

CHUNK = 500


@dataclass(frozen=True)
class ProjectRow:
    id: int
    conversation_id: str
    version: int
    updated_at: datetime | None


def _chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _node_cols() -> list[Any]:
    return [nodes.c[name] for name in NODE_COLUMNS]


def _edge_cols() -> list[Any]:
    return [edges.c[name] for name in EDGE_COLUMNS]


class GraphRepository(BulkRows, HistoryRows):
    """Graph Mode's SQL: projects, nodes and edges, and reads over a whole graph; bulk loading
    in `repository_bulk.py`, the change log and stash in `repository_history.py`."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.dialect = session.get_bind().dialect.name

    # projects

    def project(self, conversation_id: str) -> ProjectRow | None:
        row = self.session.execute(
            select(projects).where(projects.c.conversation_id == conversation_id)
        ).first()
        return ProjectRow(row.id, row.conversation_id, row.version, row.updated_at) if row else None

    def list_projects(self, offset: int, limit: int, only: str | None) -> tuple[list[Row], int]:
        """Graphs, the most recently changed first, with their node and edge counts."""
        node_count = (
            select(func.count()).where(nodes.c.project_id == projects.c.id).scalar_subquery()
        )
        edge_count = (
            select(func.count()).where(edges.c.project_id == projects.c.id).scalar_subquery()
        )
        query = select(
            projects.c.conversation_id,
            projects.c.version,
            projects.c.created_at,
            projects.c.updated_at,
            node_count.label("node_count"),
            edge_count.label("edge_count"),
        )
        total = select(func.count()).select_from(projects)
        if only is not None:
            query = query.where(projects.c.conversation_id == only)
            total = total.where(projects.c.conversation_id == only)
        query = query.order_by(projects.c.updated_at.desc(), projects.c.conversation_id)
        rows = self.session.execute(query.offset(offset).limit(limit))
        return [dict(r._mapping) for r in rows], int(self.session.scalar(total) or 0)

    def lock_project(self, conversation_id: str, now: datetime) -> ProjectRow:
        """The project row, created if missing, locked until the transaction ends."""
        locked = select(projects).where(projects.c.conversation_id == conversation_id)
        row = self.session.execute(locked.with_for_update()).first()
        if row is None:
            dialect_insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
            self.session.execute(
                dialect_insert(projects)
                .values(conversation_id=conversation_id, version=0, created_at=now, updated_at=now)
                .on_conflict_do_nothing(index_elements=["conversation_id"])
            )
            row = self.session.execute(locked.with_for_update()).one()
        return ProjectRow(row.id, row.conversation_id, row.version, row.updated_at)

    def delete_project(self, conversation_id: str) -> None:
        """Delete a conversation's graph with its nodes, edges and history (cascading)."""
        self.session.execute(delete(projects).where(projects.c.conversation_id == conversation_id))

    def set_version(self, project_id: int, version: int, now: datetime) -> None:
        self.session.execute(
            update(projects)
            .where(projects.c.id == project_id)
            .values(version=version, updated_at=now),
            execution_options=RESULT_UNREAD,
        )

    # nodes

    def existing_node_ids(self, project_id: int, ids: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for chunk in _chunks(list(set(ids))):
            found.update(
                self.session.scalars(
                    select(nodes.c.id).where(
                        nodes.c.project_id == project_id, nodes.c.id.in_(chunk)
                    )
                )
            )
        return found

    def nodes_by_ids(self, project_id: int, ids: Iterable[str]) -> dict[str, Row]:
        return {r["id"]: r for r in self._rows_in(nodes, project_id, ids, nodes.c.id)}

    def insert_nodes(self, project_id: int, rows: list[Row]) -> None:
        self._insert(nodes, project_id, rows)

    def update_nodes(self, project_id: int, writes: list[tuple[str, Row]]) -> None:
        self._update(nodes, project_id, writes)

    def delete_nodes(self, project_id: int, ids: Sequence[str]) -> int:
        return self._delete(nodes, project_id, ids)

    # edges

    def edges_by_ids(self, project_id: int, ids: Iterable[str]) -> dict[str, Row]:
        return {r["id"]: r for r in self._rows_in(edges, project_id, ids, edges.c.id)}

    def edges_touching(self, project_id: int, node_ids: Iterable[str]) -> dict[str, Row]:
        touching = self._rows_in(edges, project_id, node_ids, edges.c.source, edges.c.target)
        return {r["id"]: r for r in touching}

    def insert_edges(self, project_id: int, rows: list[Row]) -> None:
        self._insert(edges, project_id, rows)

    def update_edges(self, project_id: int, writes: list[tuple[str, Row]]) -> None:
        self._update(edges, project_id, writes)

    def delete_edges(self, project_id: int, ids: Sequence[str]) -> int:
        return self._delete(edges, project_id, ids)

    # the statements behind the node and edge methods above

    def _rows_in(
        self, table: Table, project_id: int, values: Iterable[str], *matched: Any
    ) -> Iterator[Row]:
        """Rows of `table` with a `matched` column holding one of `values`, queried in chunks the
        drivers accept; a row that matches twice comes twice."""
        columns = _node_cols() if table is nodes else _edge_cols()
        for chunk in _chunks(list(set(values))):
            for column in matched:
                query = select(*columns).where(table.c.project_id == project_id, column.in_(chunk))
                for row in self.session.execute(query):
                    yield dict(row._mapping)

    def _insert(self, table: Table, project_id: int, rows: list[Row]) -> None:
        if rows:
            self.session.execute(insert(table), [{**r, "project_id": project_id} for r in rows])

    def _update(self, table: Table, project_id: int, writes: list[tuple[str, Row]]) -> None:
        """Set each (row id, values) in order: a run of writes of the same columns is one
        executemany, where one statement per row cost SQLAlchemy a statement build each."""
        by_id = update(table).where(
            table.c.project_id == project_id, table.c.id == bindparam("row_id")
        )
        for _, run in groupby(writes, key=lambda write: tuple(write[1])):
            self.session.execute(by_id, [{**values, "row_id": row_id} for row_id, values in run])

    def _delete(self, table: Table, project_id: int, ids: Sequence[str]) -> int:
        """Delete the rows with these ids; how many there were."""
        if self.dialect == "postgresql":
            # One statement with the ids as one array: 500-id chunks cost PostgreSQL a plan each.
            listed = bindparam("ids", list(ids), type_=postgresql.ARRAY(String))
            result = self.session.execute(
                delete(table).where(table.c.project_id == project_id, table.c.id == any_(listed))
            )
            return result.rowcount
        deleted = 0
        for chunk in _chunks(ids):
            result = self.session.execute(
                delete(table).where(table.c.project_id == project_id, table.c.id.in_(chunk))
            )
            deleted += result.rowcount
        return deleted

    # reads over the whole graph

    def counts(self, project_id: int) -> tuple[int, int]:
        node_count = self.session.scalar(
            select(func.count()).select_from(nodes).where(nodes.c.project_id == project_id)
        )
        edge_count = self.session.scalar(
            select(func.count()).select_from(edges).where(edges.c.project_id == project_id)
        )
        return int(node_count or 0), int(edge_count or 0)

    def type_counts(self, project_id: int) -> tuple[dict[str, int], dict[str, int]]:
        node_types = self.session.execute(
            select(nodes.c.type, func.count())
            .where(nodes.c.project_id == project_id)
            .group_by(nodes.c.type)
        )
        edge_labels = self.session.execute(
            select(edges.c.label, func.count())
            .where(edges.c.project_id == project_id)
            .group_by(edges.c.label)
        )
        return (
            {str(t): int(n) for t, n in node_types},
            {str(label or ""): int(n) for label, n in edge_labels},
        )

    def page_nodes(
        self,
        project_id: int,
        *,
        node_types: Sequence[str] | None,
        ids: Sequence[str] | None,
        offset: int,
        limit: int | None,
    ) -> list[Row]:
        query = select(*_node_cols()).where(nodes.c.project_id == project_id)
        if node_types:
            query = query.where(nodes.c.type.in_(node_types))
        if ids is not None:
            query = query.where(nodes.c.id.in_(ids))
        query = query.order_by(nodes.c.id).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        return [dict(r._mapping) for r in self.session.execute(query)]

    def page_edges(
        self,
        project_id: int,
        *,
        node_types: Sequence[str] | None,
        ids: Sequence[str] | None,
        edge_types: Sequence[str] | None,
        offset: int,
        limit: int | None,
    ) -> list[Row]:
        """Edges ordered by id whose both ends pass the node filter, one page of them."""
        query: Select[Any] = select(*_edge_cols()).where(edges.c.project_id == project_id)
        if edge_types:
            query = query.where(edges.c.type.in_(edge_types))
        if ids is not None:
            query = query.where(edges.c.source.in_(ids), edges.c.target.in_(ids))
        if node_types:
            for column in (edges.c.source, edges.c.target):
                end = aliased(nodes)
                query = query.join(
                    end, and_(end.c.project_id == edges.c.project_id, end.c.id == column)
                ).where(end.c.type.in_(node_types))
        query = query.order_by(edges.c.id).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        return [dict(r._mapping) for r in self.session.execute(query)]

    def all_nodes(self, project_id: int) -> list[Row]:
        query = select(*_node_cols()).where(nodes.c.project_id == project_id)
        return [dict(r._mapping) for r in self.session.execute(query)]

    def all_edges(self, project_id: int) -> list[Row]:
        query = select(*_edge_cols()).where(edges.c.project_id == project_id)
        return [dict(r._mapping) for r in self.session.execute(query)]

    def edges_between(self, project_id: int, node_ids: Collection[str]) -> list[Row]:
        """The edges with both ends among `node_ids` (read by source, in chunks the drivers
        accept, and kept by target)."""
        rows = self._rows_in(edges, project_id, node_ids, edges.c.source)
        return [row for row in rows if row["target"] in node_ids]

    def node_ids_by_type(
        self, project_id: int, types: Sequence[str] | None, exclude: Sequence[str] | None
    ) -> list[str]:
        query = select(nodes.c.id).where(nodes.c.project_id == project_id)
        if types:
            query = query.where(nodes.c.type.in_(types))
        if exclude:
            query = query.where(nodes.c.type.not_in(exclude))
        return list(self.session.scalars(query.order_by(nodes.c.id)))

    def node_ids_by_degree(
        self,
        project_id: int,
        *,
        min_degree: int | None,
        max_degree: int | None,
        node_type: str | None,
    ) -> list[str]:
        outgoing = (
            select(func.count())
            .where(edges.c.project_id == project_id, edges.c.source == nodes.c.id)
            .scalar_subquery()
        )
        incoming = (
            select(func.count())
            .where(edges.c.project_id == project_id, edges.c.target == nodes.c.id)
            .scalar_subquery()
        )
        degree = (outgoing + incoming).label("degree")
        inner = select(nodes.c.id, degree).where(nodes.c.project_id == project_id)
        if node_type:
            inner = inner.where(nodes.c.type == node_type)
        sub = inner.subquery()
        query = select(sub.c.id)
        if min_degree is not None:
            query = query.where(sub.c.degree >= min_degree)
        if max_degree is not None:
            query = query.where(sub.c.degree <= max_degree)
        return list(self.session.scalars(query.order_by(sub.c.id)))

    def search_nodes(
        self, project_id: int, text: str, types: Sequence[str] | None, limit: int
    ) -> list[Row]:
        # The text is literal: `%` and `_` in it match themselves, not anything.
        escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped}%"
        query = select(*_node_cols()).where(
            nodes.c.project_id == project_id,
            func.lower(nodes.c.label).like(pattern, escape="\\")
            | func.lower(nodes.c.id).like(pattern, escape="\\"),
        )
        if types:
            query = query.where(nodes.c.type.in_(types))
        return [
            dict(r._mapping) for r in self.session.execute(query.order_by(nodes.c.id).limit(limit))
        ]
