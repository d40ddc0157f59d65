"""The A2A artifact store: its rules written once, over an in-memory and a SQL repository.

Rules (seed 002, improved):
- replace (`append=false`): each kind present in the new parts replaces all parts of that kind;
  consecutive new text parts are concatenated; parts of other kinds stay.
- append (`append=true`): new text is concatenated onto the existing text; data, raw and url
  parts are added as separate parts; kinds not yet present are added.
- `lastChunk=true` closes the artifact: a later append is refused with `Conflict` and changes
  nothing. A replace is still allowed (it is a fresh write) and leaves the artifact closed only if
  it is itself a last chunk.
Every write is one transaction that also records a version and an event with the next sequence
number of the artifact's context; `update_many` writes several artifacts in one transaction, all or
none. A delete records a tombstone event. Events are published after the commit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from graphwright.artifacts.events import ArtifactEvent, EventHub, Operation, make_event
from graphwright.artifacts.models import (
    ArtifactSummary,
    ArtifactVersion,
    Header,
    StoredArtifact,
    VersionRecord,
    utcnow,
)
from graphwright.artifacts.repository import SqlRepository
from graphwright.core.artifacts import (
    A2AModel,
    Artifact,
    Chunk,
    Part,
    PartKind,
    assemble,
    plan_update,
)
from graphwright.core.nul import nul_path
from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput, NotFound


class ArtifactWrite(A2AModel):
    """What a write did; small on purpose, so an append never reads the whole artifact back."""

    artifact_id: str
    context_id: str
    task_id: str | None = None
    operation: Operation
    version: int
    sequence: int
    closed: bool


class Repository(Protocol):
    """The storage primitives one transaction offers; the rules live in `ArtifactStore`."""

    def lock(self, artifact_id: str) -> Header | None: ...

    def insert(self, header: Header) -> None: ...

    def save(self, header: Header) -> None: ...

    def drop_chunks(self, artifact_id: str, kinds: frozenset[PartKind], version: int) -> None: ...

    def add_chunks(self, artifact_id: str, version: int, chunks: Sequence[Chunk]) -> None: ...

    def live_chunks(self, artifact_id: str, version: int | None = None) -> list[Chunk]: ...

    def next_sequence(self, context_id: str) -> int: ...

    def add_version(self, artifact_id: str, record: VersionRecord) -> None: ...

    def version(self, artifact_id: str, version: int) -> VersionRecord | None: ...

    def versions(self, artifact_id: str) -> list[VersionRecord]: ...

    def add_event(self, event: ArtifactEvent) -> None: ...

    def events(self, context_id: str, after_sequence: int) -> list[ArtifactEvent]: ...

    def headers(self, context_id: str | None, task_id: str | None) -> list[Header]: ...

    def delete(self, artifact_id: str) -> None: ...


class ArtifactStore(ABC):
    """Where artifacts live: the store rules, written once over `Repository` transactions.
    Writes raise Conflict (closed artifact, duplicate id) and NotFound."""

    def __init__(self, hub: EventHub | None = None) -> None:
        self.hub = hub or EventHub()

    @abstractmethod
    def _write(self) -> AbstractContextManager[Repository]:
        """One write transaction."""

    @abstractmethod
    def _read(self) -> AbstractContextManager[Repository]:
        """One read transaction."""

    def create(
        self,
        artifact: Artifact,
        *,
        context_id: str,
        task_id: str | None = None,
        last_chunk: bool = False,
    ) -> ArtifactWrite:
        with self._write() as repo:
            if repo.lock(artifact.artifact_id) is not None:
                raise Conflict(
                    f"An artifact with id '{artifact.artifact_id}' already exists; update it or "
                    "choose another id"
                )
            write, event = self._apply(repo, None, artifact, False, last_chunk, context_id, task_id)
        self.hub.publish([event])
        return write

    def update(
        self,
        artifact: Artifact,
        *,
        append: bool,
        last_chunk: bool = False,
        context_id: str | None = None,
        task_id: str | None = None,
    ) -> ArtifactWrite:
        """Update an artifact; with a `context_id`, a missing artifact is created there."""
        with self._write() as repo:
            write, event = self._update(repo, artifact, append, last_chunk, context_id, task_id)
        self.hub.publish([event])
        return write

    def update_many(
        self,
        artifacts: Sequence[Artifact],
        *,
        append: bool,
        context_id: str,
        task_id: str | None = None,
    ) -> list[ArtifactWrite]:
        """`update` for each artifact in turn, in one transaction: if one is refused, none is
        stored and no event is sent."""
        with self._write() as repo:
            applied = [
                self._update(repo, artifact, append, False, context_id, task_id)
                for artifact in artifacts
            ]
        self.hub.publish([event for _, event in applied])
        return [write for write, _ in applied]

    def _update(
        self,
        repo: Repository,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
        context_id: str | None,
        task_id: str | None,
    ) -> tuple[ArtifactWrite, ArtifactEvent]:
        current = repo.lock(artifact.artifact_id)
        if current is None and context_id is None:
            raise NotFound(f"No artifact '{artifact.artifact_id}'")
        if current is not None:
            _existing(current, artifact.artifact_id, context_id)
            _check_open(current, append)
        return self._apply(repo, current, artifact, append, last_chunk, context_id or "", task_id)

    def _apply(
        self,
        repo: Repository,
        current: Header | None,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
        context_id: str,
        task_id: str | None,
    ) -> tuple[ArtifactWrite, ArtifactEvent]:
        _check_no_nul(artifact)
        plan = plan_update(artifact.parts, append=append)
        now = utcnow()
        header = _next_header(current, artifact, context_id, task_id, last_chunk, now)
        operation: Operation = "create" if current is None else "append" if append else "replace"
        if current is None:
            repo.insert(header)
        else:
            repo.save(header)
            if plan.drop_kinds:
                repo.drop_chunks(header.artifact_id, plan.drop_kinds, header.version)
        repo.add_chunks(header.artifact_id, header.version, plan.chunks)
        if append:
            parts = [chunk.part for chunk in plan.chunks]
        else:
            parts = assemble(repo.live_chunks(header.artifact_id))
        sequence = repo.next_sequence(header.context_id)
        repo.add_version(
            header.artifact_id,
            VersionRecord(
                version=header.version,
                sequence=sequence,
                operation=operation,
                last_chunk=last_chunk,
                name=header.name,
                description=header.description,
                metadata=header.metadata,
                extensions=header.extensions,
                created_at=now,
            ),
        )
        event = make_event(
            context_id=header.context_id,
            task_id=header.task_id,
            artifact=header.artifact(parts),
            append=append,
            last_chunk=last_chunk,
            sequence=sequence,
            version=header.version,
            operation=operation,
        )
        repo.add_event(event)
        write = ArtifactWrite(
            artifact_id=header.artifact_id,
            context_id=header.context_id,
            task_id=header.task_id,
            operation=operation,
            version=header.version,
            sequence=sequence,
            closed=header.closed,
        )
        return write, event

    def get(
        self, artifact_id: str, *, version: int | None = None, context_id: str | None = None
    ) -> StoredArtifact:
        with self._read() as repo:
            header = _existing(repo.lock(artifact_id), artifact_id, context_id)
            if version is not None and version != header.version:
                header = _at_version(header, version, repo.version(artifact_id, version))
            parts = assemble(repo.live_chunks(artifact_id, version))
        return StoredArtifact(
            artifact=header.artifact(parts),
            context_id=header.context_id,
            task_id=header.task_id,
            version=header.version,
            closed=header.closed,
            updated_at=header.updated_at,
        )

    def list(
        self, *, context_id: str | None = None, task_id: str | None = None
    ) -> list[ArtifactSummary]:
        with self._read() as repo:
            return [header.summary() for header in repo.headers(context_id, task_id)]

    def delete(self, artifact_id: str, *, context_id: str | None = None) -> None:
        """Delete the artifact with its versions; the context's log gets a tombstone event."""
        with self._write() as repo:
            header = _existing(repo.lock(artifact_id), artifact_id, context_id)
            event = make_event(
                context_id=header.context_id,
                task_id=header.task_id,
                artifact=header.artifact([Part(text="")]),  # A2A wants at least one part
                append=False,
                last_chunk=True,
                sequence=repo.next_sequence(header.context_id),
                version=header.version + 1,
                operation="delete",
            )
            repo.add_event(event)
            repo.delete(artifact_id)
        self.hub.publish([event])

    def versions(self, artifact_id: str, *, context_id: str | None = None) -> list[ArtifactVersion]:
        with self._read() as repo:
            _existing(repo.lock(artifact_id), artifact_id, context_id)
            return [record.public() for record in repo.versions(artifact_id)]

    def events(self, context_id: str, *, after_sequence: int = 0) -> list[ArtifactEvent]:
        with self._read() as repo:
            return repo.events(context_id, after_sequence)

    def subscribe(
        self, context_id: str, *, after_sequence: int = 0
    ) -> AsyncIterator[ArtifactEvent]:
        """Replay the log after `after_sequence`, then follow live events, in sequence order."""
        return self.hub.subscribe(
            context_id,
            lambda after: self.events(context_id, after_sequence=after),
            after_sequence=after_sequence,
        )


