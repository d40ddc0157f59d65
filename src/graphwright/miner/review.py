"""What a person sees before deciding on a pending publish: the JSON-LD it would publish (the
candidate without its bookkeeping, exactly as validated), and the checks and confidence it is
offered on, with their breakdown."""

from __future__ import annotations

from typing import Any

from graphwright.knowledge.schemas import KbModel
from graphwright.miner.schemas import PendingAction, RunView
from graphwright.miner.validation import ValidationReport


class ActionReview(KbModel):
    action: PendingAction
    jsonld: Any = None
    report: ValidationReport | None = None
    problem: str | None = None


def reviews_of(run: RunView) -> list[ActionReview]:
    reviews = []
    for raw in run.pending:
        action = PendingAction.model_validate(raw)
        signals = action.trust_signals or {}
        report = ValidationReport.model_validate(signals) if "checks" in signals else None
        reviews.append(
            ActionReview(
                action=action,
                jsonld=action.args.get("jsonld"),
                report=report,
                problem=signals.get("error"),
            )
        )
    return reviews
