"""SQL for the artifact store: the storage primitives of one transaction, nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from sqlalchemy import bindparam, delete, insert, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from graphwright.artifacts.events import ArtifactEvent
from graphwright.artifacts.models import (
    ArtifactChunkRow,
    ArtifactContextRow,
    ArtifactEventRow,
    ArtifactRow,
    ArtifactVersionRow,
    Header,
    VersionRecord,
    utcnow,
)
from graphwright.core.artifacts import Chunk, Part, PartKind

_chunks = ArtifactChunkRow.__table__
_versions = ArtifactVersionRow.__table__
_events = ArtifactEventRow.__table__
_artifacts = ArtifactRow.__table__
_contexts = ArtifactContextRow.__table__


def _columns(record: type) -> tuple[str, ...]:
    """A record's fields, which are named as the columns of its table."""
    return tuple(field.name for field in fields(record))


_HEADER_COLUMNS = _columns(Header)
# What a save may change: everything but the key.
_HEADER_FIELDS = tuple(name for name in _HEADER_COLUMNS if name != "artifact_id")
_VERSION_COLUMNS = _columns(VersionRecord)

# Built once: an append runs these on every call, and building a statement costs more than
# SQLite takes to run it.
_SELECT_HEADERS = select(*(_artifacts.c[name] for name in _HEADER_COLUMNS))
_SELECT_HEADER = _SELECT_HEADERS.where(_artifacts.c.artifact_id == bindparam("id"))
_LOCK_HEADER = _SELECT_HEADER.with_for_update()
_INSERT_HEADER = insert(_artifacts)
_UPDATE_HEADER = (
    update(_artifacts)
    .where(_artifacts.c.artifact_id == bindparam("id"))
    .values({column: bindparam(f"new_{column}") for column in _HEADER_FIELDS})
)
_INSERT_CHUNK = insert(_chunks)
_INSERT_VERSION = insert(_versions)
_INSERT_EVENT = insert(_events)
_SELECT_VERSIONS = select(*(_versions.c[name] for name in _VERSION_COLUMNS))


def _next_sequence_statement(dialect: str) -> Any:
    make_insert = pg_insert if dialect == "postgresql" else sqlite_insert
    statement = make_insert(_contexts).values(context_id=bindparam("id"), last_sequence=1)
    return statement.on_conflict_do_update(
        index_elements=[_contexts.c.context_id],
        set_={"last_sequence": _contexts.c.last_sequence + 1},
    ).returning(_contexts.c.last_sequence)


_NEXT_SEQUENCE = {name: _next_sequence_statement(name) for name in ("sqlite", "postgresql")}


class SqlRepository:
    def __init__(self, session: Session, *, for_update: bool) -> None:
        self._connection = session.connection()
        self._for_update = for_update

    def lock(self, artifact_id: str) -> Header | None:
        statement = _LOCK_HEADER if self._for_update else _SELECT_HEADER
        row = self._connection.execute(statement, {"id": artifact_id}).one_or_none()
        return Header(*row) if row is not None else None

    def insert(self, header: Header) -> None:
        self._connection.execute(_INSERT_HEADER, _values(header, _HEADER_COLUMNS))

    def save(self, header: Header) -> None:
        values = {f"new_{field}": getattr(header, field) for field in _HEADER_FIELDS}
        self._connection.execute(_UPDATE_HEADER, {"id": header.artifact_id, **values})

    def drop_chunks(self, artifact_id: str, kinds: frozenset[PartKind], version: int) -> None:
        self._connection.execute(
            update(_chunks)
            .where(
                _chunks.c.artifact_id == artifact_id,
                _chunks.c.dropped_version.is_(None),
                _chunks.c.kind.in_(sorted(kinds)),
            )
            .values(dropped_version=version)
        )

    def add_chunks(self, artifact_id: str, version: int, chunks: Sequence[Chunk]) -> None:
        self._connection.execute(
            _INSERT_CHUNK,
            [
                {
                    "artifact_id": artifact_id,
                    "added_version": version,
                    "kind": chunk.part.kind,
                    "joins": chunk.joins,
                    "part": chunk.part.to_json_dict(),
                }
                for chunk in chunks
            ],
        )

    def live_chunks(self, artifact_id: str, version: int | None = None) -> list[Chunk]:
        query = select(_chunks.c.part, _chunks.c.joins).where(_chunks.c.artifact_id == artifact_id)
        if version is None:
            query = query.where(_chunks.c.dropped_version.is_(None))
        else:
            query = query.where(
                _chunks.c.added_version <= version,
                or_(_chunks.c.dropped_version.is_(None), _chunks.c.dropped_version > version),
            )
        rows = self._connection.execute(query.order_by(_chunks.c.id))
        return [Chunk(Part.model_validate(part), joins=joins) for part, joins in rows]

    def next_sequence(self, context_id: str) -> int:
        """Take the context's next sequence number; the row lock orders concurrent writers."""
        statement = _NEXT_SEQUENCE[self._connection.dialect.name]
        return int(self._connection.execute(statement, {"id": context_id}).scalar_one())

    def add_version(self, artifact_id: str, record: VersionRecord) -> None:
        self._connection.execute(
            _INSERT_VERSION, {"artifact_id": artifact_id, **_values(record, _VERSION_COLUMNS)}
        )

    def version(self, artifact_id: str, version: int) -> VersionRecord | None:
        query = _SELECT_VERSIONS.where(
            _versions.c.artifact_id == artifact_id, _versions.c.version == version
        )
        row = self._connection.execute(query).one_or_none()
        return VersionRecord(*row) if row is not None else None

    def versions(self, artifact_id: str) -> list[VersionRecord]:
        query = _SELECT_VERSIONS.where(_versions.c.artifact_id == artifact_id)
        rows = self._connection.execute(query.order_by(_versions.c.version))
        return [VersionRecord(*row) for row in rows]

    def add_event(self, event: ArtifactEvent) -> None:
        self._connection.execute(
            _INSERT_EVENT,
            {
                "context_id": event.context_id,
                "sequence": event.sequence,
                "artifact_id": event.artifact.artifact_id,
                "payload": event.to_json_dict(),
                "created_at": utcnow(),
            },
        )

    def events(self, context_id: str, after_sequence: int) -> list[ArtifactEvent]:
        query = select(_events.c.payload).where(
            _events.c.context_id == context_id, _events.c.sequence > after_sequence
        )
        rows = self._connection.execute(query.order_by(_events.c.sequence)).scalars()
        return [ArtifactEvent.model_validate(payload) for payload in rows]

    def headers(self, context_id: str | None, task_id: str | None) -> list[Header]:
        query = _SELECT_HEADERS
        if context_id is not None:
            query = query.where(_artifacts.c.context_id == context_id)
        if task_id is not None:
            query = query.where(_artifacts.c.task_id == task_id)
        order = (_artifacts.c.created_at, _artifacts.c.artifact_id)
        return [Header(*row) for row in self._connection.execute(query.order_by(*order))]

    def delete(self, artifact_id: str) -> None:
        self._connection.execute(delete(_artifacts).where(_artifacts.c.artifact_id == artifact_id))


def _values(record: Header | VersionRecord, columns: Sequence[str]) -> dict[str, Any]:
    return {name: getattr(record, name) for name in columns}
