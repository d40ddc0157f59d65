"""The artifact store in memory, for tests and a server run without a database: the same rules
as `SqlArtifactStore` (`store.py`), over a repository that records how to undo each change."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from graphwright.artifacts.events import ArtifactEvent, EventHub
from graphwright.artifacts.models import Header, VersionRecord
from graphwright.artifacts.store import ArtifactStore, Repository
from graphwright.core.artifacts import Chunk, PartKind


@dataclass(slots=True)
class _MemoryChunk:
    chunk: Chunk
    added_version: int
    dropped_version: int | None = None

    def live_at(self, version: int | None) -> bool:
        if version is None:
            return self.dropped_version is None
        return self.added_version <= version and (
            self.dropped_version is None or self.dropped_version > version
        )


@dataclass(slots=True)
class _MemoryArtifact:
    header: Header
    chunks: list[_MemoryChunk]
    versions: list[VersionRecord]


class _MemoryRepository:
    """Every change records how to undo it, so a failed transaction can be rolled back."""

    def __init__(self) -> None:
        self.artifacts: dict[str, _MemoryArtifact] = {}
        self.sequences: dict[str, int] = {}
        self.log: dict[str, list[ArtifactEvent]] = {}
        self.undo: list[Callable[[], object]] = []

    def rollback(self) -> None:
        while self.undo:
            self.undo.pop()()

    def lock(self, artifact_id: str) -> Header | None:
        entry = self.artifacts.get(artifact_id)
        return entry.header if entry else None

    def insert(self, header: Header) -> None:
        self.artifacts[header.artifact_id] = _MemoryArtifact(header, [], [])
        self.undo.append(partial(self.artifacts.pop, header.artifact_id))

    def save(self, header: Header) -> None:
        entry = self.artifacts[header.artifact_id]
        self.undo.append(partial(setattr, entry, "header", entry.header))
        entry.header = header

    def drop_chunks(self, artifact_id: str, kinds: frozenset[PartKind], version: int) -> None:
        for stored in self.artifacts[artifact_id].chunks:
            if stored.dropped_version is None and stored.chunk.part.kind in kinds:
                stored.dropped_version = version
                self.undo.append(partial(setattr, stored, "dropped_version", None))

    def add_chunks(self, artifact_id: str, version: int, chunks: Sequence[Chunk]) -> None:
        stored = self.artifacts[artifact_id].chunks
        self.undo.append(partial(stored.__delitem__, slice(len(stored), None)))
        stored.extend(_MemoryChunk(c, version) for c in chunks)

    def live_chunks(self, artifact_id: str, version: int | None = None) -> list[Chunk]:
        stored = self.artifacts[artifact_id].chunks
        return [entry.chunk for entry in stored if entry.live_at(version)]

    def next_sequence(self, context_id: str) -> int:
        previous = self.sequences.get(context_id, 0)
        self.undo.append(partial(self.sequences.__setitem__, context_id, previous))
        self.sequences[context_id] = previous + 1
        return previous + 1

    def add_version(self, artifact_id: str, record: VersionRecord) -> None:
        records = self.artifacts[artifact_id].versions
        records.append(record)
        self.undo.append(records.pop)

    def version(self, artifact_id: str, version: int) -> VersionRecord | None:
        records = self.artifacts[artifact_id].versions
        return records[version - 1] if 1 <= version <= len(records) else None

    def versions(self, artifact_id: str) -> list[VersionRecord]:
        return list(self.artifacts[artifact_id].versions)

    def add_event(self, event: ArtifactEvent) -> None:
        events = self.log.setdefault(event.context_id, [])
        events.append(event)
        self.undo.append(events.pop)

    def events(self, context_id: str, after_sequence: int) -> list[ArtifactEvent]:
        return [e for e in self.log.get(context_id, []) if e.sequence > after_sequence]

    def headers(self, context_id: str | None, task_id: str | None) -> list[Header]:
        return [
            entry.header
            for entry in self.artifacts.values()
            if (context_id is None or entry.header.context_id == context_id)
            and (task_id is None or entry.header.task_id == task_id)
        ]

    def delete(self, artifact_id: str) -> None:
        entry = self.artifacts.pop(artifact_id)
        self.undo.append(partial(self.artifacts.__setitem__, artifact_id, entry))


class InMemoryArtifactStore(ArtifactStore):
    """For tests and a server run without a database. A lock serialises the transactions, and a
    transaction that raises is rolled back, so a refused write changes nothing."""

    def __init__(self, hub: EventHub | None = None) -> None:
        super().__init__(hub)
        self._repository = _MemoryRepository()
        self._lock = threading.RLock()

    @contextmanager
    def _write(self) -> Iterator[Repository]:
        with self._lock:
            try:
                yield self._repository
            except BaseException:
                self._repository.rollback()
                raise
            finally:
                self._repository.undo.clear()

    @contextmanager
    def _read(self) -> Iterator[Repository]:
        with self._lock:
            yield self._repository