def _existing(header: Header | None, artifact_id: str, context_id: str | None) -> Header:
    if header is None or (context_id is not None and header.context_id != context_id):
        raise NotFound(f"No artifact '{artifact_id}' in this conversation")
    return header


def _check_no_nul(artifact: Artifact) -> None:
    """PostgreSQL cannot store NUL in text or JSON, so no backend takes it (raw parts can)."""
    where = nul_path(artifact.model_dump(exclude={"parts": {"__all__": {"raw"}}}))
    if where is not None:
        raise InvalidInput(
            f"Artifact '{artifact.artifact_id}' contains a NUL character (\\u0000) in {where}, "
            "which cannot be stored. Remove it, or send binary content as a raw part (base64)."
        )


def _check_open(current: Header, append: bool) -> None:
    if append and current.closed:
        raise Conflict(
            f"Artifact '{current.artifact_id}' is closed: its last chunk arrived at version "
            f"{current.version}, so it takes no more appends. Send append=false to replace its "
            "parts, or write a new artifact.",
            current_version=current.version,
        )


def _next_header(
    current: Header | None,
    artifact: Artifact,
    context_id: str,
    task_id: str | None,
    last_chunk: bool,
    now: datetime,
) -> Header:
    if current is None:
        return Header(
            artifact_id=artifact.artifact_id,
            context_id=context_id,
            task_id=task_id,
            media_type=artifact.media_type,
            name=artifact.name,
            description=artifact.description,
            metadata=artifact.metadata,
            extensions=artifact.extensions,
            version=1,
            closed=last_chunk,
            updated_at=now,
        )
    # A chunk that leaves a field out keeps the stored value.
    return replace(
        current,
        task_id=task_id or current.task_id,
        media_type=current.media_type or artifact.media_type,
        name=artifact.name if artifact.name is not None else current.name,
        description=(
            artifact.description if artifact.description is not None else current.description
        ),
        metadata=artifact.metadata if artifact.metadata is not None else current.metadata,
        extensions=artifact.extensions if artifact.extensions is not None else current.extensions,
        version=current.version + 1,
        closed=last_chunk,
        updated_at=now,
    )


def _at_version(header: Header, version: int, record: VersionRecord | None) -> Header:
    if record is None:
        raise NotFound(
            f"Artifact '{header.artifact_id}' has no version {version}; its versions run from 1 "
            f"to {header.version}"
        )
    return replace(
        header,
        name=record.name,
        description=record.description,
        metadata=record.metadata,
        extensions=record.extensions,
        version=record.version,
        closed=record.last_chunk,
        updated_at=record.created_at,
    )


class SqlArtifactStore(ArtifactStore):
    """SQLite by default, PostgreSQL by URL. On PostgreSQL the artifact row is locked for the
    write; on SQLite the write transaction holds the database write lock."""

    def __init__(self, database: Database, hub: EventHub | None = None) -> None:
        super().__init__(hub)
        self._database = database

    @contextmanager
    def _write(self) -> Iterator[Repository]:
        with self._database.write() as session:
            yield SqlRepository(session, for_update=True)

    @contextmanager
    def _read(self) -> Iterator[Repository]:
        with self._database.read() as session:
            yield SqlRepository(session, for_update=False)
