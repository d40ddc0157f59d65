"""The DKG node adapter, through the real `dkg` client, against a stub node on a live server.

The on-chain step of a publish (the KnowledgeCollection contract's transaction) cannot run
here: a fake of the client's blockchain service stands in for it, and every other step (the
node's publish operation, the signatures, the UAL, reading the result back) is the real client's.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pyoxigraph as ox
import pytest
from dkg.utils.blockchain_request import KnowledgeCollectionResult
from dkg.utils.knowledge_collection_tools import calculate_merkle_root
from eth_account import Account
from hexbytes import HexBytes
from web3 import Web3
from web3.datastructures import AttributeDict

from graphwright.errors import InvalidInput, NotFound
from graphwright.knowledge.backends import dkg_node
from graphwright.knowledge.backends.dkg_node import DkgNodeKnowledgeBase, node_term
from graphwright.knowledge.backends.stores import StoreUnavailable
from graphwright.knowledge.jsonld import draft_assets
from graphwright.knowledge.sparql import Deadline, QueryTimeout, answer_from_oxigraph
from graphwright.knowledge.ual import Ual
from tests.conftest import free_port
from tests.knowledge.dkg_node_stub import (
    CHAIN,
    NODE_IDENTITY,
    NODE_KEY,
    STORAGE,
    DkgNodeStub,
    serve,
)

TOKEN = "node-token"
# Hardhat's well-known development account #0: the publishing wallet.
WALLET_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
EX = "http://example.org/"
ALICE = [
    f'<{EX}alice> <http://schema.org/name> "Alice \\"Al\\" Smith" .',
    f"<{EX}alice> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Person> .",
    f'<{EX}alice> <http://schema.org/description> "chercheuse"@fr .',
]
BOB = [
    f'<{EX}bob> <http://schema.org/name> "Bob" .',
    f'<{EX}bob> <http://schema.org/height> "180"^^<http://www.w3.org/2001/XMLSchema#integer> .',
]
GENE = [f'<{EX}brca1> <http://www.w3.org/2000/01/rdf-schema#label> "BRCA1 gene" .']
FAST = {"max_retries": 20, "frequency": 0.01}
# A query's time limit where the limit is not what a test is about. The check runs in a query
# worker in the idle scheduling class, which a loaded machine can starve for seconds.
LIMIT = 60


@pytest.fixture
async def node() -> AsyncIterator[tuple[DkgNodeStub, str]]:
    stub = DkgNodeStub(token=TOKEN, pending_polls=3)
    async with serve(stub) as url:
        yield stub, url


@pytest.fixture
def kb(node: tuple[DkgNodeStub, str]) -> DkgNodeKnowledgeBase:
    return DkgNodeKnowledgeBase(node[1], CHAIN, auth_token=TOKEN, **FAST)


def triples(lines: list[str] | str) -> set[ox.Triple]:
    text = lines if isinstance(lines, str) else "\n".join(lines)
    return {quad.triple for quad in ox.parse(text.encode(), ox.RdfFormat.N_TRIPLES)}


# ----- get


async def test_get_polls_through_pending_statuses_to_the_collection(node, kb) -> None:
    stub, _ = node
    ual = stub.add_collection([ALICE, BOB])
    content = await kb.get(Ual.parse(ual))
    assert content.ual == ual
    assert triples(content.public) == triples(ALICE + BOB)
    [body] = stub.requests_to("/v1/get")
    assert body["id"] == ual
    assert body["contentType"] == "public"
    assert body["includeMetadata"] is False
    [operation] = stub.operations.values()
    assert operation.polls == 4  # three pending answers, then COMPLETED


async def test_get_one_asset_of_a_collection(node, kb) -> None:
    stub, _ = node
    ual = Ual.parse(stub.add_collection([ALICE, BOB]))
    content = await kb.get(ual.asset(2))
    assert triples(content.public) == triples(BOB)


async def test_get_of_an_unknown_ual_is_not_found(node, kb) -> None:
    unknown = Ual(CHAIN, STORAGE, 999)
    with pytest.raises(NotFound, match="no asset with this UAL"):
        await kb.get(unknown)


async def test_get_that_never_finishes_says_how_long_it_waited(node) -> None:
    stub, url = node
    stub.pending_polls = 1000
    ual = Ual.parse(stub.add_collection([GENE]))
    kb = DkgNodeKnowledgeBase(url, CHAIN, auth_token=TOKEN, max_retries=3, frequency=0.01)
    with pytest.raises(NotFound, match="within 3 polls"):
        await kb.get(ual)


async def test_an_unreachable_node_is_unavailable() -> None:
    kb = DkgNodeKnowledgeBase(f"http://127.0.0.1:{free_port()}", CHAIN, **FAST)
    with pytest.raises(StoreUnavailable, match="cannot be reached"):
        await kb.get(Ual(CHAIN, STORAGE, 1))
    with pytest.raises(StoreUnavailable, match="cannot be reached"):
        await kb.query("SELECT * WHERE { ?s ?p ?o }", limit=10, timeout=LIMIT)


async def test_a_refused_token_names_the_setting(node) -> None:
    kb = DkgNodeKnowledgeBase(node[1], CHAIN, auth_token="wrong", **FAST)
    with pytest.raises(StoreUnavailable, match="GRAPHWRIGHT_DKG_NODE_TOKEN"):
        await kb.query("SELECT * WHERE { ?s ?p ?o }", limit=10, timeout=LIMIT)


# ----- query


async def test_select_rows_match_sparql_json_of_the_same_query(node, kb) -> None:
    """Differential: the node's Comunica strings, converted, equal Oxigraph's own terms."""
    stub, _ = node
    stub.add_collection([ALICE, BOB])
    stub.add_collection([GENE])
    sparql = "SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g ?s ?p ?o"
    answer = await kb.query(sparql, limit=1000, timeout=LIMIT)
    expected = answer_from_oxigraph(stub.store.query(sparql), limit=1000, deadline=Deadline(5))
    assert answer.variables == ["g", "s", "p", "o"]
    assert answer.rows == expected.rows
    assert len(answer.rows) > 20  # content and metadata, every kind of term
    literals = {r["o"]["value"]: r["o"] for r in answer.rows if r["o"]["type"] == "literal"}
    assert literals['Alice "Al" Smith'] == {"type": "literal", "value": 'Alice "Al" Smith'}
    assert literals["chercheuse"]["xml:lang"] == "fr"
    assert literals["180"]["datatype"].endswith("#integer")
    assert answer.truncated is False


async def test_select_is_cut_at_the_row_limit(node, kb) -> None:
    stub, _ = node
    stub.add_collection([ALICE, BOB])
    answer = await kb.query(
        "SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }", limit=2, timeout=LIMIT
    )
    assert len(answer.rows) == 2
    assert answer.truncated is True
    assert answer.row_limit == 2


async def test_select_with_no_rows_still_names_its_variables(node, kb) -> None:
    answer = await kb.query(
        "SELECT ?who ?name WHERE { ?who <urn:x:none> ?name }", limit=5, timeout=LIMIT
    )
    assert answer.variables == ["who", "name"]
    assert answer.rows == []


async def test_construct_returns_n_triples(node, kb) -> None:
    stub, _ = node
    ual = stub.add_collection([ALICE, BOB])
    answer = await kb.query(
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{ual}/1/public> {{ ?s ?p ?o }} }}",
        limit=100,
        timeout=LIMIT,
    )
    assert answer.form == "graph"
    assert triples(answer.triples or "") == triples(ALICE)
    [body] = stub.requests_to("/v1/direct-query")
    assert body["type"] == "CONSTRUCT"
    assert body["repository"] == "dkg"


@pytest.mark.parametrize(
    ("sparql", "kind"),
    [("ASK { ?s ?p ?o }", "ASK"), ("DESCRIBE <http://example.org/alice>", "DESCRIBE")],
)
async def test_ask_and_describe_are_refused_clearly(node, kb, sparql: str, kind: str) -> None:
    stub, _ = node
    with pytest.raises(InvalidInput, match=f"SELECT and CONSTRUCT only, not {kind}"):
        await kb.query(sparql, limit=10, timeout=LIMIT)
    assert stub.requests_to("/v1/direct-query") == []


async def test_an_update_is_refused_before_it_reaches_the_node(node, kb) -> None:
    stub, _ = node
    with pytest.raises(InvalidInput, match="update"):
        await kb.query("INSERT DATA { <urn:a> <urn:b> <urn:c> }", limit=10, timeout=LIMIT)
    with pytest.raises(InvalidInput, match="SERVICE"):
        await kb.query(
            "SELECT * WHERE { SERVICE <http://127.0.0.1/> { ?s ?p ?o } }", limit=10, timeout=LIMIT
        )
    assert stub.requests == []


async def test_a_slow_query_stops_at_its_time_limit(node, kb) -> None:
    stub, _ = node
    stub.query_delay = 1.0
    with pytest.raises(QueryTimeout, match=r"0\.2 s"):
        await kb.query("SELECT * WHERE { ?s ?p ?o }", limit=10, timeout=0.2)


# ----- metadata, collections, export


async def test_metadata_is_read_from_the_nodes_metadata_graph(node, kb) -> None:
    stub, _ = node
    time = datetime(2025, 3, 1, 12, 30, tzinfo=UTC)
    publisher = "0x70997970c51812dc3a010c7d01b50e8f3c79c8"
    kc = Ual.parse(stub.add_collection([ALICE, BOB], publisher=publisher, tx="0xabc", time=time))
    metadata = await kb.metadata(kc.asset(2))
    assert metadata.ual == str(kc.asset(2))
    assert metadata.collection_ual == str(kc)
    assert metadata.publisher == f"did:dkg:publisherKey/{publisher}"
    assert metadata.owner == publisher
    assert metadata.publish_tx == "0xabc"
    assert metadata.published_at_block == 101
    assert metadata.publish_time == time
    assert metadata.block_time == time
    assert metadata.knowledge_assets == [str(kc.asset(1)), str(kc.asset(2))]
    assert metadata.later_states == 0
    assert metadata.node_stake is None
    with pytest.raises(NotFound):
        await kb.metadata(Ual(CHAIN, STORAGE, 999))


async def test_collections_newest_first_with_names_and_search(node, kb) -> None:
    stub, _ = node
    older = stub.add_collection([ALICE, BOB], time=datetime(2025, 1, 1, tzinfo=UTC))
    newer = stub.add_collection([GENE], time=datetime(2025, 6, 1, tzinfo=UTC))
    page = await kb.collections(search=None, offset=0, limit=10)
    assert [c.ual for c in page] == [newer, older]
    assert page[0].name == "BRCA1 gene"
    assert page[0].assets == 1
    assert page[1].name == 'Alice "Al" Smith'
    assert page[1].types == ["http://schema.org/Person"]
    assert page[1].assets == 2
    assert page[1].publish_time == datetime(2025, 1, 1, tzinfo=UTC)
    assert [c.ual for c in await kb.collections(search=None, offset=1, limit=10)] == [older]
    found = await kb.collections(search="CHERCHEUSE", offset=0, limit=10)
    assert [c.ual for c in found] == [older]
    assert await kb.collections(search="nowhere", offset=0, limit=10) == []


async def test_export_is_refused_with_the_reason(kb) -> None:
    with pytest.raises(InvalidInput, match="embedded store and SPARQL servers"):
        await kb.export()


# ----- publish


def alice_drafts() -> list[Any]:
    return draft_assets(
        {
            "@context": {"@vocab": "http://schema.org/"},
            "@graph": [
                {
                    "@id": f"{EX}alice",
                    "@type": "Person",
                    "name": "Alice",
                    "knows": {"@id": f"{EX}bob"},
                },
                {"@id": f"{EX}bob", "@type": "Person", "name": "Bob"},
            ],
        }
    )


async def test_publish_without_a_key_is_refused_naming_private_key(node, kb) -> None:
    stub, _ = node
    with pytest.raises(InvalidInput, match="needs PRIVATE_KEY"):
        await kb.publish(alice_drafts(), number=1, approved_by="ann", request_id="r1")
    assert stub.requests == []
    assert "read-only" in kb.description


class ChainFake:
    """The client's blockchain service without a chain: records the collection it would mint
    and tells the node it was minted, as the node's chain listener would."""

    def __init__(self, stub: DkgNodeStub, wallet: str) -> None:
        self.stub = stub
        self.wallet = wallet
        self.minted: list[dict[str, Any]] = []

    async def get_asset_storage_address(self, name: str) -> str:
        assert name == "KnowledgeCollectionStorage"
        return Web3.to_checksum_address(STORAGE)

    async def key_is_operational_wallet(self, identity_id: int, key: Any, purpose: int) -> bool:
        node_wallet = Account.from_key(NODE_KEY).address
        return identity_id == NODE_IDENTITY and key == Web3.solidity_keccak(
            ["address"], [node_wallet]
        )

    async def get_stake_weighted_average_ask(self) -> int:
        return 10

    async def create_knowledge_collection(
        self, request: dict[str, Any], paranet_contract: Any, paranet_token: Any
    ) -> KnowledgeCollectionResult:
        self.minted.append(request)
        tx = HexBytes(bytes(31) + bytes([len(self.minted)]))
        number = self.stub.mint(request["publishOperationId"], publisher=self.wallet, tx=tx.hex())
        receipt = AttributeDict({"transactionHash": tx, "blockNumber": 7, "status": 1})
        return KnowledgeCollectionResult(knowledge_collection_id=number, receipt=receipt)


