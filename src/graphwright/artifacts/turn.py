"""Gather the drafts of every tool call in a turn into one clean set of chat artifacts.

A registry keyed by MIME type says how drafts of one type combine: knowledge graphs merge into one
artifact, bibliographies into one de-duplicated list, markdown keeps one artifact per source, and
anything else passes through once per distinct content. With carry-over, the knowledge graph and
the bibliography of earlier turns seed this turn's, and the result is a new version of the same
artifact (same `artifactId`, new `id`, `metadata.previousVersionId` pointing at the prior `id`).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

import orjson

from graphwright.artifacts.collectors import (
    BIBLIOGRAPHY_TITLE,
    KNOWLEDGE_GRAPH_TITLE,
    Collected,
    Draft,
    ErrorNote,
)
from graphwright.core.artifacts import (
    BIBLIOGRAPHY,
    KNOWLEDGE_GRAPH,
    MARKDOWN,
    VERSION_ID_KEY,
    Artifact,
    ChatArtifact,
    Part,
    to_chat,
)
from graphwright.core.bibliography import CitationSet
from graphwright.core.merge import GraphAccumulator
from graphwright.errors import GraphwrightError

PREVIOUS_VERSION_KEY = "previousVersionId"
CARRIED_TYPES = frozenset({KNOWLEDGE_GRAPH, BIBLIOGRAPHY})
_PRIORITY = {BIBLIOGRAPHY: 0, KNOWLEDGE_GRAPH: 1}


class Combiner(Protocol):
    """Combines the drafts of one MIME type. `add` raises GraphwrightError or ValueError for a
    draft it cannot use; `results` gives (arrival index, artifact) pairs."""

    def add(self, draft: Draft, arrival: int) -> None: ...

    def results(self) -> list[tuple[int, Artifact]]: ...


CombinerFactory = Callable[[Sequence[ChatArtifact]], Combiner]
"""Builds a combiner for one turn from the carried-over chat artifacts of its type."""


class _Versioned:
    """Shared by the carried types: one artifact per turn, versioned against the prior turn's."""

    title: str

    def __init__(self, previous: Sequence[ChatArtifact]) -> None:
        self._previous = previous[-1] if previous else None
        self._arrival: int | None = None
        self._name: str | None = None

    def _touch(self, draft: Draft, arrival: int) -> None:
        if self._arrival is None:
            self._arrival = arrival
            self._name = draft.artifact.name

    def _artifact(self, part: Part) -> list[tuple[int, Artifact]]:
        if self._arrival is None:
            return []
        metadata: dict[str, Any] = {}
        artifact_id = str(uuid.uuid4())
        if self._previous is not None:
            artifact_id = self._previous.artifact_id
            metadata[VERSION_ID_KEY] = str(uuid.uuid4())
            metadata[PREVIOUS_VERSION_KEY] = self._previous.id
        name = self._previous.title if self._previous is not None else self._name or self.title
        artifact = Artifact(artifact_id=artifact_id, name=name, parts=[part], metadata=metadata)
        return [(self._arrival, artifact)]


class KnowledgeGraphCombiner(_Versioned):
    """Every graph of the turn (and the carried one) merged by the core GraphAccumulator."""

    title = KNOWLEDGE_GRAPH_TITLE

    def __init__(self, previous: Sequence[ChatArtifact]) -> None:
        super().__init__(previous)
        self._graphs = GraphAccumulator()
        if self._previous is not None:
            self._graphs.add(self._previous.content, result_id=self._previous.id)

    def add(self, draft: Draft, arrival: int) -> None:
        self._graphs.add(_data(draft), result_id=draft.origin.call_id)
        self._touch(draft, arrival)

    def results(self) -> list[tuple[int, Artifact]]:
        return self._artifact(Part(data=self._graphs.to_graph(), media_type=KNOWLEDGE_GRAPH))


class BibliographyCombiner(_Versioned):
    """All citations of the turn (and the carried ones), de-duplicated by the core CitationSet."""

    title = BIBLIOGRAPHY_TITLE

    def __init__(self, previous: Sequence[ChatArtifact]) -> None:
        super().__init__(previous)
        self._citations = CitationSet()
        if self._previous is not None:
            carried = orjson.loads(self._previous.content)
            self._citations.add(carried, result_id=self._previous.id)

    def add(self, draft: Draft, arrival: int) -> None:
        citations = _data(draft)
        if not isinstance(citations, list):
            raise ValueError("a bibliography must be a list of citation objects")
        self._citations.add(citations, result_id=draft.origin.call_id)
        self._touch(draft, arrival)

    def results(self) -> list[tuple[int, Artifact]]:
        return self._artifact(Part(data=self._citations.to_list(), media_type=BIBLIOGRAPHY))


