"""What became of each of a run's candidates: the checks it was offered on (never checked again
once offered, so that a published candidate is not its own duplicate) and its publication:
waiting, published (with its UAL), rejected, dropped by the duplicate rule, or not proposed.

The ledger is the run's decision records and its pending actions; a candidate is matched to
its entry by the canonical hash of the document it publishes, else by its @id or identifier.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio

from graphwright.errors import InvalidInput
from graphwright.knowledge.jsonld import canonical_hash
from graphwright.miner.publishable import publishable_document
from graphwright.miner.schemas import PendingAction
from graphwright.miner.validation import duplicate_keys

Entry = dict[str, Any]
Check = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]


def entries(
    decisions: Sequence[Mapping[str, Any]], pending: Sequence[PendingAction]
) -> list[Entry]:
    """Each publish the run proposed, with its checks and what it came to."""
    found = [dict(record) for record in decisions if record.get("trustSignals") is not None]
    for action in pending:
        found.append(
            {
                "actionId": action.id,
                "requestId": action.request_id,
                "revisionOf": action.revision_of,
                "trustSignals": action.trust_signals,
                "waiting": True,
            }
        )
    return found


def publication(entry: Mapping[str, Any]) -> dict[str, Any]:
    if entry.get("waiting"):
        shown = {"status": "waiting", "requestId": entry["requestId"]}
    elif entry.get("dropped"):
        shown = {"status": "dropped", "reason": entry["message"]}
    elif entry["type"] == "reject":
        shown = {
            "status": "rejected",
            "requestId": entry.get("requestId"),
            "by": entry["by"],
            "reason": entry.get("message"),
        }
    else:
        shown = {
            "status": "published",
            "requestId": entry["requestId"],
            "ual": entry.get("ual"),
            "by": entry["by"],
        }
    if entry.get("revisionOf"):
        shown["revisionOf"] = entry["revisionOf"]
    return shown


def _identity(candidate: Mapping[str, Any]) -> tuple[str | None, set[str]]:
    document = publishable_document(candidate)
    try:
        return canonical_hash(document), set(duplicate_keys(document))
    except InvalidInput:
        return None, set()


def _keys(entry: Mapping[str, Any]) -> set[str]:
    return set(entry.get("keys") or [])


async def report(
    candidates: Sequence[dict[str, Any]], ledger: Sequence[Entry], check: Check
) -> None:
    """Give each candidate its `trustSignals` and `publication`: from its ledger entry, or
    checked now (`check`) when it was never proposed for publishing."""
    for candidate in candidates:
        digest, keys = await anyio.to_thread.run_sync(_identity, candidate)
        entry = next(
            (
                e
                for e in ledger
                if digest and (e["trustSignals"] or {}).get("documentHash") == digest
            ),
            None,
        ) or next((e for e in ledger if keys & _keys(e)), None)
        if entry is None:
            candidate["trustSignals"] = await check(candidate)
            candidate["publication"] = {"status": "not proposed"}
            continue
        signals = dict(entry["trustSignals"] or {})
        claimed = candidate.get("trustSignals")
        if isinstance(claimed, Mapping) and isinstance(claimed.get("confidence"), int | float):
            signals["modelConfidence"] = claimed["confidence"]
        candidate["trustSignals"] = signals
        candidate["publication"] = publication(entry)