async def test_publish_with_a_key_round_trips_through_the_node(node) -> None:
    stub, url = node
    wallet = Account.from_key(WALLET_KEY).address.lower()
    chain = ChainFake(stub, wallet)
    kb = DkgNodeKnowledgeBase(
        url, CHAIN, auth_token=TOKEN, private_key=WALLET_KEY, blockchain_service=chain, **FAST
    )
    drafts = alice_drafts()
    published = await kb.publish(drafts, number=1, approved_by="ann", request_id="r1")

    [body] = stub.requests_to("/v1/publish")
    sent = body["dataset"]["public"]
    assert triples(sent) == {ox.Triple(*t) for d in drafts for t in d.public}
    assert body["datasetRoot"] == calculate_merkle_root(sent)
    assert body["blockchain"] == CHAIN
    [minted] = chain.minted
    assert minted["knowledgeAssetsAmount"] == 2
    assert minted["epochs"] == 2
    assert minted["merkleRoot"] == body["datasetRoot"]
    assert minted["identityIds"] == [NODE_IDENTITY]  # the node's signature checked out
    assert minted["publisherNodeIdentityId"] == NODE_IDENTITY

    ual = Ual.parse(published.ual)
    assert (ual.chain, ual.contract) == (CHAIN, STORAGE)
    assert published.knowledge_assets == [str(ual.asset(1)), str(ual.asset(2))]
    assert published.publish_tx == "0x" + "00" * 31 + "01"
    assert published.triples == sum(len(d.public) for d in drafts)
    assert "publishing" in kb.description

    content = await kb.get(ual)
    assert triples(content.public) == triples(sent)
    metadata = await kb.metadata(ual)
    assert metadata.owner == wallet
    assert metadata.knowledge_assets == published.knowledge_assets


