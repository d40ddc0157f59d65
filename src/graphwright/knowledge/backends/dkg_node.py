"""The knowledge base on a real DKG v8 node, through OriginTrail's own client (`dkg` 8.1.0).

Reads need only the node: `get` runs the node's get operation, queries go to its
`/v1/direct-query` (SELECT and CONSTRUCT only), and metadata and collection lists are SELECTs on
the `<metadata:graph>` the node writes. Publishing also needs a wallet key (PRIVATE_KEY): a DKG
collection is minted by a transaction on the node's chain, which the client signs with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import aiohttp
import anyio
import pyoxigraph as ox
from dkg import AsyncDKG
from dkg.constants import BLOCKCHAINS, OutputTypes
from dkg.exceptions import DKGException, NodeRequestError
from dkg.providers import AsyncBlockchainProvider, AsyncNodeHTTPProvider
from dkg.services.blockchain_services.async_blockchain_service import AsyncBlockchainService
from pyld import jsonld
from web3.exceptions import Web3Exception

from graphwright.errors import InvalidInput, NotFound
from graphwright.knowledge import layout
from graphwright.knowledge import vocab as v
from graphwright.knowledge.backends.sparql_kb import SparqlKnowledgeBase
from graphwright.knowledge.backends.stores import StoreUnavailable
from graphwright.knowledge.jsonld import AssetDraft, Triple
from graphwright.knowledge.query_check import CheckedQuery, check_query
from graphwright.knowledge.query_workers import QueryWorkers
from graphwright.knowledge.schemas import (
    AssetContent,
    AssetMetadata,
    CollectionSummary,
    PublishedCollection,
    QueryAnswer,
    Term,
)
from graphwright.knowledge.sparql import Deadline, QueryTimeout, graph_answer
from graphwright.knowledge.ual import Ual

if TYPE_CHECKING:
    from graphwright.settings import Settings

INTERNAL_LIMIT = 100_000  # rows for the knowledge base's own reads, which are all selective
INTERNAL_TIMEOUT = 60.0
CLIENT_NOT_FOUND = "Unable to find assertion on the network!"  # dkg.py's own FAILED message
EXPORT_REFUSED = (
    "A DKG node cannot export its whole store: its direct-query endpoint reads the graphs of "
    "knowledge assets, not every quad. Export is for the embedded store and SPARQL servers; "
    "read a DKG node's collections one by one with get"
)
REMOVE_REFUSED = (
    "A DKG node cannot remove published collections: what is minted on its chain stays there. "
    "Sample data is only ever loaded into the embedded store, where it can be removed"
)
_XSD_STRING = v.XSD + "string"


class DirectQueryStore:
    """The node's `/v1/direct-query` as a read-only triple store, so that the SPARQL layout's
    own readers (metadata) run on a node unchanged."""

    def __init__(self, dkg: AsyncDKG, node_url: str) -> None:
        self.description = f"DKG node at {node_url}"
        self._dkg = dkg
        self._workers = QueryWorkers()

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        return await self._answer(check_query(sparql), limit=limit, timeout=timeout)

    async def user_query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        checked = await self._workers.check(sparql, timeout=timeout)
        return await self._answer(checked, limit=limit, timeout=timeout)

    async def _answer(self, checked: CheckedQuery, *, limit: int, timeout: float) -> QueryAnswer:
        sparql, kind = checked.text, checked.kind
        if kind not in ("SELECT", "CONSTRUCT"):
            raise InvalidInput(
                f"A DKG node's direct-query answers SELECT and CONSTRUCT only, not {kind}: "
                "write the ASK as a SELECT with LIMIT 1, the DESCRIBE as a CONSTRUCT"
            )
        try:
            with anyio.fail_after(timeout):
                data = await self._dkg.graph.query(sparql)
        except TimeoutError:
            raise QueryTimeout(timeout) from None
        except DKGException as exc:
            raise _node_error(exc, self.description) from None
        deadline = Deadline(timeout)
        # The answer's size is the query's choice: it is converted off the event loop.
        if checked.form == "graph":
            return await asyncio.to_thread(_graph_answer, data, limit=limit, deadline=deadline)
        return await asyncio.to_thread(_select_answer, checked.variables, data, limit=limit)

    async def update(self, sparql: str) -> None:
        raise InvalidInput(
            "A DKG node takes no SPARQL updates: knowledge is published to it as collections"
        )

    async def dump(self) -> bytes:
        raise InvalidInput(EXPORT_REFUSED)

    def start_query_workers(self) -> None:
        self._workers.start()

    async def aclose(self) -> None:
        """The query workers stop; the client opens one HTTP session per request."""
        self._workers.close()


class DkgNodeKnowledgeBase:
    """A DKG v8 node as graphwright's knowledge base. Without a private key it is read-only."""

    kind = "dkg-node"

    def __init__(
        self,
        node_url: str,
        blockchain_id: str,
        *,
        auth_token: str | None = None,
        private_key: str | None = None,
        rpc_url: str | None = None,
        max_retries: int = 120,
        frequency: float = 0.5,
        epochs: int = 2,
        blockchain_service: AsyncBlockchainService | None = None,
    ) -> None:
        """`max_retries` and `frequency` (seconds) pace the polling of the node's operations;
        `epochs` is how long a published collection is paid to be kept. `blockchain_service`
        replaces the client's on-chain calls (a chain other than its own contracts, tests)."""
        self.node_url = node_url.rstrip("/")
        self.blockchain_id = blockchain_id
        self.max_retries = max_retries
        self.frequency = frequency
        self.epochs = epochs
        node = AsyncNodeHTTPProvider(self.node_url, "v1", auth_token)
        chain = _blockchain(blockchain_id, private_key, rpc_url) if private_key else None
        self._dkg = AsyncDKG(node, chain)
        if blockchain_service is not None:
            self._dkg.blockchain_service = blockchain_service
            self._dkg.asset.blockchain_service = blockchain_service
        self._store = DirectQueryStore(self._dkg, self.node_url)
        # The SPARQL layout's reader, on the node's metadata graph: one way to read metadata.
        self._reader = SparqlKnowledgeBase(self._store, kind=self.kind, chain=blockchain_id)

    @classmethod
    def from_settings(cls, settings: Settings) -> DkgNodeKnowledgeBase:
        assert settings.dkg_node_url
        token, key = settings.dkg_node_token, settings.private_key
        return cls(
            settings.dkg_node_url,
            settings.dkg_blockchain,
            auth_token=token.get_secret_value() if token else None,
            private_key=key.get_secret_value() if key else None,
        )

    @property
    def description(self) -> str:
        mode = "publishing" if self.can_publish else "read-only: no PRIVATE_KEY"
        return f"DKG node at {self.node_url} on {self.blockchain_id} ({mode})"

    @property
    def can_publish(self) -> bool:
        return self._dkg.manager.blockchain_provider is not None

    def _polling(self) -> dict[str, Any]:
        return {"max_number_of_retries": self.max_retries, "frequency": self.frequency}

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
        """Publish through the node and mint on chain, which numbers the collection (`number`
        is not used). Who approved, the request and the synthetic flag stay in graphwright's
        own records: a node writes only its own metadata."""
        if not self.can_publish:
            raise InvalidInput(
                "publishing to a DKG node needs PRIVATE_KEY (the key of a funded wallet on "
                f"{self.blockchain_id}, which signs the collection's transaction); reads work "
                "without it"
            )
        if not drafts:
            raise InvalidInput("Nothing to publish: the collection has no knowledge asset")
        if revision_of is not None:
            await self.metadata(revision_of)  # NotFound for a UAL that was never published
        options = {"epochs_num": self.epochs, **self._polling()}
        try:
            result = await self._dkg.asset.create(_content(drafts), options)
        except NodeRequestError as exc:
            raise _node_error(exc, self._store.description) from None
        except (Web3Exception, aiohttp.ClientError, OSError) as exc:
            rpc = self._dkg.manager.blockchain_provider.rpc_uri
            raise StoreUnavailable(
                f"Publishing failed on the chain {self.blockchain_id} (RPC {rpc}): {exc}"
            ) from None
        except (DKGException, ValueError) as exc:
            raise StoreUnavailable(f"Publishing to the DKG node failed: {exc}") from None
        return _published(result, drafts)

    async def last_number(self) -> int:
        return 0  # the chain numbers a node's collections

    async def get(self, ual: Ual) -> AssetContent:
        options = {"content_type": "public", "output_format": OutputTypes.NQUADS.value}
        try:
            result = await self._dkg.asset.get(str(ual), options | self._polling())
        except DKGException as exc:
            raise _node_error(exc, self._store.description) from None
        except ValueError as exc:  # the client could not read the node's triples
            raise StoreUnavailable(f"The DKG node's answer for {ual} is not RDF: {exc}") from None
        lines = result.get("assertion")
        if lines is None:
            raise self._get_failed(ual, result["operation"]["get"])
        return AssetContent(ual=str(ual), public=list(lines))

    def _get_failed(self, ual: Ual, operation: dict[str, Any]) -> Exception:
        message = operation.get("errorMessage") or "no reason given"
        if "no asset" in message.lower():
            return NotFound(f"No knowledge asset {ual} on the DKG: {message}")
        if message == CLIENT_NOT_FOUND:
            return NotFound(
                f"The DKG node returned no content for {ual}: no node holds it, or the node "
                f"did not finish within {self.max_retries} polls {self.frequency:g} s apart"
            )
        kind = operation.get("errorType") or operation.get("status")
        return StoreUnavailable(f"The DKG node could not get {ual}: {kind}: {message}")

    async def metadata(self, ual: Ual) -> AssetMetadata:
        return await self._reader.metadata(ual)

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        return await self._store.user_query(sparql, limit=limit, timeout=timeout)

    async def collections(
        self, *, search: str | None, offset: int, limit: int
    ) -> list[CollectionSummary]:
        page = await self._select(collections_query(search=search, offset=offset, limit=limit))
        first_graphs = [f"{row['kc']['value']}/1/public" for row in page.rows]
        names: dict[str, str] = {}
        types: dict[str, set[str]] = {}
        if first_graphs:
            labels = await self._select(layout.labels_query(first_graphs))
            for row in labels.rows:
                kc = row["g"]["value"].removesuffix("/1/public")
                if "name" in row:
                    names.setdefault(kc, row["name"]["value"])
                if "type" in row:
                    types.setdefault(kc, set()).add(row["type"]["value"])
        return [
            CollectionSummary(
                ual=row["kc"]["value"],
                name=names.get(row["kc"]["value"]),
                types=sorted(types.get(row["kc"]["value"], ())),
                assets=int(row["assets"]["value"]),
                publish_time=row.get("time", {}).get("value"),
            )
            for row in page.rows
        ]

    async def remove(self, collections: Sequence[Ual]) -> None:
        raise InvalidInput(REMOVE_REFUSED)

    async def export(self) -> bytes:
        raise InvalidInput(EXPORT_REFUSED)

    def start_query_workers(self) -> None:
        self._store.start_query_workers()

    async def aclose(self) -> None:
        await self._store.aclose()

    async def _select(self, sparql: str) -> QueryAnswer:
        return await self._store.query(sparql, limit=INTERNAL_LIMIT, timeout=INTERNAL_TIMEOUT)


