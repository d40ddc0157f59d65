"""Knowledge-base rules: nothing is published without an approved publication request. The
reads (assets, metadata, states, read-only SPARQL) are KnowledgeReads', which this extends.

A publish is a small saga over two stores: the request is marked `publishing` (one SQL
transaction), the collection is written (one triple-store transaction), and the request is marked
`published`. `recover()` finishes, at start-up, any request a crash left in between: the
collection carries its request id, so either it is there and the request is marked published, or
it is not and the request waits for approval again.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import anyio
import orjson
from sqlalchemy.exc import IntegrityError

from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService, person
from graphwright.db import Database
from graphwright.errors import Conflict, GraphwrightError, InvalidInput, NotFound
from graphwright.knowledge import layout
from graphwright.knowledge.backends import KnowledgeBackend, NumberTaken
from graphwright.knowledge.jsonld import (
    AssetDraft,
    canonical_hash,
    checked_drafts,
    default_title,
    graph_document,
)
from graphwright.knowledge.models import PublicationRequest, RequestStatus
from graphwright.knowledge.reads import KnowledgeReads
from graphwright.knowledge.repository import RequestRepository
from graphwright.knowledge.schemas import (
    PublicationRequestView,
    PublishedCollection,
    SampleCollection,
    SampleDataRemoval,
)
from graphwright.knowledge.ual import Ual
from graphwright.settings import Settings

logger = logging.getLogger(__name__)

NUMBER_ATTEMPTS = 5
# Servers sharing a database race for collection numbers; the loser retries (see
# _allocate_number), up to 200 times with pauses of up to 20 x 5 ms.
ALLOCATION_ATTEMPTS = 200
ALLOCATION_PAUSE = 0.005
DECIDED = (
    RequestStatus.PUBLISHED,
    RequestStatus.REJECTED,
    RequestStatus.PUBLISHING,
    RequestStatus.REMOVING,
    RequestStatus.REMOVED,
)
SAMPLE_DATA_ACTOR = "graphwright sample data"
# Told of each request a person decided (published or rejected), whichever door they used.
DecisionListener = Callable[[PublicationRequestView], None]


def decider(principal: Principal) -> str:
    """Who approves or rejects: approving publishes for everyone to read."""
    return person(principal, "Approving or rejecting a publication")


def _now() -> datetime:
    return datetime.now(UTC)


def _view(row: PublicationRequest) -> PublicationRequestView:
    return PublicationRequestView.model_validate(row, from_attributes=True)


class KnowledgeService(KnowledgeReads):
    def __init__(
        self,
        db: Database,
        backend: KnowledgeBackend,
        *,
        row_limit: int = 1000,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(db, backend, row_limit=row_limit, timeout=timeout)
        self._started = False
        self._starting = anyio.Lock()
        self._listeners: list[DecisionListener] = []

    @classmethod
    def from_settings(
        cls, db: Database, backend: KnowledgeBackend, settings: Settings
    ) -> KnowledgeService:
        return cls(
            db,
            backend,
            row_limit=settings.kb_row_limit,
            timeout=settings.kb_query_timeout_seconds,
        )

    async def ensure_started(self, *, sample_data: bool) -> None:
        """Once per process: settle interrupted publishes, and give an empty embedded store its
        sample assets."""
        async with self._starting:
            if self._started:
                return
            await self.recover()
            if sample_data and self.backend.kind == "embedded":
                await self.load_sample_data()
            self._started = True

    def start_query_workers(self) -> None:
        """Start the processes that check and answer people's queries now, in the background,
        so that the first query waits for none of them (`graphwright serve` does, once up)."""
        self.backend.start_query_workers()

    async def aclose(self) -> None:
        await self.backend.aclose()

    # -- publication requests ------------------------------------------------------------------

    def add_decision_listener(self, listener: DecisionListener) -> None:
        """Call `listener` with each request once it is published or rejected, in the caller's
        thread, after the decision committed. It must not block: schedule work elsewhere."""
        self._listeners.append(listener)

    def remove_decision_listener(self, listener: DecisionListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _decided(self, request: PublicationRequestView) -> PublicationRequestView:
        for listener in list(self._listeners):
            try:
                listener(request)
            except Exception:  # a listener's failure never undoes a committed decision
                logger.exception("A decision listener failed on request %s", request.id)
        return request

    async def file_request(self, content: Any, **options: Any) -> PublicationRequestView:
        """`request_publication` from a person or a tool: a `revision_of` must name a
        collection this knowledge base holds, so that the request fails now, not at approval."""
        if options.get("revision_of") is not None:
            await self.require_collection(options["revision_of"], field="revisionOf")
        return await self._sync(lambda: self.request_publication(content, **options))

    async def require_collection(self, ual: str, *, field: str) -> None:
        """InvalidInput unless `ual` names a published collection (or one of its assets)."""
        try:
            await self.backend.metadata(Ual.parse(ual))
        except NotFound:
            raise InvalidInput(
                f"{field}: {ual} names no collection in this knowledge base; give the UAL of "
                "a published collection"
            ) from None

    def request_publication(
        self,
        content: Any,
        *,
        requested_by: str,
        title: str | None = None,
        revision_of: str | None = None,
        source: str | None = None,
        conversation_id: str | None = None,
        synthetic: bool = False,
        details: dict[str, Any] | None = None,
        validated: bool = False,
    ) -> PublicationRequestView:
        """File a request; the content is checked now, so a person only sees what can publish.
        `details` is what the source records beside it (never published); `validated` says the
        source validated exactly this content, which approval must then publish unchanged."""
        drafts = checked_drafts(content)
        if revision_of is not None:
            revision_of = str(Ual.parse(revision_of))
        row = PublicationRequest(
            id=str(uuid.uuid4()),
            status=RequestStatus.PENDING,
            title=(title or default_title(drafts))[:500],
            content=content,
            revision_of=revision_of,
            source=source,
            conversation_id=conversation_id,
            requested_by=requested_by,
            created_at=_now(),
            synthetic=synthetic,
            details=details,
            validated_hash=canonical_hash(content) if validated else None,
        )
        with self._db.write() as session:
            RequestRepository(session).add(row)
        return _view(row)

    def list_requests(
        self,
        *,
        status: str | None = None,
        conversation_id: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[PublicationRequestView], int]:
        with self._db.read() as session:
            rows, total = RequestRepository(session).page(
                status=status, conversation_id=conversation_id, offset=offset, limit=limit
            )
            return [_view(row) for row in rows], total

    def get_request(self, request_id: str) -> PublicationRequestView:
        with self._db.read() as session:
            return _view(self._row(RequestRepository(session), request_id))

    def requests_for(
        self, caller: Principal, *, status: str | None = None, offset: int = 0, limit: int = 50
    ) -> tuple[list[PublicationRequestView], int]:
        """The requests `caller` may see: a token scoped to one conversation sees only the
        requests filed from that conversation."""
        return self.list_requests(
            status=status, conversation_id=caller.conversation_id, offset=offset, limit=limit
        )

    def request_for(self, caller: Principal, request_id: str) -> PublicationRequestView:
        """One request, if `caller` may see it (as `requests_for`)."""
        request = self.get_request(request_id)
        if caller.conversation_id is not None:
            AuthService.authorize(caller, request.conversation_id or "")
        return request

    async def approve(
        self,
        request_id: str,
        *,
        approver: str,
        content: Any | None = None,
        revalidated: dict[str, Any] | None = None,
    ) -> PublicationRequestView:
        """Publish what the request holds, or the person's edited `content`, and record who
        approved it. A request already decided is refused. A request whose source validated
        its content publishes that content: an edit that says something else is refused,
        unless the source validated the edit too (`revalidated`, its new details)."""
        drafts, revision_of, synthetic = await self._sync(
            self._start_publishing, request_id, approver, content, revalidated
        )
        try:
            published = await self._publish(drafts, request_id, approver, revision_of, synthetic)
        except GraphwrightError as exc:
            await self._sync(self._mark_failed, request_id, str(exc))
            raise
        except Exception as exc:
            await self._sync(self._mark_failed, request_id, f"{type(exc).__name__}: {exc}")
            raise
        private = {
            ual: [" ".join(map(str, t)) + " ." for t in draft.private]
            for ual, draft in zip(published.knowledge_assets, drafts, strict=True)
            if draft.private
        }
        done = await self._sync(self._mark_published, request_id, published.ual, private)
        return self._decided(done)

    async def _publish(
        self,
        drafts: list[AssetDraft],
        request_id: str,
        approver: str,
        revision_of: Ual | None,
        synthetic: bool,
    ) -> PublishedCollection:
        floor = 0
        for _ in range(NUMBER_ATTEMPTS):
            number = await self._sync(self._allocate_number, request_id, floor)
            try:
                return await self.backend.publish(
                    drafts,
                    number=number,
                    approved_by=approver,
                    request_id=request_id,
                    revision_of=revision_of,
                    synthetic=synthetic,
                )
            except NumberTaken as taken:
                # The store holds collections this database never numbered: go past them.
                floor = taken.last
        raise Conflict(f"No free collection number after {NUMBER_ATTEMPTS} tries; try again")

    def _allocate_number(self, request_id: str, floor: int) -> int:
        """The next collection number, held by this request; unique across servers that share
        the database. A concurrent taker makes this transaction fail: it tries again after a
        random pause that grows with each loss, so that racing servers stop colliding."""
        for attempt in range(ALLOCATION_ATTEMPTS):
            try:
                with self._db.write() as session:
                    requests = RequestRepository(session)
                    number = max(requests.highest_collection_number(), floor) + 1
                    self._row(requests, request_id).collection_number = number
                return number
            except IntegrityError:
                time.sleep(random.uniform(0, ALLOCATION_PAUSE * min(attempt + 1, 20)))
        raise Conflict("Could not allocate a collection number; try again")

    def reject(self, request_id: str, *, by: str, reason: str) -> PublicationRequestView:
        if not reason.strip():
            raise InvalidInput("A rejection needs a reason")
        with self._db.write() as session:
            row = self._undecided(RequestRepository(session), request_id)
            row.status = RequestStatus.REJECTED
            row.decided_by, row.decided_at, row.reason = by, _now(), reason.strip()
            rejected = _view(row)
        return self._decided(rejected)

    async def publish_now(
        self,
        content: Any,
        *,
        actor: str,
        title: str | None = None,
        revision_of: str | None = None,
        synthetic: bool = False,
        source: str | None = None,
    ) -> PublicationRequestView:
        """For a person acting directly (the CLI, sample data): request and approve at once."""
        request = self.request_publication(
            content,
            requested_by=actor,
            title=title,
            revision_of=revision_of,
            source=source,
            synthetic=synthetic,
        )
        return await self.approve(request.id, approver=actor)

    async def recover(self) -> int:
        """Settle requests a crash left `publishing`, and finish a removal of the sample data
        a crash left `removing`; how many requests there were."""
        with self._db.read() as session:
            stuck = [row.id for row in RequestRepository(session).with_status("publishing")]
        for request_id in stuck:
            answer = await self.backend.query(
                layout.request_query(request_id), limit=1, timeout=self.timeout
            )
            ual = answer.rows[0]["kc"]["value"] if answer.rows else None
            await self._sync(self._settle, request_id, ual)
        removing = await self._sync(self._sample_in, RequestStatus.REMOVING)
        if removing:
            await self.backend.remove([Ual.parse(c.ual) for c in removing])
            await self._sync(self._set_sample_status, RequestStatus.REMOVING, RequestStatus.REMOVED)
        return len(stuck) + len(removing)

    def _start_publishing(
        self,
        request_id: str,
        approver: str,
        content: Any | None,
        revalidated: dict[str, Any] | None = None,
    ) -> tuple[list[AssetDraft], Ual | None, bool]:
        with self._db.write() as session:
            row = self._undecided(RequestRepository(session), request_id)
            if content is not None:
                self._edit(row, content, revalidated)
            drafts = checked_drafts(row.content)
            row.status = RequestStatus.PUBLISHING
            row.decided_by, row.decided_at, row.reason = approver, _now(), None
            revision_of = Ual.parse(row.revision_of) if row.revision_of else None
            return drafts, revision_of, row.synthetic

    @staticmethod
    def _edit(row: PublicationRequest, content: Any, revalidated: dict[str, Any] | None) -> None:
        if revalidated is not None:
            row.content, row.details = content, revalidated
            row.validated_hash = canonical_hash(content)
            return
        if row.validated_hash is not None and canonical_hash(content) != row.validated_hash:
            source = f" ({row.source})" if row.source else ""
            raise Conflict(
                f"Publication request {row.id} holds the document its source{source} "
                "validated, and approval publishes exactly that document: approve or reject "
                "it as it is, or edit it where it was proposed (a knowledge-miner candidate on "
                "its run's page), where the edit is validated before it is published"
            )
        row.content = content

    def _mark_failed(self, request_id: str, reason: str) -> None:
        with self._db.write() as session:
            row = self._row(RequestRepository(session), request_id)
            row.status, row.reason = RequestStatus.FAILED, reason[:2000]

    def _mark_published(
        self, request_id: str, ual: str, private: dict[str, list[str]]
    ) -> PublicationRequestView:
        with self._db.write() as session:
            row = self._row(RequestRepository(session), request_id)
            row.status, row.ual, row.private_triples = RequestStatus.PUBLISHED, ual, private or None
            return _view(row)

    def _settle(self, request_id: str, ual: str | None) -> None:
        with self._db.write() as session:
            row = self._row(RequestRepository(session), request_id)
            if ual:
                row.status, row.ual = RequestStatus.PUBLISHED, ual
            else:
                row.status = RequestStatus.PENDING
                row.reason = "Publishing was interrupted before it completed; approve it again"

    def _undecided(self, requests: RequestRepository, request_id: str) -> PublicationRequest:
        row = self._row(requests, request_id, for_update=True)
        if row.status in DECIDED:
            raise Conflict(
                f"Publication request {request_id} is already {row.status}"
                + (f" by {row.decided_by}" if row.decided_by else "")
            )
        return row

    @staticmethod
    def _row(
        requests: RequestRepository, request_id: str, *, for_update: bool = False
    ) -> PublicationRequest:
        row = requests.get(request_id, for_update=for_update)
        if row is None:
            raise NotFound(f"No publication request {request_id}")
        return row

    async def load_sample_data(self) -> int:
        """Publish the bundled sample assets into an empty knowledge base, unless a person
        removed them; how many collections."""
        if await self._sync(self._sample_removed):
            return 0
        if await self.backend.collections(search=None, offset=0, limit=1):
            return 0
        bundle = orjson.loads(
            resources.files("graphwright.knowledge.sample_data")
            .joinpath("assets.json")
            .read_bytes()
        )
        for collection in bundle["collections"]:
            await self.publish_now(
                collection["content"],
                actor=SAMPLE_DATA_ACTOR,
                title=collection["title"],
                synthetic=True,
                source="sample data",
            )
        return len(bundle["collections"])

    def _sample_removed(self) -> bool:
        with self._db.read() as session:
            return RequestRepository(session).sample_removed()

    def sample_collections(self) -> list[SampleCollection]:
        """The sample data's collections still published: what `remove_sample_data` removes."""
        return self._sample_in(RequestStatus.PUBLISHED)

    def _sample_in(self, status: RequestStatus) -> list[SampleCollection]:
        with self._db.read() as session:
            rows = RequestRepository(session).sample(status)
            return [SampleCollection(ual=row.ual, title=row.title) for row in rows if row.ual]

    async def remove_sample_data(self, *, actor: str) -> SampleDataRemoval:
        """Remove the sample data's collections from the knowledge base, all or none, and
        keep their requests as `removed`: their collection numbers are never given again, and
        the sample data is not loaded again at the next start.

        A small saga, as a publish: the requests are marked `removing` (one SQL transaction),
        the collections removed (one triple-store update), and the requests marked `removed`.
        If the store refuses, the requests are published again; `recover()` finishes a removal
        a crash interrupted."""
        marked = await self._sync(self._start_removing, actor)
        try:
            await self.backend.remove([Ual.parse(c.ual) for c in marked])
        except Exception:
            await self._sync(
                self._set_sample_status, RequestStatus.REMOVING, RequestStatus.PUBLISHED
            )
            raise
        await self._sync(self._set_sample_status, RequestStatus.REMOVING, RequestStatus.REMOVED)
        return SampleDataRemoval(removed=marked)

    def _start_removing(self, actor: str) -> list[SampleCollection]:
        with self._db.write() as session:
            rows = RequestRepository(session).sample(RequestStatus.PUBLISHED, for_update=True)
            for row in rows:
                row.status = RequestStatus.REMOVING
                row.reason = (
                    f"Removed with the sample data by {actor} on {_now():%Y-%m-%d %H:%M} UTC"
                )
            return [SampleCollection(ual=row.ual, title=row.title) for row in rows if row.ual]

    def _set_sample_status(self, before: RequestStatus, after: RequestStatus) -> None:
        with self._db.write() as session:
            for row in RequestRepository(session).sample(before, for_update=True):
                row.status = after
                if after == RequestStatus.PUBLISHED:
                    row.reason = None

    # -- Graph Mode ----------------------------------------------------------------------------

    def request_graph_publication(
        self,
        conversation_id: str,
        graph: dict[str, Any],
        *,
        requested_by: str,
        node_ids: list[str] | None = None,
        title: str | None = None,
    ) -> PublicationRequestView:
        """File a request to publish a conversation's graph (or the chosen nodes and the edges
        between them): nodes become subjects, edges properties, edge evidence provenance."""
        content = graph_document(graph, node_ids, name=f"conversation '{conversation_id}'")
        return self.request_publication(
            content,
            requested_by=requested_by,
            title=title or f"Graph of conversation {conversation_id}",
            source="graph mode",
            conversation_id=conversation_id,
        )