async def test_a_publish_the_node_fails_is_unavailable(node) -> None:
    stub, url = node
    stub.publish_failure = "Not enough nodes replicated the dataset"
    chain = ChainFake(stub, "0x" + "11" * 20)
    kb = DkgNodeKnowledgeBase(
        url, CHAIN, auth_token=TOKEN, private_key=WALLET_KEY, blockchain_service=chain, **FAST
    )
    with pytest.raises(StoreUnavailable, match="Not enough nodes replicated"):
        await kb.publish(alice_drafts(), number=1, approved_by=None, request_id=None)
    assert chain.minted == []


async def test_a_publish_with_no_chain_to_reach_is_unavailable(node) -> None:
    """The real blockchain provider, with nothing listening at its RPC address."""
    stub, url = node
    rpc = f"http://127.0.0.1:{free_port()}"
    kb = DkgNodeKnowledgeBase(
        url, CHAIN, auth_token=TOKEN, private_key=WALLET_KEY, rpc_url=rpc, **FAST
    )
    with pytest.raises(StoreUnavailable, match=f"failed on the chain {CHAIN} \\(RPC {rpc}\\)"):
        await kb.publish(alice_drafts(), number=1, approved_by=None, request_id=None)
    assert stub.requests_to("/v1/publish") == []