def collections_query(*, search: str | None, offset: int, limit: int) -> str:
    """Collections newest first, by the publish time a node records (it numbers nothing)."""
    text_filter = ""
    if search:
        needle = ox.Literal(search.lower())
        text_filter = (
            f"FILTER EXISTS {{ GRAPH <{v.METADATA_GRAPH}> {{ ?kc dkg:hasNamedGraph ?anyGraph }} "
            f"GRAPH ?anyGraph {{ ?anyS ?anyP ?text }} "
            f"FILTER(isLiteral(?text) && CONTAINS(LCASE(STR(?text)), {needle})) }}"
        )
    return f"""{layout.PREFIXES}
SELECT ?kc ?time (COUNT(DISTINCT ?ka) AS ?assets) WHERE {{
  GRAPH <{v.METADATA_GRAPH}> {{
    ?kc dkg:hasKnowledgeAsset ?ka .
    OPTIONAL {{ ?kc dkg:publishTime ?time }}
  }}
  {text_filter}
}} GROUP BY ?kc ?time ORDER BY DESC(?time) ?kc OFFSET {offset} LIMIT {limit}"""


def node_term(text: str) -> Term:
    """A term as the node's SELECT rows write it (Comunica's strings) in SPARQL JSON: a bare
    IRI, `_:b0`, or a literal `"value"`, `"value"@lang`, `"value"^^datatype`. The value is not
    escaped, so its closing quote is the last one."""
    if text.startswith('"'):
        end = text.rfind('"')
        term: Term = {"type": "literal", "value": text[1:end]}
        suffix = text[end + 1 :]
        if suffix.startswith("@"):
            term["xml:lang"] = suffix[1:]
        elif suffix.startswith("^^") and suffix[2:].strip("<>") != _XSD_STRING:
            term["datatype"] = suffix[2:].strip("<>")
        return term
    if text.startswith("_:"):
        return {"type": "bnode", "value": text[2:]}
    return {"type": "uri", "value": text}


