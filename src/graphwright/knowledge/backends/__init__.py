"""One interface to every knowledge base graphwright can use, chosen by settings:

- the embedded Oxigraph store in `$GRAPHWRIGHT_HOME/kb` (the default);
- any SPARQL 1.1 server (`GRAPHWRIGHT_SPARQL_URL`, `GRAPHWRIGHT_SPARQL_UPDATE_URL`);
- a real DKG v8 node (`GRAPHWRIGHT_DKG_NODE_URL`), through the `dkg` client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graphwright.knowledge.jsonld import AssetDraft
from graphwright.knowledge.schemas import (
    AssetContent,
    AssetMetadata,
    CollectionSummary,
    PublishedCollection,
    QueryAnswer,
)
from graphwright.knowledge.ual import Ual


class KnowledgeBackend(Protocol):
    kind: str
    """"embedded", "sparql" or "dkg-node"."""

    @property
    def description(self) -> str: ...

    async def publish(
        self,
        drafts: Sequence[AssetDraft],
        *,
        approved_by: str | None,
        request_id: str | None,
        revision_of: Ual | None = None,
        synthetic: bool = False,
    ) -> PublishedCollection:
        """Publish one knowledge collection, all of it or nothing."""
        ...

    async def get(self, ual: Ual) -> AssetContent:
        """The public triples of a collection or one of its assets; NotFound if unknown."""
        ...

    async def metadata(self, ual: Ual) -> AssetMetadata: ...

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        """A read-only query (checked first), cut at `limit` rows, stopped at `timeout`."""
        ...

    async def collections(
        self, *, search: str | None, offset: int, limit: int
    ) -> list[CollectionSummary]: ...

    async def export(self) -> bytes:
        """Every quad the knowledge base holds, as N-Quads."""
        ...

    async def aclose(self) -> None: ...
