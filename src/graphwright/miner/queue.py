"""The one approval queue, from the run's side. Each publish a run waits on is a publication
request in the knowledge base's queue; whoever decides it, through whichever door (the miner's
decisions, the knowledge base's REST API and requests page, `kb approve`), decides the request,
and the run resumes once all its requests are decided, its decisions read from them.

The knowledge base tells this process's queue of each decision at once (a listener); decisions
another process took (`kb approve` while the server is stopped, or on a shared database) are
found at start-up and every SWEEP_SECONDS.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from langchain_core.language_models import BaseChatModel
from langgraph.types import Command

from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput
from graphwright.knowledge.jsonld import checked_drafts
from graphwright.knowledge.schemas import PublicationRequestView
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner import tags as domain
from graphwright.miner.actions import (
    DECIDED,
    already,
    pending_actions,
    request_records,
    resume_decisions,
)
from graphwright.miner.models import RunStatus
from graphwright.miner.publishable import BOOKKEEPING, publishable_document
from graphwright.miner.repository import RunRepository
from graphwright.miner.runs import LiveRun
from graphwright.miner.schemas import PUBLISH_TOOL, Decision, PendingAction, RunRecord
from graphwright.miner.segments import SegmentRunner, record, run_config, utc_now
from graphwright.miner.signals import checked, tag_shapes
from graphwright.miner.validation import duplicate_keys

logger = logging.getLogger(__name__)

# How often a server looks for requests another process decided, and for how many runs.
SWEEP_SECONDS = 5.0
SWEEP_RUNS = 200


class ApprovalQueue:
    def __init__(
        self,
        db: Database,
        knowledge: KnowledgeService,
        segments: SegmentRunner,
        *,
        require_model: Callable[[], BaseChatModel],
        quiet: tuple[type[Exception], ...] = (),
    ) -> None:
        """`require_model` gives the model that resumes runs (or raises one of `quiet`: the
        run then waits until a model is configured)."""
        self._db = db
        self.knowledge = knowledge
        self._segments = segments
        self._require_model = require_model
        self._quiet = quiet
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._resuming: dict[str, anyio.Lock] = {}
        self._told: set[str] = set()
        knowledge.add_decision_listener(self._request_decided)

    def attach(self) -> None:
        """Note the event loop this queue runs on, for the knowledge base's listener."""
        self._loop = asyncio.get_running_loop()

    async def aclose(self) -> None:
        self.knowledge.remove_decision_listener(self._request_decided)
        for task in [self._sweeper, *self._tasks]:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._sweeper = None

    async def decide(
        self,
        run: RunRecord,
        pending: Sequence[PendingAction],
        decisions: Sequence[Decision],
        approver: str,
    ) -> None:
        """The miner's own door: decide each pending publish's request (an edit validated
        first, and published as validated). Nothing changes when an edit is refused."""
        edits = {
            action.id: await self._revalidated(run, action, decision)
            for action, decision in zip(pending, decisions, strict=True)
            if decision.edited_action is not None
        }
        for action, decision in zip(pending, decisions, strict=True):
            await self._decide_request(action, decision, approver, edits.get(action.id))

    async def _revalidated(
        self, run: RunRecord, action: PendingAction, decision: Decision
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """An edited publish as it will be published, and its request's new details: the
        edit checked as the agent's candidates are, so what is published was validated."""
        assert decision.edited_action is not None
        if decision.edited_action.name != PUBLISH_TOOL:
            raise InvalidInput(f"An edit may only change a {PUBLISH_TOOL} call")
        edited = decision.edited_action.args.get("jsonld")
        if not isinstance(edited, dict):
            raise InvalidInput("An edited publish gives its JSON-LD as one object (jsonld)")
        await anyio.to_thread.run_sync(checked_drafts, edited)
        request = await anyio.to_thread.run_sync(self._request_of, action)
        details = dict(request.details or {})
        candidate = {**edited, **{k: details[k] for k in BOOKKEEPING if k in details}}
        shapes = await tag_shapes(
            (await self._segments.persistence()).store, domain.memory_tags(run.domain_tags)
        )
        _, signals = await checked(
            candidate, knowledge=self.knowledge, shapes=shapes, revision_of=action.revision_of
        )
        document = publishable_document(candidate)
        keys = await anyio.to_thread.run_sync(duplicate_keys, document)
        return document, {**details, "trustSignals": signals, "keys": keys, "edited": True}

    def _request_of(self, action: PendingAction) -> PublicationRequestView:
        if action.request_id is None:
            raise Conflict(f"Action {action.id} has no publication request")
        return self.knowledge.get_request(action.request_id)

    async def _decide_request(
        self,
        action: PendingAction,
        decision: Decision,
        approver: str,
        edit: tuple[dict[str, Any], dict[str, Any]] | None,
    ) -> None:
        knowledge = self.knowledge
        request = await anyio.to_thread.run_sync(self._request_of, action)
        if already(decision, request):
            return
        if decision.type == "reject":
            reason = decision.message or "rejected"
            await anyio.to_thread.run_sync(
                lambda: knowledge.reject(request.id, by=approver, reason=reason)
            )
        elif edit is not None:
            document, details = edit
            await knowledge.approve(
                request.id, approver=approver, content=document, revalidated=details
            )
        else:
            await knowledge.approve(request.id, approver=approver)

    async def resume_decided(self, run_id: str) -> LiveRun | None:
        """Resume the run if every publication request it waits on is decided: its decisions
        are read from the requests. The run resumed (here), or None when it still waits or
        another process resumed it."""
        async with self._resuming.setdefault(run_id, anyio.Lock()):
            live = self._segments.live.get(run_id)
            if live is not None:
                return live
            run = await anyio.to_thread.run_sync(self._record, run_id)
            if run.status != RunStatus.WAITING or not run.pending:
                return None
            pending = [PendingAction.model_validate(action) for action in run.pending]
            requests = [await anyio.to_thread.run_sync(self._request_of, a) for a in pending]
            if any(request.status not in DECIDED for request in requests):
                return None
            model = self._require_model()
            await self._segments.persistence()
            graph = self._segments.graph(model, run)
            order = pending_actions(await graph.aget_state(run_config(run)))
            records = request_records(pending, requests)
            dropped = [d for d in run.decisions if d.get("dropped")]
            decisions = resume_decisions(order, {r["actionId"]: r for r in [*dropped, *records]})
            row = await anyio.to_thread.run_sync(self._take_decisions, run_id, pending, records)
            if row is None:
                return None
            config = run_config(row, {a.id: a.request_id for a in pending if a.request_id})
            return self._segments.launch(
                row, graph, Command(resume={"decisions": decisions}), config
            )

    def _take_decisions(
        self, run_id: str, pending: list[PendingAction], records: list[dict[str, Any]]
    ) -> RunRecord | None:
        with self._db.write() as session:
            row = RunRepository(session).required(run_id, for_update=True)
            waiting = [action["id"] for action in row.pending]
            if row.status != RunStatus.WAITING or waiting != [a.id for a in pending]:
                return None  # resumed meanwhile, by another process
            row.decisions = [*row.decisions, *records]
            row.pending, row.status, row.updated_at = [], RunStatus.RUNNING, utc_now()
            return record(row)

    async def ensure_started(self) -> None:
        """Once per process: resume the runs whose requests were decided while no miner ran
        (`kb approve` with the server stopped), and keep checking every SWEEP_SECONDS for
        decisions another process took."""
        self.attach()
        if self._sweeper is None:
            await self.resume_waiting()
            self._sweeper = asyncio.create_task(self._sweep(), name="miner-decisions")

    async def resume_waiting(self) -> None:
        """Resume every waiting run whose requests are all decided."""
        for run_id in await anyio.to_thread.run_sync(self._waiting):
            await self._resume_quietly(run_id)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            await self.resume_waiting()

    def _request_decided(self, request: PublicationRequestView) -> None:
        """The knowledge base's listener: a request of a run was decided (maybe by another
        door), so the run may resume. Called in the decider's thread; the work goes to the
        event loop this service runs on."""
        run_id = (request.details or {}).get("runId")
        loop = self._loop
        if not run_id or loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._spawn_resume, str(run_id))

    def _spawn_resume(self, run_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._resume_quietly(run_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resume_quietly(self, run_id: str) -> None:
        try:
            await self.resume_decided(run_id)
        except self._quiet:
            if run_id not in self._told:  # once, not at every sweep
                self._told.add(run_id)
                logger.info("Run %s is decided and waits for a model to resume", run_id)
        except Exception:
            logger.exception("Could not resume run %s after its decisions", run_id)

    def _record(self, run_id: str) -> RunRecord:
        with self._db.read() as session:
            return record(RunRepository(session).required(run_id))

    def _waiting(self) -> list[str]:
        with self._db.read() as session:
            rows, _ = RunRepository(session).page(
                status=RunStatus.WAITING, offset=0, limit=SWEEP_RUNS
            )
            return [row.id for row in rows]