async def test_a_query_the_parser_cannot_read_never_reaches_the_node(node, kb) -> None:
    stub, _ = node
    # RDF-star: Oxigraph reads it; rdflib's parser, which judges every query, does not.
    with pytest.raises(InvalidInput, match="Syntax error at line 1, column 19"):
        await kb.query("SELECT ?x WHERE { << ?s ?p ?o >> ?q ?x }", limit=5, timeout=LIMIT)
    assert stub.requests == []


def test_a_bad_key_or_chain_is_refused_without_echoing_the_key() -> None:
    with pytest.raises(InvalidInput, match="PRIVATE_KEY is not a wallet key") as caught:
        DkgNodeKnowledgeBase("http://127.0.0.1:1", CHAIN, private_key="0xnot-a-key")
    assert "not-a-key" not in str(caught.value)
    with pytest.raises(InvalidInput, match="no chain 'mars:1'"):
        DkgNodeKnowledgeBase("http://127.0.0.1:1", "mars:1", private_key=WALLET_KEY)


# ----- the node's term strings


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("http://ex.org/a", {"type": "uri", "value": "http://ex.org/a"}),
        ("_:b0", {"type": "bnode", "value": "b0"}),
        ('"Alice"', {"type": "literal", "value": "Alice"}),
        ('"text"@en', {"type": "literal", "value": "text", "xml:lang": "en"}),
        (
            '"6900000"^^http://www.w3.org/2001/XMLSchema#integer',
            {
                "type": "literal",
                "value": "6900000",
                "datatype": "http://www.w3.org/2001/XMLSchema#integer",
            },
        ),
        ('"s"^^http://www.w3.org/2001/XMLSchema#string', {"type": "literal", "value": "s"}),
        ('"say "hi"@en"', {"type": "literal", "value": 'say "hi"@en'}),
    ],
)
def test_node_terms(text: str, term: dict[str, str]) -> None:
    assert node_term(text) == term


@pytest.mark.parametrize(
    ("sparql", "reader"),
    [
        ("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }", "_select_answer"),
        ("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }", "_graph_answer"),
    ],
)
async def test_the_nodes_answer_is_read_in_a_thread_not_on_the_event_loop(
    node, kb, monkeypatch: pytest.MonkeyPatch, sparql: str, reader: str
) -> None:
    """Its size is the query's choice: converting it is user-controlled work."""
    stub, _ = node
    stub.add_collection([ALICE, BOB])
    original = getattr(dkg_node, reader)
    readers: list[threading.Thread] = []

    def reading(*args: Any, **kwargs: Any) -> Any:
        readers.append(threading.current_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(dkg_node, reader, reading)
    await kb.query(sparql, limit=100, timeout=LIMIT)
    assert readers and threading.main_thread() not in readers