class BySourceCombiner:
    """One artifact per source (`metadata.source` or `metadata.url`); a refetch of the same source
    replaces the earlier content in the earlier slot. Drafts without a source pass through."""

    def __init__(self, previous: Sequence[ChatArtifact]) -> None:
        self._by_key: dict[str, tuple[int, Artifact]] = {}

    def add(self, draft: Draft, arrival: int) -> None:
        metadata = draft.artifact.metadata or {}
        source = metadata.get("source") or metadata.get("url")
        key = f"source:{source}" if source else f"content:{content_hash(draft.artifact)}"
        earlier = self._by_key.get(key)
        if earlier is None:
            self._by_key[key] = (arrival, draft.artifact)
            return
        slot, kept = earlier
        self._by_key[key] = (
            slot,
            draft.artifact.model_copy(update={"artifact_id": kept.artifact_id}),
        )

    def results(self) -> list[tuple[int, Artifact]]:
        return list(self._by_key.values())


class PassThroughCombiner:
    """Drafts unchanged, once per distinct content."""

    def __init__(self, previous: Sequence[ChatArtifact]) -> None:
        self._seen: dict[str, tuple[int, Artifact]] = {}

    def add(self, draft: Draft, arrival: int) -> None:
        self._seen.setdefault(content_hash(draft.artifact), (arrival, draft.artifact))

    def results(self) -> list[tuple[int, Artifact]]:
        return list(self._seen.values())


DEFAULT_COMBINERS: Mapping[str, CombinerFactory] = MappingProxyType(
    {
        KNOWLEDGE_GRAPH: KnowledgeGraphCombiner,
        BIBLIOGRAPHY: BibliographyCombiner,
        MARKDOWN: BySourceCombiner,
    }
)


def content_hash(artifact: Artifact) -> str:
    """A digest of the parts' content and media types (not names or ids)."""
    digest = hashlib.sha256()
    for part in artifact.parts:
        payload = part.model_dump(mode="json", by_alias=True, exclude_none=True)
        payload.pop("metadata", None)
        digest.update(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


def _data(draft: Draft) -> Any:
    part = draft.artifact.parts[0]
    if part.kind == "data":
        return part.data
    if part.kind == "text":
        return part.text
    raise ValueError(f"a {part.media_type} artifact must carry JSON data, not a {part.kind} part")


class TurnArtifacts:
    """The artifacts of one turn. Feed it every tool call's `Collected`, then call `finalize()`.

    `previous` is the chat view of the carried-over artifacts (the latest knowledge graph and
    bibliography of the conversation); pass nothing to start afresh.
    """

    def __init__(self, *, previous: Iterable[ChatArtifact] = ()) -> None:
        self._previous: dict[str, list[ChatArtifact]] = {}
        for chat in previous:
            self._previous.setdefault(chat.type, []).append(chat)
        self._combiners: dict[str, Combiner] = {}
        self._arrivals = 0
        self.errors: list[ErrorNote] = []

    def add_result(self, collected: Collected) -> None:
        self.errors.extend(collected.errors)
        for draft in collected.drafts:
            self.add(draft)

    def add(self, draft: Draft) -> None:
        media_type = draft.artifact.media_type or "application/octet-stream"
        combiner = self._combiner(media_type)
        try:
            combiner.add(draft, self._arrivals)
        except (GraphwrightError, ValueError) as exc:
            what = f"{media_type} artifact '{draft.artifact.name or draft.artifact.artifact_id}'"
            self.errors.append(ErrorNote(draft.origin, what, str(exc)))
            return
        self._arrivals += 1

    def _combiner(self, media_type: str) -> Combiner:
        combiner = self._combiners.get(media_type)
        if combiner is None:
            factory = DEFAULT_COMBINERS.get(media_type, PassThroughCombiner)
            combiner = factory(self._previous.get(media_type, []))
            self._combiners[media_type] = combiner
        return combiner

    def artifacts(self) -> list[Artifact]:
        """The A2A view, in display order: bibliography, knowledge graph, the rest by arrival."""
        ranked = [
            (_PRIORITY.get(media_type, len(_PRIORITY)), arrival, artifact)
            for media_type, combiner in self._combiners.items()
            for arrival, artifact in combiner.results()
        ]
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [artifact for _, _, artifact in ranked]

    def finalize(self) -> list[ChatArtifact]:
        """The chat view with `position` set in display order."""
        return [to_chat(artifact, position) for position, artifact in enumerate(self.artifacts())]
