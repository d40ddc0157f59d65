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
from graphwright.miner.validation import validate_candidate


async def tag_shapes(store: BaseStore, tags: Sequence[str]) -> list[str]:
    """The `shapes.ttl` notes of the run's tags, those that have one."""
    notes = MemoryNotes(store)
    texts = [await notes.text(tag, SHAPES_NOTE) for tag in tags]
    return [text for text in texts if text]


async def trust_signals(
    candidate: Mapping[str, Any], *, knowledge: KnowledgeService, shapes: Sequence[str]
) -> dict[str, Any]:
    claimed = candidate.get("trustSignals")
    signals: dict[str, Any] = {}
    if isinstance(claimed, Mapping) and isinstance(claimed.get("confidence"), int | float):
        signals["modelConfidence"] = claimed["confidence"]
    try:
        report = await validate_candidate(candidate, reader=knowledge, shapes_ttl=list(shapes))
    except InvalidInput as exc:  # the tags' shapes.ttl is broken: say so
        return {**signals, "confidence": 0.0, "valid": False, "error": str(exc)}
    checked = report.model_dump(mode="json", by_alias=True, exclude={"shape_results"})
    return {**checked, **signals}
