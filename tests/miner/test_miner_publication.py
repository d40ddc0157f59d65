"""What the miner publishes, driven by a model that follows the miner's prompts: the document
a person approves is the one validated and the one published; a published candidate keeps the
checks it was approved on; a run with every default reaches approval; a duplicate is never
offered as new; the run's trace shows each agent's steps, memory and candidates."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from pyld import jsonld

from graphwright.knowledge.jsonld import load_document
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.schemas import Decision, MinerRequest
from tests.miner.conftest import MinerFactory
from tests.miner.follower import PromptFollower
from tests.miner.scripted import enriched_aspirin

ASK = "What does aspirin inhibit?"
PROV = "http://www.w3.org/ns/prov#"
BOOKKEEPING_TERMS = ("linkedAssets", "trustSignals", "provenance", "domainTags")
COX1 = {
    "@context": "https://schema.org/",
    "@id": "urn:graphwright:test:cox1",
    "@type": "Protein",
    "name": "prostaglandin G/H synthase 1 (COX-1)",
    "identifier": "UniProtKB:P23219",
}


def canonical_hash(nquads: str) -> str:
    """SHA-256 of the RDFC-1.0 (URDNA2015) canonical N-Quads, computed here with pyld alone."""
    options = {"algorithm": "URDNA2015", "inputFormat": "application/n-quads"}
    canonical = jsonld.normalize(nquads, {**options, "format": "application/n-quads"})
    return hashlib.sha256(canonical.encode()).hexdigest()


def document_hash(document: Any) -> str:
    options = {"format": "application/n-quads", "documentLoader": load_document}
    return canonical_hash(jsonld.to_rdf(document, options))


def published_hash(lines: list[str]) -> str:
    """The published triples, with the knowledge base's `uuid:` names for blank nodes (as
    dkg.py gives them) read back as blank nodes."""
    text = "\n".join(lines) + "\n"
    for n, name in enumerate(sorted(set(_uuid_names(text)))):
        text = text.replace(f"<{name}>", f"_:u{n}")
    return canonical_hash(text)


def _uuid_names(text: str) -> list[str]:
    return [part[1:-1] for part in text.split() if part.startswith("<uuid:")]


@pytest.fixture
async def cox1(knowledge: KnowledgeService) -> str:
    published = await knowledge.publish_now(COX1, actor="curator", title="COX-1")
    return f"{published.ual}/1"


def mined(knowledge: KnowledgeService, status: str = "published") -> list[Any]:
    """The knowledge base's requests that came from miner runs, newest first."""
    found, _ = knowledge.list_requests(status=status)
    return [request for request in found if request.source == "knowledge-miner"]


def follower(candidate: dict[str, Any]) -> PromptFollower:
    return PromptFollower(candidate=candidate, candidate_path="/candidates/aspirin.jsonld")


def make(make_miner: MinerFactory, candidate: dict[str, Any]) -> Any:
    miner = make_miner({})
    miner.model = follower(candidate)
    return miner


async def test_a_run_with_every_default_reaches_approval(
    make_miner: MinerFactory, cox1: str
) -> None:
    miner = make(make_miner, enriched_aspirin(cox1))
    output = await miner.run(MinerRequest(query=ASK), actor="alice", caller="token:1")

    assert not output.summary.startswith("Iteration bound reached"), output.summary
    [action] = output.pending_approval
    assert action.action_name == "dkg_publish_asset"
    assert miner.get_run(output.run_id).status == "waiting"
    assert [s.name for s in output.spawned_subagents] == ["discovery", "enrichment", "validation"]


async def test_what_is_approved_is_what_was_validated_and_what_is_published(
    make_miner: MinerFactory, knowledge: KnowledgeService, cox1: str
) -> None:
    miner = make(make_miner, enriched_aspirin(cox1))
    output = await miner.run(MinerRequest(query=ASK, domain_tags=["drugs"]), actor="a", caller="c")
    [action] = output.pending_approval
    shown = action.args["jsonld"]  # what the person sees and approves
    assert not set(BOOKKEEPING_TERMS) & set(shown)
    validated = action.trust_signals["documentHash"]
    assert validated == document_hash(shown)

    run = await miner.decide(output.run_id, [Decision(type="approve")], approver="bob")

    [request] = mined(knowledge)
    assert document_hash(request.content) == validated  # approved
    published = await knowledge.get_asset(request.ual)
    assert published_hash(published.public) == validated  # published
    text = "\n".join(published.public)
    for term in BOOKKEEPING_TERMS:
        assert f"/{term}>" not in text, term
    # Provenance goes out as PROV-O on the asset itself, not as an asset of its own.
    assert f"<{PROV}wasDerivedFrom> <https://en.wikipedia.org/wiki/Aspirin>" in text
    assert len((await knowledge.metadata(request.ual)).knowledge_assets) == 1
    # The bookkeeping stays in the request and the asset's metadata.
    assert request.details["provenance"]["discoveredAt"] == "2025-01-01T00:00:00Z"
    assert request.details["runId"] == run.id
    metadata = await knowledge.metadata(request.ual)
    assert metadata.details is not None and metadata.details["linkedAssets"] == [cox1]


