"""The history part of `GraphRepository`: the change log (versions, undo states) and the stash
that holds the rows an undone import created."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import (
    ColumnElement,
    ScalarSelect,
    and_,
    delete,
    func,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.orm import Session, defer

from graphwright.db import RESULT_UNREAD
from graphwright.graphmode.models import (
    EDGE_COLUMNS,
    NODE_COLUMNS,
    GraphChangeset,
    Row,
    changesets,
    edge_stash,
    edges,
    node_stash,
    nodes,
)


class HistoryRows:
    """The change log and the stash, for `GraphRepository`."""

    session: Session
    dialect: str

    def stash(self, project_id: int, version: int, *, only_created: bool) -> None:
        """Move rows into the stash under `version`: those created by it, or all of them.

        Edges go first, since they need their nodes.
        """
        for live, stash, columns in (
            (edges, edge_stash, EDGE_COLUMNS),
            (nodes, node_stash, NODE_COLUMNS),
        ):
            where = live.c.project_id == project_id
            if only_created:
                where = and_(where, live.c.created_version == version)
            chosen = select(
                live.c.project_id, literal(version), *[live.c[c] for c in columns]
            ).where(where)
            self.session.execute(
                insert(stash).from_select(["project_id", "stash_version", *columns], chosen)
            )
            self.session.execute(delete(live).where(where))

    def unstash(self, project_id: int, version: int) -> None:
        for live, stash, columns in (
            (nodes, node_stash, NODE_COLUMNS),
            (edges, edge_stash, EDGE_COLUMNS),
        ):
            where = and_(stash.c.project_id == project_id, stash.c.stash_version == version)
            chosen = select(stash.c.project_id, *[stash.c[c] for c in columns]).where(where)
            self.session.execute(insert(live).from_select(["project_id", *columns], chosen))
            self.session.execute(delete(stash).where(where))

    def stashed_rows(self, project_id: int, version: int) -> tuple[list[Row], list[Row]]:
        node_rows = self.session.execute(
            select(*[node_stash.c[c] for c in NODE_COLUMNS]).where(
                node_stash.c.project_id == project_id, node_stash.c.stash_version == version
            )
        )
        edge_rows = self.session.execute(
            select(*[edge_stash.c[c] for c in EDGE_COLUMNS]).where(
                edge_stash.c.project_id == project_id, edge_stash.c.stash_version == version
            )
        )
        return [dict(r._mapping) for r in node_rows], [dict(r._mapping) for r in edge_rows]

    # the change log

    def add_changeset(self, values: Row, *, drops_redo: bool = False) -> None:
        """Record a changeset. `drops_redo` (a new edit): the undone edits, which could be redone
        until now, are marked dropped, and the changeset records their versions. The database
        finds them, so that a pipelined write sends this with its COMMIT, not waiting for them."""
        # inline(): no RETURNING of the new row's id, which nothing reads.
        record = insert(changesets).inline()
        if not drops_redo:
            self.session.execute(record, [values], execution_options=RESULT_UNREAD)
            return
        undone = and_(
            changesets.c.project_id == values["project_id"], changesets.c.undo_state == "undone"
        )
        record = record.values(dropped_versions=self._versions_where(undone))
        self.session.execute(record, [values], execution_options=RESULT_UNREAD)
        dropped = update(changesets).where(undone).values(undo_state="dropped")
        self.session.execute(dropped, execution_options=RESULT_UNREAD)

    def _versions_where(self, where: ColumnElement[bool]) -> ScalarSelect[Any]:
        """The versions of the changesets `where` holds, in order, as a JSON array; NULL for
        none."""
        if self.dialect == "postgresql":
            ordered = aggregate_order_by(changesets.c.version, changesets.c.version)
            return select(func.jsonb_agg(ordered)).where(where).scalar_subquery()
        # SQLite keeps the order of a subquery it aggregates (it does not flatten one with ORDER
        # BY into an aggregate), and its json_group_array of no rows is '[]'.
        versions = select(changesets.c.version).where(where).order_by(changesets.c.version)
        listed = func.json_group_array(versions.subquery().c.version)
        return select(func.nullif(listed, "[]")).scalar_subquery()

    def changeset(self, project_id: int, version: int) -> GraphChangeset | None:
        return self.session.scalar(
            select(GraphChangeset).where(
                GraphChangeset.project_id == project_id, GraphChangeset.version == version
            )
        )

    def _edit_with_state(self, project_id: int, state: str, newest: bool) -> GraphChangeset | None:
        order = GraphChangeset.version.desc() if newest else GraphChangeset.version.asc()
        return self.session.scalar(
            select(GraphChangeset)
            .where(GraphChangeset.project_id == project_id, GraphChangeset.undo_state == state)
            .order_by(order)
            .limit(1)
        )

    def newest_applied_edit(self, project_id: int) -> GraphChangeset | None:
        return self._edit_with_state(project_id, "applied", newest=True)

    def oldest_undone_edit(self, project_id: int) -> GraphChangeset | None:
        return self._edit_with_state(project_id, "undone", newest=False)

    def set_undo_state(self, changeset_id: int, state: str) -> None:
        self.session.execute(
            update(changesets).where(changesets.c.id == changeset_id).values(undo_state=state)
        )

    def history(self, project_id: int, offset: int, limit: int) -> tuple[list[GraphChangeset], int]:
        total = self.session.scalar(
            select(func.count())
            .select_from(changesets)
            .where(changesets.c.project_id == project_id)
        )
        items = self.session.scalars(
            select(GraphChangeset)
            .options(defer(GraphChangeset.forward), defer(GraphChangeset.inverse))
            .where(GraphChangeset.project_id == project_id)
            .order_by(GraphChangeset.version.desc())
            .offset(offset)
            .limit(limit)
        )
        return list(items), int(total or 0)

    def changesets_at(self, project_id: int, versions: set[int]) -> list[GraphChangeset]:
        """The changesets of these versions, without their ops."""
        return list(
            self.session.scalars(
                select(GraphChangeset)
                .options(defer(GraphChangeset.forward), defer(GraphChangeset.inverse))
                .where(
                    GraphChangeset.project_id == project_id,
                    GraphChangeset.version.in_(sorted(versions)),
                )
            )
        )

    def changesets_after(self, project_id: int, version: int) -> Iterator[GraphChangeset]:
        """Changesets newer than `version`, newest first."""
        yield from self.session.scalars(
            select(GraphChangeset)
            .where(GraphChangeset.project_id == project_id, GraphChangeset.version > version)
            .order_by(GraphChangeset.version.desc())
            .execution_options(yield_per=200)
        )