def _select_answer(variables: Sequence[str], data: Any, *, limit: int) -> QueryAnswer:
    if not isinstance(data, list):
        raise StoreUnavailable(f"The DKG node answered a SELECT with {type(data).__name__}")
    rows = [
        {name: node_term(str(row[name])) for name in variables if row.get(name) is not None}
        for row in data[:limit]
    ]
    return QueryAnswer(
        form="select",
        variables=list(variables),
        rows=rows,
        truncated=len(data) > limit,
        row_limit=limit,
    )


def _graph_answer(data: Any, *, limit: int, deadline: Deadline) -> QueryAnswer:
    try:
        quads = list(ox.parse((data or "").encode(), ox.RdfFormat.N_QUADS))
    except (SyntaxError, AttributeError) as exc:
        raise StoreUnavailable(f"The DKG node's CONSTRUCT answer is not N-Triples: {exc}") from None
    return graph_answer(quads, limit=limit, deadline=deadline)


def _node_error(exc: DKGException, node: str) -> Exception:
    """What went wrong with a request to the node, for a person to act on."""
    cause = exc.__context__
    status = getattr(cause, "status", None)
    if status == 401:
        return StoreUnavailable(
            f"The {node} refused graphwright's token: set GRAPHWRIGHT_DKG_NODE_TOKEN"
        )
    if status == 400:
        return InvalidInput(f"The {node} refused the request: {exc}")
    if isinstance(exc, NodeRequestError):
        return StoreUnavailable(f"The {node} cannot be reached or failed: {exc}")
    return StoreUnavailable(f"The dkg client failed talking to the {node}: {exc}")


