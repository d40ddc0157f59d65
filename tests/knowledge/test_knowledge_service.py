"""The knowledge base through KnowledgeService, on the embedded store and on an Oxigraph server,
with publication requests on every database backend."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from graphwright.auth.models import Principal
from graphwright.errors import Conflict, Forbidden, InvalidInput, NotFound
from graphwright.knowledge import vocab
from graphwright.knowledge.service import KnowledgeService
from graphwright.knowledge.sparql import QueryTimeout
from graphwright.knowledge.ual import Ual
from tests.knowledge.conftest import DRUGS

DKG_PATTERN = vocab.CURRENT_PATTERN


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


async def publish(knowledge: KnowledgeService, content: Any, **kwargs: Any) -> str:
    request = knowledge.request_publication(content, requested_by="tester", **kwargs)
    published = await knowledge.approve(request.id, approver="alice")
    assert published.status == "published" and published.ual
    return published.ual


async def test_publish_get_metadata_and_the_dkg_pattern(knowledge: KnowledgeService) -> None:
    ual = await publish(knowledge, DRUGS)
    collection = Ual.parse(ual)
    assert collection.chain == vocab.LOCAL_CHAIN and collection.kc_id == 1

    whole = await knowledge.get_asset(ual)
    assert any('"aspirin"' in line for line in whole.public)
    assert any('"metformin"' in line for line in whole.public)
    first = await knowledge.get_asset(f"{ual}/1")  # assets are numbered from 1, by subject
    assert all("CHEBI_15365" in line.split(" ")[0] for line in first.public)

    metadata = await knowledge.metadata(ual)
    assert metadata.knowledge_assets == [f"{ual}/1", f"{ual}/2"]
    assert metadata.approved_by == "alice"
    assert metadata.publish_tx and metadata.publish_tx.startswith("0x")
    assert metadata.published_at_block == 1 and metadata.publish_time is not None
    assert metadata.publisher == vocab.PUBLISHER_KEY + vocab.LOCAL_PUBLISHER_ADDRESS
    assert metadata.later_states == 0 and metadata.node_stake is None

    answer = await knowledge.query(DKG_PATTERN)
    names = {row["o"]["value"] for row in answer.rows if row["p"]["value"].endswith("/name")}
    assert names == {"aspirin", "metformin"}

    document = await knowledge.get_jsonld(f"{ual}/2")
    assert document["@context"] == "https://schema.org/"
    assert document["name"] == "metformin"


async def test_metadata_graph_holds_what_a_dkg_node_writes(knowledge: KnowledgeService) -> None:
    ual = await publish(knowledge, DRUGS[0])
    answer = await knowledge.query(
        f"SELECT ?p ?o WHERE {{ GRAPH <metadata:graph> {{ <{ual}> ?p ?o }} }}"
    )
    predicates = {row["p"]["value"] for row in answer.rows}
    for name in ("hasKnowledgeAsset", "hasNamedGraph", "publishedBy", "publishedAtBlock",
                 "publishTx", "publishTime", "blockTime"):  # fmt: skip
        assert vocab.DKG + name in predicates, name
    current = await knowledge.query(
        f"ASK {{ GRAPH <current:graph> "
        f"{{ <current:graph> <{vocab.HAS_NAMED_GRAPH}> <{ual}/1/public> }} }}"
    )
    assert current.boolean is True


async def test_a_revision_points_back_and_the_earlier_asset_stays(
    knowledge: KnowledgeService,
) -> None:
    first = await publish(knowledge, DRUGS[0])
    corrected = {**DRUGS[0], "name": "acetylsalicylic acid"}
    second = await publish(knowledge, corrected, revision_of=first)
    assert (await knowledge.metadata(second)).revision_of == first
    assert (await knowledge.metadata(first)).later_states == 1
    assert any('"aspirin"' in line for line in (await knowledge.get_asset(first)).public)
    third = await publish(knowledge, {**corrected, "name": "ASA"}, revision_of=second)
    for ual in (first, second, third):
        states = await knowledge.states(ual)
        assert [s.collection_ual for s in states] == [first, second, third]
    with pytest.raises(NotFound):
        await knowledge.approve(
            knowledge.request_publication(
                DRUGS[1], requested_by="t", revision_of=first.replace("/1", "/99")
            ).id,
            approver="alice",
        )


async def test_nothing_is_published_before_approval(knowledge: KnowledgeService) -> None:
    request = knowledge.request_publication(DRUGS, requested_by="model", title="two drugs")
    assert request.status == "pending" and request.title == "two drugs"
    assert (await knowledge.query(DKG_PATTERN)).rows == []
    assert await knowledge.collections() == []

    published = await knowledge.approve(request.id, approver="alice")
    assert published.decided_by == "alice" and published.status == "published"
    assert len((await knowledge.query(DKG_PATTERN)).rows) == 6
    with pytest.raises(Conflict, match="already published by alice"):
        await knowledge.approve(request.id, approver="bob")
    with pytest.raises(Conflict):
        knowledge.reject(request.id, by="bob", reason="late")


async def test_reject_records_why_and_publishes_nothing(knowledge: KnowledgeService) -> None:
    request = knowledge.request_publication(DRUGS, requested_by="model")
    rejected = knowledge.reject(request.id, by="alice", reason="not sourced")
    assert (rejected.status, rejected.reason, rejected.decided_by) == (
        "rejected",
        "not sourced",
        "alice",
    )
    with pytest.raises(Conflict):
        await knowledge.approve(request.id, approver="alice")
    assert (await knowledge.query(DKG_PATTERN)).rows == []
    pending, total = knowledge.list_requests(status="pending")
    assert (pending, total) == ([], 0)


async def test_approve_with_edits_publishes_the_edited_json_ld(knowledge: KnowledgeService) -> None:
    request = knowledge.request_publication(DRUGS[0], requested_by="model")
    with pytest.raises(InvalidInput, match="does not expand"):
        await knowledge.approve(request.id, approver="alice", content={"@context": {"@vocab": 5}})
    assert knowledge.get_request(request.id).status == "pending"  # a bad edit changes nothing
    edited = {**DRUGS[0], "name": "aspirin (edited)"}
    published = await knowledge.approve(request.id, approver="alice", content=edited)
    assert any(
        "aspirin (edited)" in line
        for line in (await knowledge.get_asset(published.ual or "")).public
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"@context": "https://example.org/remote-context", "name": "x"}, "cannot be loaded"),
        ({"name": "no context, no triple"}, "yields no triple"),
        ("not json-ld", "must be a JSON-LD object"),
        ({"@context": {"@vocab": 5}, "name": "x"}, "does not expand"),
        ({"@id": "urn:g", "@graph": [{"@id": "urn:a", "urn:p": "v"}]}, "names a graph"),
        ({**DRUGS[0], "name": "nul\x00here"}, "NUL character"),
        ({**DRUGS[0], "dosage": 2**70}, "64-bit"),
        ({**DRUGS[0], "nested": _deep(300)}, "cannot be stored"),
    ],
)
async def test_bad_json_ld_is_refused_before_anything_is_stored(
    knowledge: KnowledgeService, content: Any, message: str
) -> None:
    started = time.monotonic()
    with pytest.raises(InvalidInput, match=message):
        knowledge.request_publication(content, requested_by="t")
    assert time.monotonic() - started < 2, "a remote context must fail fast, not hang"
    assert knowledge.list_requests()[1] == 0


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", r"this is an update \(INSERT DATA\)"),
        ("DROP ALL", r"update \(DROP\)"),
        ("WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", r"update \(DELETE/INSERT\)"),
        # Neither a query nor an update: the parser says where it stopped reading.
        ("SELECT * WHERE { ?s ?p ?o } ; DROP ALL", "Syntax error at line 1, column 29"),
        ("SELECT ?x WHERE {", "Syntax error at line 1, column"),
        ("SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }", "SERVICE"),
        ("", "empty"),
    ],
)
async def test_only_read_only_queries_run(
    knowledge: KnowledgeService, query: str, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        await knowledge.query(query)


async def test_unknown_ual_and_malformed_ual(knowledge: KnowledgeService) -> None:
    await publish(knowledge, DRUGS[0])
    unknown = f"did:dkg:{vocab.LOCAL_CHAIN}/{vocab.LOCAL_CONTRACT}/42"
    with pytest.raises(NotFound, match="No knowledge collection"):
        await knowledge.get_asset(unknown)
    with pytest.raises(NotFound, match="No knowledge asset"):
        await knowledge.get_asset(f"did:dkg:{vocab.LOCAL_CHAIN}/{vocab.LOCAL_CONTRACT}/1/7")
    with pytest.raises(InvalidInput, match="is not a UAL"):
        await knowledge.metadata("did:dkg:nonsense")


async def test_answers_are_cut_at_the_row_limit_and_say_so(knowledge: KnowledgeService) -> None:
    await publish(knowledge, [{**DRUGS[0], "@id": f"urn:drug:{i}"} for i in range(30)])
    answer = await knowledge.query("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", limit=10)
    assert len(answer.rows) == 10 and answer.truncated and answer.row_limit == 10
    knowledge.row_limit = 5  # the server's limit wins over a larger one asked for
    assert (
        len((await knowledge.query("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", limit=50)).rows) == 5
    )


async def test_a_query_past_its_time_is_stopped(knowledge: KnowledgeService) -> None:
    await publish(knowledge, [{**DRUGS[0], "@id": f"urn:drug:{i}"} for i in range(60)])
    # 60**4 rows to count: about 2 s of work on a quiet machine, far past 0.3 s.
    heavy = (
        "SELECT (COUNT(*) AS ?n) WHERE { "
        + " ".join(f"GRAPH ?g{i} {{ ?s{i} <http://schema.org/name> ?o{i} }}" for i in range(4))
        + " }"
    )
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match=r"time limit of 0\.3 s"):
        await knowledge.query(heavy, timeout=0.3)
    assert time.monotonic() - started < 5
    # On the embedded store the query runs on in the background: never in a thread that would
    # hold up the process's exit.
    running = [t for t in threading.enumerate() if t.name == "graphwright-knowledge"]
    assert all(thread.daemon for thread in running)


async def test_search_and_list_collections(knowledge: KnowledgeService) -> None:
    await publish(knowledge, DRUGS[0], title="aspirin")
    await publish(knowledge, DRUGS[1], title="metformin")
    listed = await knowledge.collections()
    assert [c.name for c in listed] == ["metformin", "aspirin"]  # newest first
    assert listed[0].types == ["http://schema.org/Drug"] and listed[0].assets == 1
    assert [c.name for c in await knowledge.collections(search="ASPIR")] == ["aspirin"]


async def test_private_triples_never_reach_queries(knowledge: KnowledgeService) -> None:
    content = {
        "public": DRUGS[0],
        "private": {**DRUGS[0], "description": "internal trial note"},
    }
    ual = await publish(knowledge, content)
    everything = await knowledge.query("SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert all(row["o"]["value"] != "internal trial note" for row in everything.rows)
    assert not any("internal" in line for line in (await knowledge.get_asset(ual)).public)
    owner_view = await knowledge.get_asset(ual, private_for=Principal(1, None, "alice"))
    assert any("internal trial note" in line for line in owner_view.private)


async def test_export_round_trips_as_n_quads_and_trig(knowledge: KnowledgeService) -> None:
    ual = await publish(knowledge, DRUGS)
    nquads = (await knowledge.export("nquads")).decode()
    assert f"<{ual}/1/public>" in nquads and "<metadata:graph>" in nquads
    assert b"GRAPH" in (await knowledge.export("trig")) or b"{" in (await knowledge.export("trig"))
    with pytest.raises(InvalidInput, match="Unknown export format"):
        await knowledge.export("rdfxml")


async def test_an_interrupted_publish_is_settled_at_start_up(knowledge: KnowledgeService) -> None:
    published = knowledge.request_publication(DRUGS[0], requested_by="t")
    lost = knowledge.request_publication(DRUGS[1], requested_by="t")
    # As a crash leaves them: both marked publishing, only the first one reached the store.
    drafts, _, _ = knowledge._start_publishing(published.id, "alice", None)
    await knowledge.backend.publish(drafts, number=1, approved_by="alice", request_id=published.id)
    knowledge._start_publishing(lost.id, "alice", None)

    assert await knowledge.recover() == 2
    assert knowledge.get_request(published.id).status == "published"
    assert knowledge.get_request(published.id).ual
    again = knowledge.get_request(lost.id)
    assert again.status == "pending" and "interrupted" in (again.reason or "")


def test_scoped_tokens_cannot_decide(knowledge: KnowledgeService) -> None:
    from graphwright.auth.models import Principal
    from graphwright.knowledge.service import decider

    with pytest.raises(Forbidden, match="unscoped token"):
        decider(Principal(token_id=1, conversation_id="c1", label=None))
    assert decider(Principal(token_id=2, conversation_id=None, label="alice")) == "alice"
