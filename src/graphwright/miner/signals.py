"""Trust signals of a candidate, from checks in code (`validation.validate_candidate`): the
confidence and its breakdown, duplicates and missing links. What the model claimed is kept
beside them as `modelConfidence`, never instead of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import BaseStore

from graphwright.errors import InvalidInput
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.memory import SHAPES_NOTE, MemoryNotes
from graphwright.miner.validation import ValidationReport, validate_candidate


async def tag_shapes(store: BaseStore, tags: Sequence[str]) -> list[str]:
    """The `shapes.ttl` notes of the run's tags, those that have one."""
    notes = MemoryNotes(store)
    texts = [await notes.text(tag, SHAPES_NOTE) for tag in tags]
    return [text for text in texts if text]


async def checked(
    candidate: Mapping[str, Any],
    *,
    knowledge: KnowledgeService,
    shapes: Sequence[str],
    revision_of: str | None = None,
) -> tuple[ValidationReport, dict[str, Any]]:
    """The candidate's validation report, and its `trustSignals`: the report without the raw
    SHACL results, with `modelConfidence` when the model claimed one. When the tags'
    `shapes.ttl` is broken, the candidate is checked without it and `error` names it."""
    error = None
    try:
        report = await validate_candidate(
            candidate, reader=knowledge, shapes_ttl=list(shapes), revision_of=revision_of
        )
    except InvalidInput as exc:
        error = str(exc)
        report = await validate_candidate(candidate, reader=knowledge, revision_of=revision_of)
    signals = report.model_dump(mode="json", by_alias=True, exclude={"shape_results"})
    if error is not None:
        signals["error"] = error
    claimed = candidate.get("trustSignals")
    if isinstance(claimed, Mapping) and isinstance(claimed.get("confidence"), int | float):
        signals["modelConfidence"] = claimed["confidence"]
    return report, signals