def _blockchain(
    blockchain_id: str, private_key: str, rpc_url: str | None
) -> AsyncBlockchainProvider:
    known = {chain for chains in BLOCKCHAINS.values() for chain in chains}
    if blockchain_id not in known:
        raise InvalidInput(
            f"The dkg client knows no chain '{blockchain_id}'; "
            f"use one of {', '.join(sorted(known))}"
        )
    try:
        # The provider also signs with PRIVATE_KEY from the environment if set: same check.
        provider = AsyncBlockchainProvider(blockchain_id, rpc_url)
        provider.set_account(private_key)
    except (ValueError, TypeError):
        # Never echo the key itself: the message only says what is wrong with it.
        raise InvalidInput("PRIVATE_KEY is not a wallet key (64 hex digits)") from None
    return provider


def _content(drafts: Sequence[AssetDraft]) -> dict[str, Any]:
    """The drafts as dkg.py's create takes them: expanded JSON-LD (no context to fetch)."""
    content = {"public": _expanded([t for d in drafts for t in d.public])}
    private = [t for d in drafts for t in d.private]
    if private:
        content["private"] = _expanded(private)
    return content


def _expanded(triples: list[Triple]) -> Any:
    nquads = "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
    return jsonld.from_rdf(nquads, {"format": "application/n-quads"})


def _published(result: dict[str, Any], drafts: Sequence[AssetDraft]) -> PublishedCollection:
    text = result.get("UAL")
    if not text:
        publish = result.get("operation", {}).get("publish", {})
        reason = publish.get("errorMessage") or publish.get("status") or "no reason given"
        raise StoreUnavailable(f"The DKG node did not publish the collection: {reason}")
    try:
        ual = Ual.parse(text)
    except InvalidInput:
        raise StoreUnavailable(
            f"The collection was minted, but the transaction reported no collection id ({text})"
        ) from None
    receipt = result["operation"]["mintKnowledgeCollection"]
    # One knowledge asset per subject; private triples add one subject holding their root.
    count = len(drafts) + (1 if any(d.private for d in drafts) else 0)
    return PublishedCollection(
        ual=str(ual),
        knowledge_assets=[str(ual.asset(n)) for n in range(1, count + 1)],
        publish_tx=receipt["transactionHash"],
        publish_time=datetime.now(UTC).replace(microsecond=0),
        triples=sum(len(d.public) for d in drafts),
    )