async def test_a_published_candidate_keeps_the_checks_it_was_approved_on(
    make_miner: MinerFactory, knowledge: KnowledgeService, cox1: str
) -> None:
    miner = make(make_miner, enriched_aspirin(cox1))
    output = await miner.run(MinerRequest(query=ASK, domain_tags=["drugs"]), actor="a", caller="c")
    approved_on = output.pending_approval[0].trust_signals

    run = await miner.decide(output.run_id, [Decision(type="approve")], approver="bob")

    assert run.result is not None
    [candidate] = run.result["candidateAssets"]
    signals = candidate["trustSignals"]
    assert signals["valid"] is True and signals["duplicates"] == []
    assert signals["confidence"] == approved_on["confidence"]
    [request] = mined(knowledge)
    assert candidate["publication"] == {
        "status": "published",
        "requestId": request.id,
        "ual": request.ual,
        "by": "bob",
    }


async def test_two_runs_on_the_same_question_publish_one_asset_and_at_most_a_revision(
    make_miner: MinerFactory, knowledge: KnowledgeService, cox1: str
) -> None:
    first = make(make_miner, enriched_aspirin(cox1))
    done = await first.run(MinerRequest(query=ASK, domain_tags=["drugs"]), actor="a", caller="c")
    await first.decide(done.run_id, [Decision(type="approve")], approver="bob")
    [original] = mined(knowledge)

    second = make(make_miner, enriched_aspirin(cox1))
    again = await second.run(MinerRequest(query=ASK, domain_tags=["drugs"]), actor="a", caller="c")

    assert again.pending_approval == []  # nothing new: not offered
    [candidate] = again.candidate_assets
    assert candidate["publication"]["status"] == "dropped"
    assert original.ual in candidate["publication"]["reason"]
    run = second.get_run(again.run_id)
    assert run.status == "done"
    [dropped] = run.decisions
    assert dropped["type"] == "reject" and original.ual in dropped["message"]
    assert len(mined(knowledge)) == 1

    # A candidate that says more about the same drug is offered as a revision of it.
    changed = enriched_aspirin(cox1, description="aspirin irreversibly acetylates COX-1 (Ser529)")
    third = make(make_miner, changed)
    revised = await third.run(MinerRequest(query=ASK, domain_tags=["drugs"]), actor="a", caller="c")
    [action] = revised.pending_approval
    assert action.revision_of == original.ual
    assert action.trust_signals["valid"] is True
    await third.decide(revised.run_id, [Decision(type="approve")], approver="bob")
    published = mined(knowledge)
    assert len(published) == 2 and published[0].revision_of == original.ual


async def test_the_run_trace_shows_steps_memory_and_candidates(
    make_miner: MinerFactory, cox1: str
) -> None:
    miner = make(make_miner, enriched_aspirin(cox1))
    output = await miner.run(MinerRequest(query=ASK, domain_tags=["drugs"]), actor="a", caller="c")

    trace = miner.get_run(output.run_id).result["trace"]  # type: ignore[index]
    agents = {agent["agent"]: agent for agent in trace["agents"]}
    assert list(agents) == ["orchestrator", "discovery", "enrichment", "validation"]
    assert ASK in agents["discovery"]["task"] and agents["discovery"]["status"] == "completed"
    tools = [step["tool"] for step in agents["validation"]["steps"]]
    assert tools == ["read_file", "read_file", "validate_candidate"]
    validate = agents["validation"]["steps"][-1]
    assert validate["ok"] is True and '"confidence"' in validate["result"]
    assert len(validate["args"]["candidate"]) <= 201  # shortened, not the whole candidate
    assert trace["memoryReads"] == [
        "/memories/knowledge/drugs/discovery-notes.md",
        "/memories/knowledge/drugs/schema-notes.md",
        "/memories/knowledge/drugs/validation-rules.md",
    ]
    assert output.memory_writes == ["/memories/knowledge/drugs/discovery-notes.md"]
    [candidate] = output.candidate_assets
    checks = {check["name"]: check["passed"] for check in candidate["trustSignals"]["checks"]}
    assert checks == {"jsonld": True, "shapes": True, "duplicates": True, "links": True}
    assert set(candidate["trustSignals"]["breakdown"]) >= {"checks", "sources", "links"}
    assert candidate["publication"]["status"] == "waiting"
