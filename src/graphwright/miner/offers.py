"""What a person is asked to approve. Each publish the agent proposes is checked, then either
filed as a publication request in the knowledge base's one queue (linked to its run), or
dropped with its reason when it would put into the knowledge base what is already there.

The duplicate rule (docs/miner.md):
- a candidate that shares no @id or identifier with a current asset is offered as new;
- one that shares them with the latest state of exactly one asset is offered as a revision of
  that asset, unless it says exactly what that state says (the same canonical hash): then it
  is dropped, as nothing new;
- one that shares them with several assets, only with states that later revisions replaced,
  or with a candidate of another run that waits for approval, is dropped.

The document filed is the candidate without its bookkeeping (`publishable_document`), exactly
as validated; the bookkeeping and the checks go into the request's details.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from graphwright.errors import InvalidInput
from graphwright.knowledge.jsonld import published_hash
from graphwright.knowledge.service import KnowledgeService
from graphwright.knowledge.ual import Ual
from graphwright.miner.publishable import bookkeeping, publishable_document
from graphwright.miner.schemas import PUBLISH_TOOL, PendingAction
from graphwright.miner.signals import checked
from graphwright.miner.validation import ValidationReport, duplicate_keys

MINER = "knowledge-miner"
WAITING_SCAN = 500  # pending requests compared with a new candidate


@dataclass
class Offers:
    offered: list[PendingAction] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)  # decision records


class Dropped(Exception):
    """A publish that is not offered to a person, and why."""

    def __init__(self, reason: str, signals: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.signals = signals


def matching_candidate(
    jsonld: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The run's candidate a publish came from: same @id, else same name."""
    for key in ("@id", "name"):
        value = jsonld.get(key)
        if value is not None:
            found = next((c for c in candidates if c.get(key) == value), None)
            if found is not None:
                return found
    return None


@dataclass
class Offering:
    """Judges and files the publishes of one run's segment."""

    knowledge: KnowledgeService
    run_id: str
    shapes: Sequence[str]
    candidates: Sequence[Mapping[str, Any]]
    at: str

    async def offer(self, actions: Sequence[PendingAction]) -> Offers:
        offers = Offers()
        for action in actions:
            if action.action_name != PUBLISH_TOOL:
                offers.offered.append(action)
                continue
            try:
                offers.offered.append(await self._file(action))
            except Dropped as dropped:
                offers.dropped.append(self._record(action, dropped))
        return offers

    def _record(self, action: PendingAction, dropped: Dropped) -> dict[str, Any]:
        return {
            "actionId": action.id,
            "name": action.action_name,
            "type": "reject",
            "by": MINER,
            "at": self.at,
            "message": dropped.reason,
            "dropped": True,
            "trustSignals": dropped.signals,
            "outcome": f"Not offered for publication: {dropped.reason}",
        }

    def _candidate(self, action: PendingAction) -> dict[str, Any]:
        jsonld = action.args.get("jsonld")
        if not isinstance(jsonld, Mapping):
            raise Dropped("the publish holds no JSON-LD object")
        source = matching_candidate(jsonld, self.candidates) or {}
        kept = {key: value for key, value in bookkeeping(source).items() if key not in jsonld}
        return {**jsonld, **kept}

    async def _file(self, action: PendingAction) -> PendingAction:
        candidate = self._candidate(action)
        revision_of = _revision_argument(action.args)
        report, signals = await self._check(candidate, revision_of)
        if report.duplicates and revision_of is None:
            revision_of = await self._revised(report, signals)
            report, signals = await self._check(candidate, revision_of)
        if report.duplicates:
            raise Dropped(_duplicates(report), signals)
        if revision_of is not None and await self._says_the_same(revision_of, report):
            raise Dropped(f"{revision_of} already says exactly this: nothing new", signals)
        document = publishable_document(candidate)
        keys = await anyio.to_thread.run_sync(duplicate_keys, document)
        await anyio.to_thread.run_sync(self._not_waiting, keys, signals)
        request = await anyio.to_thread.run_sync(
            lambda: self.knowledge.request_publication(
                document,
                requested_by=f"{MINER} run {self.run_id}",
                title=action.args.get("title"),
                revision_of=revision_of,
                source=MINER,
                details={
                    "runId": self.run_id,
                    "actionId": action.id,
                    "trustSignals": signals,
                    "keys": keys,
                    **bookkeeping(candidate),
                },
                validated=True,
            )
        )
        return action.model_copy(
            update={
                "args": {**action.args, "jsonld": document},
                "request_id": request.id,
                "revision_of": request.revision_of,
                "trust_signals": signals,
            }
        )

    async def _check(
        self, candidate: Mapping[str, Any], revision_of: str | None
    ) -> tuple[ValidationReport, dict[str, Any]]:
        report, signals = await checked(
            candidate, knowledge=self.knowledge, shapes=self.shapes, revision_of=revision_of
        )
        if not report.checks[0].passed:
            raise Dropped(f"it does not expand as JSON-LD: {report.checks[0].detail}", signals)
        return report, signals

    async def _revised(self, report: ValidationReport, signals: dict[str, Any]) -> str:
        """The one asset a duplicate revises: the latest state its duplicates belong to."""
        collections = list(dict.fromkeys(_collection(d.ual) for d in report.duplicates))
        latest = [c for c in collections if (await self.knowledge.metadata(c)).later_states == 0]
        if len(latest) == 1:
            return latest[0]
        if not latest:
            raise Dropped(
                f"{_duplicates(report)}, and later revisions replaced "
                f"{'it' if len(collections) == 1 else 'them'}: not offered as new",
                signals,
            )
        raise Dropped(
            f"{_duplicates(report)}: {len(latest)} separate assets, so it is not offered as "
            "new, nor as a revision of one of them",
            signals,
        )

    async def _says_the_same(self, revision_of: str, report: ValidationReport) -> bool:
        content = await self.knowledge.get_asset(str(Ual.parse(revision_of).collection))
        current = await anyio.to_thread.run_sync(published_hash, content.public)
        return current == report.document_hash

    def _not_waiting(self, keys: list[str], signals: dict[str, Any]) -> None:
        waiting, _ = self.knowledge.list_requests(status="pending", limit=WAITING_SCAN)
        for request in waiting:
            details = request.details or {}
            shared = sorted(set(keys) & set(details.get("keys") or []))
            if shared and details.get("runId") != self.run_id:
                raise Dropped(
                    f"the same {shared[0]} already waits for approval in publication request "
                    f"{request.id} (knowledge-miner run {details.get('runId')})",
                    signals,
                )


def _revision_argument(args: Mapping[str, Any]) -> str | None:
    value = args.get("revision_of")
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return str(Ual.parse(value.strip()).collection)
    except InvalidInput as exc:
        raise Dropped(f"revision_of is not a UAL: {exc}") from None


def _collection(ual: str) -> str:
    return str(Ual.parse(ual).collection)


def _duplicates(report: ValidationReport) -> str:
    found = "; ".join(f"{d.ual} has the same {d.by} ({d.value})" for d in report.duplicates)
    return f"it duplicates what the knowledge base holds: {found}"
