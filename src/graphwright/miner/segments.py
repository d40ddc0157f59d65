"""Running a miner run on the agent graph, one segment at a time: from its start, or from a
person's decision, until it stops again (done, at its bound, waiting for a person, or failed).

`SegmentRunner` holds what the segments share (the LangGraph store and checkpointer, the
compiled graphs, the runs live in this process), streams each segment as a task, turns the
stream into progress events, files each publish the graph stops at as a publication request
(`offers.py`: or drops it by the duplicate rule, and goes on), and writes to the run's row what
the segment came to. `MinerService` decides what may run; this runs it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
from langchain_core.language_models import BaseChatModel
from langgraph.types import Command

from graphwright.db import Database
from graphwright.miner import tags as domain
from graphwright.miner.actions import pending_actions, publish_outcomes, resume_decisions
from graphwright.miner.agent import build_agent
from graphwright.miner.agent_tools import MinerTools
from graphwright.miner.ledger import entries, report
from graphwright.miner.models import MinerRun, RunStatus
from graphwright.miner.offers import Offering, Offers
from graphwright.miner.output import build_output, candidate_files
from graphwright.miner.persistence import Persistence, open_persistence
from graphwright.miner.progress import RunTracker
from graphwright.miner.repository import RunRepository
from graphwright.miner.runs import LiveRun
from graphwright.miner.schemas import PendingAction, RunRecord
from graphwright.miner.signals import checked, tag_shapes
from graphwright.settings import Settings

logger = logging.getLogger(__name__)

GRAPH_CACHE = 32
EVENT_FLUSH_SECONDS = 0.5


@dataclass(frozen=True)
class Finished:
    """What a segment came to, for the run's row."""

    status: RunStatus
    result: dict[str, Any]
    pending: list[PendingAction]
    dropped: list[dict[str, Any]]
    outcomes: dict[str, str]


@dataclass(frozen=True)
class Segment:
    """One segment of a run as it streams: the run, its graph and config, and its progress."""

    row: RunRecord
    graph: Any
    config: dict[str, Any]
    tracker: RunTracker
    live: LiveRun


def utc_now() -> datetime:
    return datetime.now(UTC)


def record(row: MinerRun) -> RunRecord:
    return RunRecord.model_validate(row, from_attributes=True)


def run_config(row: RunRecord, requests: dict[str, str] | None = None) -> dict[str, Any]:
    """The graph config of a run's segment: its thread, and what its tools read (the
    publication request of each publish a person decided, by tool call id)."""
    return {
        "configurable": {
            "thread_id": row.thread_id,
            "miner_run_id": row.id,
            "miner_memory_tags": domain.memory_tags(row.domain_tags),
            "miner_requests": requests or {},
        },
        "recursion_limit": 1_000,
    }


