"""Knowledge-base reads: assets (public triples, and private ones from the publication
requests), JSON-LD, metadata, an asset's states, and read-only SPARQL within the configured row
and time limits, from whichever backend the settings chose. KnowledgeService adds publishing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import pyoxigraph as ox
from pyld import jsonld

from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.core.words import counted
from graphwright.db import Database
from graphwright.errors import InvalidInput, NotFound
from graphwright.knowledge import layout
from graphwright.knowledge.backends import KnowledgeBackend
from graphwright.knowledge.jsonld import load_document
from graphwright.knowledge.repository import RequestRepository
from graphwright.knowledge.schemas import (
    AssetContent,
    AssetMetadata,
    CollectionSummary,
    QueryAnswer,
)
from graphwright.knowledge.ual import Ual

T = TypeVar("T")
JSONLD_CONTEXT = "https://schema.org/"
MAX_STATES = 100  # revisions shown in an asset's history


class KnowledgeReads:
    def __init__(
        self,
        db: Database,
        backend: KnowledgeBackend,
        *,
        row_limit: int = 1000,
        timeout: float = 10.0,
    ) -> None:
        self._db = db
        self.backend = backend
        self.row_limit = row_limit
        self.timeout = timeout

    @staticmethod
    async def _sync(fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(fn, *args)

    async def get_asset(self, ual: str, *, private_for: Principal | None = None) -> AssetContent:
        """The asset's public triples; with `private_for`, its private ones too, if that caller
        may read them (Forbidden otherwise)."""
        parsed = Ual.parse(ual)
        content = await self.backend.get(parsed)
        if private_for is not None:
            content.private = await self._sync(self._private_triples, parsed, private_for)
        return content

    async def get_jsonld(self, ual: str, *, private_for: Principal | None = None) -> dict[str, Any]:
        """The asset as compact JSON-LD (schema.org as the vocabulary)."""
        content = await self.get_asset(ual, private_for=private_for)
        nquads = "\n".join(content.public + content.private) + "\n"
        options = {"format": "application/n-quads", "documentLoader": load_document}
        expanded = jsonld.from_rdf(nquads, options)
        compact = jsonld.compact(expanded, JSONLD_CONTEXT, {"documentLoader": load_document})
        return {**compact, "@context": JSONLD_CONTEXT}

    def _private_triples(self, ual: Ual, reader: Principal) -> list[str]:
        """Private triples stay with the conversation whose request published them: a token
        limited to another conversation may not read them."""
        with self._db.read() as session:
            row = RequestRepository(session).by_ual(str(ual.collection))
        if row is None:
            return []
        if reader.conversation_id is not None:
            AuthService.authorize(reader, row.conversation_id or "")
        if not row.private_triples:
            return []
        if ual.is_collection:
            return [line for lines in row.private_triples.values() for line in lines]
        return list(row.private_triples.get(str(ual), []))

    async def metadata(self, ual: str) -> AssetMetadata:
        """What the store records about the asset, and what its request's source recorded
        beside it (kept out of the public graph)."""
        parsed = Ual.parse(ual)
        metadata = await self.backend.metadata(parsed)
        if not parsed.is_collection and str(parsed) not in metadata.knowledge_assets:
            raise NotFound(
                f"No knowledge asset {parsed}: its collection holds "
                f"{counted(len(metadata.knowledge_assets), 'asset')}"
            )
        metadata.details = await self._sync(self._request_details, parsed)
        return metadata

    def _request_details(self, ual: Ual) -> dict[str, Any] | None:
        with self._db.read() as session:
            row = RequestRepository(session).by_ual(str(ual.collection))
            return row.details if row is not None else None

    async def states(self, ual: str) -> list[AssetMetadata]:
        """Every state of the collection holding `ual`, oldest first: the collections it
        revises, itself, then the later revisions that point back to it."""
        current = await self.metadata(str(Ual.parse(ual).collection))
        earlier: list[AssetMetadata] = []
        seen = {current.collection_ual}
        revision = current.revision_of
        while revision and len(earlier) < MAX_STATES:
            try:
                state = await self.metadata(str(Ual.parse(revision).collection))
            except NotFound:  # it revises a collection since removed (sample data)
                break
            if state.collection_ual in seen:
                break
            seen.add(state.collection_ual)
            earlier.append(state)
            revision = state.revision_of
        answer = await self.backend.query(
            layout.later_states_list_query(Ual.parse(current.collection_ual)),
            limit=MAX_STATES,
            timeout=self.timeout,
        )
        later = [await self.metadata(row["later"]["value"]) for row in answer.rows]
        later.sort(key=lambda state: (state.published_at_block or 0, state.collection_ual))
        return [*reversed(earlier), current, *later]

    async def query(
        self, sparql: str, *, limit: int | None = None, timeout: float | None = None
    ) -> QueryAnswer:
        """A read-only query: at most the configured rows and time, whatever the caller asks."""
        rows = min(limit or self.row_limit, self.row_limit)
        return await self.backend.query(sparql, limit=rows, timeout=timeout or self.timeout)

    async def collections(
        self, *, search: str | None = None, offset: int = 0, limit: int = 50
    ) -> list[CollectionSummary]:
        return await self.backend.collections(search=search, offset=offset, limit=limit)

    async def export(self, fmt: str = "nquads") -> bytes:
        nquads = await self.backend.export()
        if fmt == "nquads":
            return nquads
        if fmt == "trig":
            quads = ox.parse(nquads, ox.RdfFormat.N_QUADS)
            return ox.serialize(quads, format=ox.RdfFormat.TRIG)
        raise InvalidInput(f"Unknown export format '{fmt}': use nquads or trig")
