"""The knowledge base on a SPARQL store (embedded Oxigraph or a server): DKG v8's layout, written
and read with SPARQL, so that DKG queries and clients port over unchanged."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime

from graphwright.errors import NotFound
from graphwright.knowledge import layout
from graphwright.knowledge import vocab as v
from graphwright.knowledge.backends import NumberTaken
from graphwright.knowledge.backends.stores import TripleStore
from graphwright.knowledge.jsonld import AssetDraft
from graphwright.knowledge.schemas import (
    AssetContent,
    AssetMetadata,
    CollectionSummary,
    PublishedCollection,
    QueryAnswer,
)
from graphwright.knowledge.ual import Ual

INTERNAL_LIMIT = 1_000_000  # rows for the knowledge base's own reads, which are all selective
INTERNAL_TIMEOUT = 60.0
# A text search scans every literal: it runs as a person's query does, stopped at this limit.
SEARCH_TIMEOUT = 10.0


class SparqlKnowledgeBase:
    """Publishes collections under the numbers the service allocates; reads assets, metadata
    and queries."""

    def __init__(
        self,
        store: TripleStore,
        *,
        kind: str = "embedded",
        chain: str = v.LOCAL_CHAIN,
        contract: str = v.LOCAL_CONTRACT,
        publisher_address: str = v.LOCAL_PUBLISHER_ADDRESS,
    ) -> None:
        self.store = store
        self.kind = kind
        self.chain = chain
        self.contract = contract.lower()
        self.publisher_address = publisher_address

    @property
    def description(self) -> str:
        return self.store.description

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
        if revision_of is not None:
            await self.metadata(revision_of)  # NotFound for a UAL that was never published
        record = self._record(number, approved_by, request_id, revision_of, synthetic)
        await self.store.update(layout.publish_update(record, drafts))
        if not await self._ask(layout.published_query(record.ual, record.tx)):
            raise NumberTaken(number, await self.last_number())
        assets = [str(record.ual.asset(n)) for n in range(1, len(drafts) + 1)]
        return PublishedCollection(
            ual=str(record.ual),
            knowledge_assets=assets,
            publish_tx=record.tx,
            publish_time=record.time,
            triples=sum(len(d.public) for d in drafts),
        )

    def _record(
        self,
        number: int,
        approved_by: str | None,
        request_id: str | None,
        revision_of: Ual | None,
        synthetic: bool,
    ) -> layout.CollectionRecord:
        ual = Ual(self.chain, self.contract, number)
        return layout.CollectionRecord(
            ual=ual,
            publisher_address=self.publisher_address,
            block=number,
            # No chain here: the "transaction" is a random 32-byte id, unique per publish, which
            # tells a publisher after its conditional insert whether the number became its own.
            tx="0x" + secrets.token_hex(32),
            time=datetime.now(UTC).replace(microsecond=0),
            approved_by=approved_by,
            request_id=request_id,
            revision_of=revision_of,
            synthetic=synthetic,
        )

    async def remove(self, collections: Sequence[Ual]) -> None:
        if collections:
            await self.store.update(layout.remove_update(collections))

    async def last_number(self) -> int:
        answer = await self._select(layout.LAST_NUMBER)
        last = answer.rows[0].get("last") if answer.rows else None
        return int(last["value"]) if last else 0

    async def get(self, ual: Ual) -> AssetContent:
        metadata = await self.metadata(ual)
        assets = [Ual.parse(a) for a in metadata.knowledge_assets]
        wanted = assets if ual.is_collection else [ual]
        if not ual.is_collection and ual not in assets:
            raise NotFound(f"No knowledge asset {ual}: its collection has {len(assets)}")
        answer = await self._select(layout.content_query(a.public_graph for a in wanted))
        lines = answer.triples.splitlines() if answer.triples else []
        return AssetContent(ual=str(ual), public=lines)

    async def metadata(self, ual: Ual) -> AssetMetadata:
        collection = ual.collection
        answer = await self._select(layout.metadata_query(collection))
        if not answer.rows:
            raise NotFound(f"No knowledge collection {collection} in this knowledge base")
        facts: dict[str, list[str]] = {}
        for row in answer.rows:
            facts.setdefault(row["p"]["value"], []).append(row["o"]["value"])
        later = await self._select(layout.later_states_query(collection))
        publisher = _first(facts, v.PUBLISHED_BY)
        return AssetMetadata(
            ual=str(ual),
            collection_ual=str(collection),
            publisher=publisher,
            owner=publisher.removeprefix(v.PUBLISHER_KEY) if publisher else None,
            publish_time=_first(facts, v.PUBLISH_TIME),
            publish_tx=_first(facts, v.PUBLISH_TX),
            published_at_block=_first(facts, v.PUBLISHED_AT_BLOCK),
            block_time=_first(facts, v.BLOCK_TIME),
            later_states=int(later.rows[0]["n"]["value"]) if later.rows else 0,
            revision_of=_first(facts, v.WAS_REVISION_OF),
            approved_by=_first(facts, v.APPROVED_BY),
            synthetic=_first(facts, v.SYNTHETIC) == "true",
            knowledge_assets=sorted(facts.get(v.HAS_KNOWLEDGE_ASSET, []), key=_asset_number),
        )

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        return await self.store.user_query(sparql, limit=limit, timeout=timeout)

    async def collections(
        self, *, search: str | None, offset: int, limit: int
    ) -> list[CollectionSummary]:
        listing = layout.collections_query(search=search, offset=offset, limit=limit)
        if search:
            answer = await self.store.user_query(
                listing, limit=INTERNAL_LIMIT, timeout=SEARCH_TIMEOUT
            )
        else:
            answer = await self._select(listing)
        summaries = []
        for row in answer.rows:
            first_graph = f"{row['kc']['value']}/1/public"
            labels = await self._select(layout.labels_query([first_graph]))
            names = [r["name"]["value"] for r in labels.rows if "name" in r]
            types = sorted({r["type"]["value"] for r in labels.rows if "type" in r})
            summaries.append(
                CollectionSummary(
                    ual=row["kc"]["value"],
                    name=names[0] if names else None,
                    types=types,
                    assets=int(row["assets"]["value"]),
                    publish_time=row.get("time", {}).get("value"),
                    synthetic=row.get("synthetic", {}).get("value") == "true",
                )
            )
        return summaries

    async def export(self) -> bytes:
        return await self.store.dump()

    def start_query_workers(self) -> None:
        self.store.start_query_workers()

    async def aclose(self) -> None:
        await self.store.aclose()

    async def _select(self, sparql: str) -> QueryAnswer:
        return await self.store.query(sparql, limit=INTERNAL_LIMIT, timeout=INTERNAL_TIMEOUT)

    async def _ask(self, sparql: str) -> bool:
        answer = await self.store.query(sparql, limit=1, timeout=INTERNAL_TIMEOUT)
        return bool(answer.boolean)


def _first(facts: dict[str, list[str]], predicate: str) -> str | None:
    values = facts.get(predicate)
    return values[0] if values else None


def _asset_number(ual: str) -> int:
    return int(ual.rsplit("/", 1)[1])
