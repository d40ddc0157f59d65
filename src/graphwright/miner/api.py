"""REST API of the knowledge miner, `/api/miner/...`: runs, their progress as SSE, a person's
decisions on pending actions, and the memory notes per domain tag. Parse, call MinerService,
format."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from sse_starlette.sse import EventSourceResponse

from graphwright.auth.api import Caller
from graphwright.envelope import Limit, Offset, ok
from graphwright.miner.schemas import (
    DecisionInput,
    MemoryListing,
    MemoryNoteInput,
    MemoryTag,
    MinerRequest,
)
from graphwright.miner.service import MinerService
from graphwright.miner.tags import TAG_PATTERN

router = APIRouter(prefix="/api/miner", tags=["miner"])


async def get_miner_service(request: Request) -> MinerService:
    return request.app.state.miner_service


Service = Annotated[MinerService, Depends(get_miner_service)]
TagPath = Annotated[str, Path(pattern=TAG_PATTERN.pattern, description="A domain tag, or global")]
NoteName = Literal["discovery-notes", "schema-notes", "validation-rules", "shapes"]


@router.post("/runs", status_code=202, summary="Start a knowledge-miner run; follow its events")
async def start_run(body: MinerRequest, service: Service, caller: Caller) -> Response:
    live = await service.start_as(body, caller)
    return ok({"runId": live.run_id, "status": "running"}, status_code=202)


@router.get("/runs", summary="Miner runs, newest first")
def list_runs(
    service: Service,
    _caller: Caller,
    status: Literal["running", "waiting", "done", "failed"] | None = None,
    offset: Offset = 0,
    limit: Limit = 50,
) -> Response:
    return ok(service.list_runs(status=status, offset=offset, limit=limit))


@router.get("/runs/{run_id}", summary="One run: status, result, pending actions, decisions")
def get_run(run_id: str, service: Service, _caller: Caller) -> Response:
    return ok(service.get_run(run_id))


@router.get(
    "/runs/{run_id}/events",
    summary="The run's progress as Server-Sent Events, from the start or after `after`",
    response_model=None,
)
async def run_events(
    run_id: str,
    service: Service,
    _caller: Caller,
    after: Annotated[int, Query(ge=-1, le=1_000_000)] = -1,
) -> Response:
    await run_in_threadpool(service.get_run, run_id)  # 404 before the stream starts

    async def stream() -> AsyncIterator[dict[str, Any]]:
        async for event in service.events(run_id, after=after):
            yield {
                "id": str(event["seq"]),
                "event": event["type"],
                "data": orjson.dumps(event["data"]).decode(),
            }

    return EventSourceResponse(stream())


@router.post(
    "/runs/{run_id}/decisions",
    summary="Decide the run's pending actions (approve, edit, reject), one each, in order",
)
async def decide(run_id: str, body: DecisionInput, service: Service, caller: Caller) -> Response:
    return ok(await service.decide_as(run_id, body.decisions, caller))


@router.get("/memory", summary="Every domain tag with its memory notes")
async def memory(service: Service, _caller: Caller) -> Response:
    listing = await service.memory()
    return ok(MemoryListing(tags=[MemoryTag(tag=t, notes=n) for t, n in listing.items()]))


@router.get("/memory/{tag}/{note}", summary="One memory note with its text")
async def read_note(tag: TagPath, note: NoteName, service: Service, _caller: Caller) -> Response:
    return ok(await service.read_note(tag, note))


@router.put("/memory/{tag}/{note}", summary="Replace a memory note's text")
async def write_note(
    tag: TagPath, note: NoteName, body: MemoryNoteInput, service: Service, caller: Caller
) -> Response:
    return ok(await service.write_note_as(tag, note, body.content, caller))
