"""One interface to every knowledge base graphwright can use, chosen by settings:

- the embedded Oxigraph store in `$GRAPHWRIGHT_HOME/kb` (the default);
- any SPARQL 1.1 server (`GRAPHWRIGHT_SPARQL_URL`, `GRAPHWRIGHT_SPARQL_UPDATE_URL`);
- a real DKG v8 node (`GRAPHWRIGHT_DKG_NODE_URL`), through the `dkg` client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graphwright.errors import Conflict
from graphwright.knowledge.jsonld import AssetDraft
from graphwright.knowledge.schemas import (
    AssetContent,
    AssetMetadata,
    CollectionSummary,
    PublishedCollection,
    QueryAnswer,
)
from graphwright.knowledge.ual import Ual
from graphwright.settings import Settings


class NumberTaken(Conflict):
    """The collection number was taken in the store by another writer; `last` is the highest."""

    def __init__(self, number: int, last: int) -> None:
        super().__init__(f"Knowledge collection number {number} is already taken")
        self.last = last


class KnowledgeBackend(Protocol):
    kind: str
    """"embedded", "sparql" or "dkg-node"."""

    @property
    def description(self) -> str: ...

    async def publish(
        self,
        drafts: Sequence[AssetDraft],
        *,
        number: int,
        approved_by: str | None,
        request_id: str | None,
        revision_of: Ual | None = None,
        synthetic: bool = False,
    ) -> PublishedCollection:
        """Publish one knowledge collection, all of it or nothing, as collection `number`
        where the backend numbers collections itself (a DKG node takes the chain's). Raises
        `NumberTaken` when another writer holds that number."""
        ...

    async def remove(self, collections: Sequence[Ual]) -> None:
        """Remove whole collections, all of them or none, or refuse (InvalidInput) where the
        backend cannot remove what it published."""
        ...

    async def last_number(self) -> int:
        """The highest collection number in the store (0 when the backend does not number)."""
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

    def start_query_workers(self) -> None:
        """Start the processes that check or answer people's queries now, in the background,
        rather than on the first query."""
        ...

    async def aclose(self) -> None: ...


def open_backend(settings: Settings) -> KnowledgeBackend:
    """The backend the settings name: a DKG node, a SPARQL server, else the embedded store."""
    from graphwright.knowledge.backends.sparql_kb import SparqlKnowledgeBase
    from graphwright.knowledge.backends.stores import EmbeddedStore, RemoteSparqlStore

    if settings.dkg_node_url:
        from graphwright.knowledge.backends.dkg_node import DkgNodeKnowledgeBase

        return DkgNodeKnowledgeBase.from_settings(settings)
    if settings.sparql_url:
        token = settings.sparql_token.get_secret_value() if settings.sparql_token else None
        headers = {"Authorization": f"Bearer {token}"} if token else None
        store = RemoteSparqlStore(settings.sparql_url, settings.sparql_update_url, headers=headers)
        return SparqlKnowledgeBase(store, kind="sparql")
    return SparqlKnowledgeBase(EmbeddedStore(settings.knowledge_path), kind="embedded")
