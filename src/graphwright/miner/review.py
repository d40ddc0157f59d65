"""What a person sees before deciding on a pending publish: the JSON-LD it would publish, checked
now against the knowledge base and the run's domain shapes, with its confidence breakdown.

The check runs at review time, not only when the agent proposed it, because the knowledge base
may have changed since (a duplicate published meanwhile, a linked asset revised).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import BaseStore

from graphwright.errors import InvalidInput
from graphwright.knowledge.schemas import KbModel
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner import tags as domain
from graphwright.miner.schemas import PUBLISH_TOOL, PendingAction, RunView
from graphwright.miner.signals import tag_shapes
from graphwright.miner.validation import ValidationReport, validate_candidate

BOOKKEEPING_KEPT = ("linkedAssets", "provenance")


class ActionReview(KbModel):
    action: PendingAction
    jsonld: Any = None
    report: ValidationReport | None = None
    problem: str | None = None


def _matching_candidate(
    jsonld: Mapping[str, Any], candidates: list[dict[str, Any]]
) -> Mapping[str, Any] | None:
    """The run's candidate this publish came from: same @id, else same name."""
    for key in ("@id", "name"):
        value = jsonld.get(key)
        if value is not None:
            found = next((c for c in candidates if c.get(key) == value), None)
            if found is not None:
                return found
    return None


async def review_pending(
    run: RunView, *, store: BaseStore, knowledge: KnowledgeService
) -> list[ActionReview]:
    """Each pending action of `run`, with the publish's JSON-LD validated now against
    `knowledge` and the shapes in the tags' notes in `store`."""
    candidates = list((run.result or {}).get("candidateAssets") or [])
    shapes = await tag_shapes(store, domain.memory_tags(run.domain_tags))
    reviews = []
    for raw in run.pending:
        action = PendingAction.model_validate(raw)
        jsonld = action.args.get("jsonld")
        if action.action_name != PUBLISH_TOOL or not isinstance(jsonld, Mapping):
            reviews.append(ActionReview(action=action, jsonld=jsonld))
            continue
        source = _matching_candidate(jsonld, candidates) or {}
        candidate = {**jsonld, **{k: source[k] for k in BOOKKEEPING_KEPT if k in source}}
        try:
            report = await validate_candidate(candidate, reader=knowledge, shapes_ttl=shapes)
        except InvalidInput as exc:  # the tags' shapes.ttl is broken: say so, decide anyway
            reviews.append(ActionReview(action=action, jsonld=jsonld, problem=str(exc)))
            continue
        reviews.append(ActionReview(action=action, jsonld=jsonld, report=report))
    return reviews
