"""Bulk loading of node and edge rows for imports: rows encoded for the driver before the write
transaction starts (`encode`), so that the transaction itself only hands them over (COPY on
PostgreSQL, executemany on SQLite and for a few rows on PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

from sqlalchemy.orm import Session

from graphwright.db import PIPELINES, dump_json, in_pipeline, results_now
from graphwright.graphmode.models import (
    EDGE_COLUMNS,
    NODE_COLUMNS,
    Row,
)

TIMESTAMP_COLUMNS = frozenset({"created_at", "updated_at"})
JSON_COLUMNS = frozenset({"data", "position"})
BULK_CACHE_KIB = -262_144  # SQLite reads a negative cache_size as KiB
# From this many rows PostgreSQL gets them by COPY; fewer, by one pipelined INSERT (where libpq
# can pipeline: without it, each row would be a round trip), as do rows in a pipelined write.
COPY_FROM_ROWS = 100


def _json_text(value: Any) -> str | None:
    # The text the engine's JSON serializer writes, so bulk rows are stored as ORM rows are.
    return None if value is None else dump_json(value)


def _sqlite_time(moment: datetime) -> str:
    # The text form SQLAlchemy's SQLite DateTime type writes and parses back.
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


class BulkRows:
    """The bulk part of `GraphRepository`."""

    session: Session
    dialect: str

    def encode(self, columns: Sequence[str], rows: Iterable[Row]) -> list[tuple[Any, ...]]:
        """`columns` of each row as the driver takes them: JSON as text, and on SQLite
        timestamps as the text SQLAlchemy's DateTime type writes."""
        values_of = itemgetter(*columns)
        json_at = [i for i, c in enumerate(columns) if c in JSON_COLUMNS]
        time_at = (
            []
            if self.dialect == "postgresql"
            else [i for i, c in enumerate(columns) if c in TIMESTAMP_COLUMNS]
        )
        times: dict[datetime, str] = {}

        def encoded(row: Row) -> tuple[Any, ...]:
            values = list(values_of(row))
            for i in json_at:
                values[i] = _json_text(values[i])
            for i in time_at:
                moment = values[i]
                text = times.get(moment)
                if text is None:
                    text = times[moment] = _sqlite_time(moment)
                values[i] = text
            return tuple(values)

        return [encoded(row) for row in rows]

    def encode_updates(self, columns: Sequence[str], rows: Iterable[Row]) -> list[tuple[Any, ...]]:
        """Rows for `bulk_update` of `columns`: those columns, then the row's id."""
        return self.encode((*columns, "id"), rows)

    def bulk_insert(self, project_id: int, table: str, rows: list[tuple[Any, ...]]) -> None:
        """Insert node or edge rows encoded by `encode` (all NODE_COLUMNS or EDGE_COLUMNS)."""
        if not rows:
            return
        columns = NODE_COLUMNS if table == "graph_nodes" else EDGE_COLUMNS
        names = ", ".join(["project_id", *columns])
        dbapi = self.session.connection().connection.driver_connection
        marks = ", ".join(self._placeholder(column) for column in columns)
        if self.dialect == "postgresql":
            with dbapi.cursor() as cursor:
                by_copy = len(rows) >= COPY_FROM_ROWS and not in_pipeline(self.session)
                if by_copy or not PIPELINES:
                    with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                        for row in rows:
                            copy.write_row((project_id, *row))
                    return
                # One round trip (psycopg pipelines an executemany), where COPY takes two. The
                # project id is a parameter: psycopg prepares the statement, once per connection.
                cursor.executemany(
                    f"INSERT INTO {table} ({names}) VALUES (%s, {marks})",
                    [(project_id, *row) for row in rows],
                )
            return
        cursor = dbapi.cursor()
        # A page cache that holds the indexes being filled saves most of the I/O of a big load.
        (previous,) = cursor.execute("PRAGMA cache_size").fetchone()
        cursor.execute(f"PRAGMA cache_size={BULK_CACHE_KIB}")
        try:
            # The project id is ours (an integer), so it goes in the statement, not in each row.
            cursor.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({int(project_id)}, {marks})", rows
            )
        finally:
            cursor.execute(f"PRAGMA cache_size={int(previous)}")

    def bulk_update(
        self, project_id: int, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]
    ) -> int:
        """Set `columns` of many rows, encoded by `encode_updates` from the same `columns`; how
        many rows were found."""
        if not rows:
            return 0
        assignments = ", ".join(f"{column} = {self._placeholder(column)}" for column in columns)
        sql = (
            f"UPDATE {table} SET {assignments} "
            f"WHERE project_id = {int(project_id)} AND id = {self._placeholder('id')}"
        )
        cursor = self.session.connection().connection.driver_connection.cursor()
        try:
            cursor.executemany(sql, rows)
            results_now(self.session)
            # Both drivers count the rows of every statement of an executemany.
            return int(cursor.rowcount)
        finally:
            cursor.close()

    def _placeholder(self, column: str) -> str:
        """The driver's parameter mark for a value of `column` (JSON text cast on PostgreSQL)."""
        if self.dialect != "postgresql":
            return "?"
        return "CAST(%s AS jsonb)" if column in JSON_COLUMNS else "%s"