class SegmentRunner:
    def __init__(self, db: Database, settings: Settings, tools: MinerTools) -> None:
        self._db = db
        self.settings = settings
        self.tools = tools
        self.live: dict[str, LiveRun] = {}
        self._persistence: Persistence | None = None
        self._opening = anyio.Lock()
        self._graphs: dict[tuple[tuple[str, ...], int], Any] = {}

    async def persistence(self) -> Persistence:
        async with self._opening:
            if self._persistence is None:
                self._persistence = await open_persistence(self.settings)
            return self._persistence

    async def aclose(self) -> None:
        for live in list(self.live.values()):
            if live.task is not None:
                live.task.cancel()
                await asyncio.gather(live.task, return_exceptions=True)
        if self._persistence is not None:
            await self._persistence.aclose()
            self._persistence = None
            self._graphs.clear()

    def graph(self, model: BaseChatModel, row: RunRecord) -> Any:
        """The compiled agent for the run's tags and bound; compiled graphs are kept, since
        runs pass everything else in their config. Open `persistence()` first."""
        key = (tuple(row.domain_tags), row.max_iterations)
        if key not in self._graphs:
            if len(self._graphs) >= GRAPH_CACHE:
                self._graphs.pop(next(iter(self._graphs)))
            self._graphs[key] = self._build(model, row)
        return self._graphs[key]

    def _build(self, model: BaseChatModel, row: RunRecord) -> Any:
        assert self._persistence is not None
        memory_tags = domain.memory_tags(row.domain_tags)
        return build_agent(
            model=model,
            store=self._persistence.store,
            checkpointer=self._persistence.checkpointer,
            memory_tags=memory_tags,
            domain_tags=row.domain_tags,
            max_iterations=row.max_iterations,
            reads=self.tools.knowledge_reads(),
            discovery_extra=self.tools.sources(),
            validation_extra=[self.tools.metadata(), self.tools.validate()],
            publish=self.tools.publish(),
        )

    def launch(
        self, row: RunRecord, graph: Any, graph_input: Any, config: dict[str, Any]
    ) -> LiveRun:
        """Stream one segment of `row`'s run as a task; its tracker goes on from what the
        run's earlier segments left in the row."""
        live = LiveRun(row.id, row.events)
        tracker = RunTracker(live.emit)
        tracker.restore(row.workspace)
        self.live[row.id] = live
        live.emit("run", {"runId": row.id, "status": RunStatus.RUNNING.value})
        segment = Segment(row, graph, config, tracker, live)
        live.task = asyncio.create_task(
            self._segment(segment, graph_input), name=f"miner-run-{row.id}"
        )
        return live

    async def _segment(self, segment: Segment, graph_input: Any) -> None:
        row, tracker, live = segment.row, segment.tracker, segment.live
        try:
            state, offers, dropped = await self._stream(segment, graph_input)
            messages = state.values.get("messages") or []
            output = build_output(
                run_id=row.id,
                domain_tags=row.domain_tags,
                messages=messages,
                files=state.values.get("files") or {},
                tracker=tracker,
                pending=offers.offered,
            )
            ledger = entries([*row.decisions, *dropped], offers.offered)
            await report(output.candidate_assets, ledger, lambda c: self._check(c, row))
            status = RunStatus.WAITING if offers.offered else RunStatus.DONE
            result = output.model_dump(mode="json", by_alias=True)
            if offers.offered:
                live.emit("pending_approval", {"actions": result["pendingApproval"]})
            live.emit("done", {"status": status.value, "result": result})
            finished = Finished(status, result, offers.offered, dropped, publish_outcomes(messages))
            await anyio.to_thread.run_sync(
                self._finish, row.id, finished, tracker, list(live.events)
            )
        except Exception as exc:
            logger.exception("Miner run %s failed", row.id)
            message = f"The run failed: {type(exc).__name__}: {exc}"
            live.emit("error", {"message": message})
            live.emit("done", {"status": RunStatus.FAILED.value, "result": None})
            await anyio.to_thread.run_sync(self._fail, row.id, message, live.events)
        finally:
            self.live.pop(row.id, None)
            live.stop()

    async def _stream(
        self, segment: Segment, graph_input: Any
    ) -> tuple[Any, Offers, list[dict[str, Any]]]:
        """Stream the graph until it stops with publishes for a person, or is done. Publishes
        the duplicate rule drops are rejected with their reason, and the graph goes on."""
        row, graph, config, live = segment.row, segment.graph, segment.config, segment.live
        flushed = time.monotonic()
        dropped: list[dict[str, Any]] = []
        while True:
            async for chunk in graph.astream(
                graph_input,
                config,
                stream_mode=["updates"],
                subgraphs=True,
                version="v2",
                durability="exit",
            ):
                segment.tracker.observe(chunk)
                if time.monotonic() - flushed > EVENT_FLUSH_SECONDS:
                    flushed = time.monotonic()
                    await anyio.to_thread.run_sync(self._save_events, row.id, list(live.events))
            state = await graph.aget_state(config)
            actions = pending_actions(state)
            if not actions:
                return state, Offers(), dropped
            offers = await self._offer(row, actions, state)
            dropped.extend(offers.dropped)
            for record in offers.dropped:
                live.emit("dropped", {"actionId": record["actionId"], "reason": record["message"]})
            if offers.offered:
                return state, offers, dropped
            records = {record["actionId"]: record for record in offers.dropped}
            graph_input = Command(resume={"decisions": resume_decisions(actions, records)})

    async def _offer(self, row: RunRecord, actions: list[PendingAction], state: Any) -> Offers:
        offering = Offering(
            knowledge=self.tools.knowledge,
            run_id=row.id,
            shapes=await self._shapes(row),
            candidates=candidate_files(state.values.get("files") or {}),
            at=utc_now().isoformat(),
        )
        return await offering.offer(actions)

    async def _shapes(self, row: RunRecord) -> list[str]:
        assert self._persistence is not None
        return await tag_shapes(self._persistence.store, domain.memory_tags(row.domain_tags))

    async def _check(self, candidate: Mapping[str, Any], row: RunRecord) -> dict[str, Any]:
        """A candidate never proposed for publishing, checked now in code."""
        shapes = await self._shapes(row)
        return (await checked(candidate, knowledge=self.tools.knowledge, shapes=shapes))[1]

    def _finish(
        self,
        run_id: str,
        finished: Finished,
        tracker: RunTracker,
        events: list[dict[str, Any]],
    ) -> None:
        with self._db.write() as session:
            row = RunRepository(session).required(run_id)
            row.status, row.result, row.updated_at = finished.status, finished.result, utc_now()
            row.pending = [
                action.model_dump(mode="json", by_alias=True) for action in finished.pending
            ]
            row.workspace = tracker.snapshot()
            row.events = list(events)
            outcomes = finished.outcomes
            row.decisions = [
                {**decision, "outcome": outcomes[decision["actionId"]]}
                if decision["actionId"] in outcomes and "outcome" not in decision
                else decision
                for decision in [*row.decisions, *finished.dropped]
            ]

    def _save_events(self, run_id: str, events: list[dict[str, Any]]) -> None:
        """Progress so far, for streams served by another process or server instance."""
        with self._db.write() as session:
            row = RunRepository(session).required(run_id)
            row.events, row.updated_at = events, utc_now()

    def _fail(self, run_id: str, message: str, events: list[dict[str, Any]]) -> None:
        with self._db.write() as session:
            row = RunRepository(session).required(run_id)
            row.status, row.error, row.updated_at = RunStatus.FAILED, message, utc_now()
            row.events = list(events)
