"""Miner rules: who may start a run and how often, one run at a time per tag thread, runs
stopped for a person's decision, and resuming them (in this process or another).

A run is the agent's graph streamed on its tag thread. It stops when the agent is done, when it
reaches its iteration bound, or when it calls `dkg_publish_asset`: then its pending actions
wait in the `miner_runs` row, each a publication request in the knowledge base's queue, until a
person decides them (here or through any other door), and the graph resumes from the checkpoint
with `Command(resume={"decisions": [...]})` (`queue.ApprovalQueue`). Streaming a segment and
recording what it came to is `segments.SegmentRunner`'s part.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import anyio
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from graphwright.auth.models import Principal
from graphwright.auth.service import person
from graphwright.db import Database
from graphwright.errors import Conflict, TooManyRequests
from graphwright.knowledge.service import KnowledgeService
from graphwright.llm import ModelSetup, load_chat_model
from graphwright.miner import tags as domain
from graphwright.miner.actions import check_decisions
from graphwright.miner.agent_tools import MinerTools
from graphwright.miner.memory import MemoryNotes
from graphwright.miner.models import MinerRun, RunStatus
from graphwright.miner.persistence import Persistence
from graphwright.miner.queue import ApprovalQueue
from graphwright.miner.repository import RunRepository
from graphwright.miner.review import ActionReview, reviews_of
from graphwright.miner.runs import LiveRun
from graphwright.miner.schemas import (
    Decision,
    MemoryNote,
    MemoryNoteContent,
    MinerOutput,
    MinerRequest,
    PendingAction,
    RunPage,
    RunRecord,
    RunView,
)
from graphwright.miner.segments import (
    EVENT_FLUSH_SECONDS,
    SegmentRunner,
    record,
    run_config,
    utc_now,
)
from graphwright.miner.tavily import TavilyClient
from graphwright.settings import Settings
from graphwright.sources.service import KnowledgeGraphService, LiteratureService

NEEDS_MODEL = (
    "The knowledge miner needs a language model, and none is configured. Set "
    "GRAPHWRIGHT_MODEL=provider:model (for example openai:gpt-4o-mini or "
    "anthropic:claude-sonnet-4-5), install the provider's LangChain package (pip install "
    "'graphwright[openai]') and restart. Approvals, memory notes and the knowledge base work "
    "without one."
)
# A run left `running` this long ago by a process that died no longer holds its thread.
ABANDONED_AFTER = timedelta(hours=1)
# Who a run started without a principal (the MCP tool over stdio) is recorded as started by.
LOCAL_ACTOR = "mcp"


class NoModel(Conflict):
    """The miner needs a language model, and this server has none configured (HTTP 409)."""

    code = "no_model"


def caller_key(principal: Principal | None) -> str:
    """Whom the rate limit counts a run against: the token, or the local user over stdio."""
    return f"token:{principal.token_id}" if principal is not None else "local"


def decider(principal: Principal) -> str:
    """Who decides on a pending action or edits the memory notes: a person, that is an
    unscoped token (a token scoped to one conversation, as the chat's tools hold, may not)."""
    return person(principal, "Deciding on a miner action or editing its memory")


def _actor(principal: Principal | None) -> str:
    return principal.actor if principal is not None else LOCAL_ACTOR


def _view(row: MinerRun) -> RunView:
    return RunView.model_validate(row, from_attributes=True)


class MinerService:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        *,
        tools: MinerTools,
        model: BaseChatModel | None,
    ) -> None:
        self._db = db
        self.settings = settings
        self.tools = tools
        self.model = model
        self._segments = SegmentRunner(db, settings, tools)
        self._queue = ApprovalQueue(
            db, tools.knowledge, self._segments, require_model=self._require_model, quiet=(NoModel,)
        )

    @classmethod
    def from_settings(
        cls,
        db: Database,
        settings: Settings,
        knowledge: KnowledgeService,
        *,
        tools: MinerTools | None = None,
        model: ModelSetup | None = None,
    ) -> MinerService:
        tools = tools or MinerTools(
            knowledge,
            literature=LiteratureService.from_settings(settings),
            kg=KnowledgeGraphService.from_settings(settings),
            tavily=TavilyClient.from_settings(settings),
        )
        model = model or load_chat_model(settings)
        return cls(db, settings, tools=tools, model=model.model)

    async def persistence(self) -> Persistence:
        self._queue.attach()
        return await self._segments.persistence()

    async def ensure_started(self) -> None:
        """Once per server process: resume the runs decided while it was down, and those that
        other processes decide from now on (see `queue.py`)."""
        await self._queue.ensure_started()

    async def aclose(self) -> None:
        await self._queue.aclose()
        await self._segments.aclose()

    # -- runs ----------------------------------------------------------------------------------

    async def start_as(self, request: MinerRequest, principal: Principal | None) -> LiveRun:
        """Start a run for `principal` (None: the local user over stdio): it is recorded as
        the run's actor, and the rate limit counts the run against its `caller_key`."""
        return await self.start(request, actor=_actor(principal), caller=caller_key(principal))

    async def run_as(self, request: MinerRequest, principal: Principal | None) -> MinerOutput:
        """`start_as`, then wait until the run stops (as `run`)."""
        return await self.run(request, actor=_actor(principal), caller=caller_key(principal))

    async def run(self, request: MinerRequest, *, actor: str, caller: str) -> MinerOutput:
        """Start a run and wait until it stops: done, at its bound, or waiting for a person."""
        live = await self.start(request, actor=actor, caller=caller)
        await live.stopped.wait()
        return await anyio.to_thread.run_sync(self.output, live.run_id)

    async def start(self, request: MinerRequest, *, actor: str, caller: str) -> LiveRun:
        model = self._require_model()
        tags = domain.checked_tags(request.domain_tags)
        row = await anyio.to_thread.run_sync(self._claim, request, tags, actor, caller)
        persistence = await self.persistence()
        await MemoryNotes(persistence.store).seed(domain.memory_tags(tags))
        graph = self._segments.graph(model, row)
        config = run_config(row)
        previous = await graph.aget_state(config)
        stale_files = {path: None for path in (previous.values.get("files") or {})}
        graph_input = {
            # Each run starts clean on its tag thread; what lasts is in /memories/.
            "messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                HumanMessage(domain.tagged_message(request.query, tags)),
            ],
            "files": stale_files,
            "todos": [],
        }
        return self._segments.launch(row, graph, graph_input, config)

    def _claim(self, request: MinerRequest, tags: list[str], actor: str, caller: str) -> RunRecord:
        thread = domain.thread_id(tags)
        now = utc_now()
        with self._db.write() as session:
            runs = RunRepository(session)
            self._check_rate(runs, caller, now)
            active = runs.active_on(thread)
            if active is not None and not self._abandoned(active, now):
                raise Conflict(
                    f"Run {active.id} is {active.status} on thread '{thread}'; "
                    + (
                        "decide its pending actions first "
                        f"(POST /api/miner/runs/{active.id}/decisions)"
                        if active.status == RunStatus.WAITING
                        else "wait for it to finish"
                    )
                )
            if active is not None:
                active.status, active.error = RunStatus.FAILED, "Abandoned by its process"
            row = MinerRun(
                id=str(uuid.uuid4()),
                thread_id=thread,
                status=RunStatus.RUNNING,
                query=request.query,
                domain_tags=tags,
                max_iterations=request.max_iterations,
                requested_by=actor,
                caller=caller,
                created_at=now,
                updated_at=now,
                result=None,
                pending=[],
                decisions=[],
                workspace=None,
                events=[],
            )
            runs.add(row)
            return record(row)

    def _check_rate(self, runs: RunRepository, caller: str, now: datetime) -> None:
        limit, window = self.settings.miner_runs_per_window, self.settings.miner_rate_window_seconds
        if limit <= 0:
            return
        started = runs.started_since(caller, now - timedelta(seconds=window))
        if len(started) >= limit:
            wait = (started[0] + timedelta(seconds=window) - now).total_seconds()
            raise TooManyRequests(
                f"Too many knowledge-miner runs: at most {limit} per {window:g} s for one "
                f"token; try again in {max(wait, 1):.0f} s"
            )

    @staticmethod
    def _abandoned(row: MinerRun | RunRecord, now: datetime) -> bool:
        return row.status == RunStatus.RUNNING and now - row.updated_at > ABANDONED_AFTER

    def _require_model(self) -> BaseChatModel:
        if self.model is None:
            raise NoModel(NEEDS_MODEL)
        return self.model

    # -- decisions -----------------------------------------------------------------------------
    # Each publish that waits is a publication request in the knowledge base's one queue
    # (`queue.py`): a decision here decides the requests, and the run resumes from them.

    async def decide_as(
        self, run_id: str, decisions: Sequence[Decision], principal: Principal
    ) -> RunView:
        """`decide`, once `principal` is known to be a person who may decide."""
        return await self.decide(run_id, decisions, approver=decider(principal))

    async def resume_as(
        self, run_id: str, decisions: Sequence[Decision], principal: Principal
    ) -> LiveRun | None:
        """`resume`, once `principal` is known to be a person who may decide."""
        return await self.resume(run_id, decisions, approver=decider(principal))

    async def decide(self, run_id: str, decisions: Sequence[Decision], *, approver: str) -> RunView:
        """`resume` the run, and wait until it stops again."""
        live = await self.resume(run_id, decisions, approver=approver)
        if live is not None:
            await live.stopped.wait()
        return await self._stopped(run_id)

    async def resume(
        self, run_id: str, decisions: Sequence[Decision], *, approver: str
    ) -> LiveRun | None:
        """Decide a waiting run's publication requests, one decision per pending action in
        order (an edit is validated first, and published as validated), then resume the run.
        Returns the resumed run, or None when another process resumed it. Nothing changes
        when a decision is refused; a second decision on the same actions is refused."""
        run = await anyio.to_thread.run_sync(self._get_record, run_id)
        self._require_model()
        if run.status != RunStatus.WAITING or not run.pending:
            taken = [d for d in run.decisions if d.get("by")]
            who = f" (decided by {taken[-1]['by']})" if taken else ""
            raise Conflict(f"Run {run_id} has no action waiting for a decision{who}")
        pending = [PendingAction.model_validate(action) for action in run.pending]
        check_decisions(run_id, pending, decisions)
        await self._queue.decide(run, pending, decisions, approver)
        return await self._queue.resume_decided(run_id)

    async def _stopped(self, run_id: str) -> RunView:
        """The run once it is no longer running (here, or in another process)."""
        while True:
            run = await anyio.to_thread.run_sync(self._get_record, run_id)
            if run.status != RunStatus.RUNNING or self._abandoned(run, utc_now()):
                return await anyio.to_thread.run_sync(self.get_run, run_id)
            live = self._segments.live.get(run_id)
            if live is not None:
                await live.stopped.wait()
            else:
                await asyncio.sleep(EVENT_FLUSH_SECONDS)

    # -- reads ---------------------------------------------------------------------------------

    def output(self, run_id: str) -> MinerOutput:
        run = self.get_run(run_id)
        if run.result is None:
            raise Conflict(f"Run {run_id} has no result: {run.error or run.status}")
        return MinerOutput.model_validate(run.result)

    @staticmethod
    def review(run: RunView) -> list[ActionReview]:
        """What a person sees before deciding: each pending publish as it would be published,
        with the checks and confidence it is offered on."""
        return reviews_of(run)

    def get_run(self, run_id: str) -> RunView:
        with self._db.read() as session:
            return _view(RunRepository(session).required(run_id))

    def _get_record(self, run_id: str) -> RunRecord:
        with self._db.read() as session:
            return record(RunRepository(session).required(run_id))

    def list_runs(self, *, status: str | None, offset: int, limit: int) -> RunPage:
        with self._db.read() as session:
            rows, total = RunRepository(session).page(status=status, offset=offset, limit=limit)
            runs = [_view(row) for row in rows]
        return RunPage(runs=runs, total=total, offset=offset, limit=limit)

    async def events(self, run_id: str, *, after: int = -1) -> AsyncIterator[dict[str, Any]]:
        """The run's progress events after `after`, until it stops: live while it runs in this
        process; else as another process saves them (every EVENT_FLUSH_SECONDS), polled."""
        live = self._segments.live.get(run_id)
        if live is not None:
            async for event in live.follow(after):
                yield event
            return
        while True:
            run = await anyio.to_thread.run_sync(self._get_record, run_id)
            for event in run.events[after + 1 :]:
                yield event
                after = event["seq"]
            if run.status != RunStatus.RUNNING or self._abandoned(run, utc_now()):
                return
            await asyncio.sleep(EVENT_FLUSH_SECONDS)

    # -- memory --------------------------------------------------------------------------------

    async def memory(self) -> dict[str, list[MemoryNote]]:
        return await MemoryNotes((await self.persistence()).store).list()

    async def read_note(self, tag: str, note: str) -> MemoryNoteContent:
        notes = MemoryNotes((await self.persistence()).store)
        return await notes.read(domain.checked_tag(tag), note)

    async def write_note_as(
        self, tag: str, note: str, content: str, principal: Principal
    ) -> MemoryNoteContent:
        """`write_note`, once `principal` is known to be a person who may edit the notes."""
        decider(principal)
        return await self.write_note(tag, note, content)

    async def write_note(self, tag: str, note: str, content: str) -> MemoryNoteContent:
        notes = MemoryNotes((await self.persistence()).store)
        return await notes.write(domain.checked_tag(tag), note, content)
