"""The miner's validation on a real knowledge base (the embedded Oxigraph store, on each database
backend): JSON-LD expansion, SHACL shapes, duplicates by @id and by identifier, links to UALs,
and the confidence formula's breakdown."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from graphwright.db import Database
from graphwright.errors import InvalidInput
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.confidence import Source, source_scores, sources_component
from graphwright.miner.publishable import PROV_DERIVED_FROM, publishable_document
from graphwright.miner.validation import validate_candidate
from graphwright.settings import Settings

ASPIRIN = {
    "@context": "https://schema.org/",
    "@id": "http://purl.obolibrary.org/obo/CHEBI_15365",
    "@type": "Drug",
    "name": "aspirin",
    "identifier": "CHEBI:15365",
}
PTGS2 = {
    "@context": "https://schema.org/",
    "@id": "https://identifiers.org/ncbigene:5743",
    "@type": "Gene",
    "name": "PTGS2",
    "identifier": "NCBIGene:5743",
}
CELECOXIB = {
    "@context": "https://schema.org/",
    "@id": "http://purl.obolibrary.org/obo/CHEBI_41423",
    "@type": "Drug",
    "name": "celecoxib",
    "identifier": "CHEBI:41423",
}
DRUG_SHAPES = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix schema: <http://schema.org/> .
@prefix ex: <urn:example:> .
ex:DrugShape a sh:NodeShape ;
  sh:targetClass schema:Drug ;
  sh:property [ sh:path schema:description ; sh:minCount 1 ;
                sh:message "a drug needs a description" ] ;
  sh:property [ sh:path schema:alternateName ; sh:minCount 1 ; sh:severity sh:Warning ;
                sh:message "a drug should have an alternate name" ] .
"""
SOURCES = [Source(ref="PMID:12345678"), Source(ref="https://example.org/celecoxib")]


@pytest.fixture(scope="module")
def requests_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    """One database of publication requests for the module: validation reads only the triple
    store, and each test gets a store of its own (collection numbers go on across tests)."""
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('miner') / 'requests.db'}")
    yield db
    db.dispose()


@pytest.fixture
async def knowledge(requests_db: Database, tmp_path: Path) -> AsyncIterator[KnowledgeService]:
    settings = Settings(home=tmp_path / "home", kb_sample_data=False)
    service = KnowledgeService(requests_db, open_backend(settings), row_limit=1000, timeout=10)
    yield service
    await service.aclose()


async def publish(knowledge: KnowledgeService, content: Any, **kwargs: Any) -> str:
    request = knowledge.request_publication(content, requested_by="tester", **kwargs)
    published = await knowledge.approve(request.id, approver="alice")
    assert published.ual
    return published.ual


def candidate(links: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {**CELECOXIB, **extra, "linkedAssets": links or []}


def check(report: Any, name: str) -> Any:
    return next(c for c in report.checks if c.name == name)


async def test_a_sound_candidate_passes_and_its_confidence_follows_the_formula(
    knowledge: KnowledgeService,
) -> None:
    target = await publish(knowledge, PTGS2)
    published = await knowledge.metadata(target)
    report = await validate_candidate(
        candidate([f"{target}/1"]),
        reader=knowledge,
        sources=SOURCES,
        now=published.publish_time,
    )
    assert report.valid and report.duplicates == [] and report.missing_links == []
    assert [c.name for c in report.checks] == ["jsonld", "shapes", "duplicates", "links"]
    assert all(c.passed for c in report.checks)
    parts = report.breakdown
    # sources: a PMID (0.6) and a web page (0.25): 1 - 0.4 * 0.75
    assert parts.sources == pytest.approx(0.7)
    assert [(s.kind, s.weight) for s in parts.source_scores] == [("literature", 0.6), ("web", 0.25)]
    # one link, to a current asset just published by a recorded (untrusted) publisher
    [link] = parts.link_scores
    assert (link.exists, link.publisher_score, link.freshness, link.currency) == (True, 0.6, 1, 1)
    assert link.publisher == published.publisher
    assert parts.checks == 1 and parts.links == pytest.approx(0.6) and parts.gate is None
    assert report.confidence == pytest.approx(0.25 * 1 + 0.5 * 0.7 + 0.25 * 0.6, abs=1e-3)


async def test_a_trusted_publisher_an_old_asset_and_a_superseded_state_change_the_link_trust(
    knowledge: KnowledgeService,
) -> None:
    target = await publish(knowledge, PTGS2)
    metadata = await knowledge.metadata(target)
    assert metadata.publish_time is not None
    trusted = await validate_candidate(
        candidate([target]), reader=knowledge, trusted_publishers=[metadata.publisher or ""],
        now=metadata.publish_time,
    )  # fmt: skip
    assert trusted.breakdown.link_scores[0].publisher_score == 1.0

    two_years_on = metadata.publish_time + timedelta(days=730)
    aged = await validate_candidate(candidate([target]), reader=knowledge, now=two_years_on)
    assert aged.breakdown.link_scores[0].freshness == pytest.approx(0.5)
    assert aged.breakdown.links == pytest.approx(0.3)

    await publish(knowledge, {**PTGS2, "description": "corrected"}, revision_of=target)
    superseded = await validate_candidate(
        candidate([target]), reader=knowledge, now=metadata.publish_time
    )
    [link] = superseded.breakdown.link_scores
    assert (link.later_states, link.currency, link.trust) == (1, 0.5, 0.3)


async def test_sample_data_counts_as_an_unknown_publisher(knowledge: KnowledgeService) -> None:
    target = await publish(knowledge, PTGS2, synthetic=True)
    report = await validate_candidate(candidate([target]), reader=knowledge)
    assert report.breakdown.link_scores[0].publisher_score == 0.2


async def test_the_default_shape_needs_a_type_a_name_and_an_identifier(
    knowledge: KnowledgeService,
) -> None:
    bare = {"@context": "https://schema.org/", "@id": "urn:example:x", "description": "no name"}
    report = await validate_candidate(bare, reader=knowledge, sources=SOURCES)
    shapes = check(report, "shapes")
    assert not report.valid and not shapes.passed
    for needed in ("needs a @type", "needs a name", "needs an identifier"):
        assert needed in shapes.detail
    assert {r.focus for r in report.shape_results} == {"urn:example:x"}
    assert report.confidence == 0 and report.breakdown.gate == "it does not pass its shapes"
    assert report.breakdown.sources == pytest.approx(0.7)  # still shown, though gated


async def test_a_candidate_without_an_id_is_named_in_shape_results(
    knowledge: KnowledgeService,
) -> None:
    report = await validate_candidate(
        {"@context": "https://schema.org/", "@type": "Drug", "name": "x"}, reader=knowledge
    )
    assert "top-level object 1 (no @id): needs an identifier" in check(report, "shapes").detail


async def test_only_top_level_objects_meet_the_default_shape(knowledge: KnowledgeService) -> None:
    nested = {**CELECOXIB, "manufacturer": {"@type": "Organization", "name": "Pfizer"}}
    report = await validate_candidate(nested, reader=knowledge)
    assert check(report, "shapes").passed, check(report, "shapes").detail


async def test_domain_shapes_add_to_the_default_and_warnings_do_not_fail(
    knowledge: KnowledgeService,
) -> None:
    failing = await validate_candidate(CELECOXIB, reader=knowledge, shapes_ttl=DRUG_SHAPES)
    shapes = check(failing, "shapes")
    assert not shapes.passed and "a drug needs a description" in shapes.detail
    assert "warning" in shapes.detail and "a drug should have an alternate name" in shapes.detail

    described = {**CELECOXIB, "description": "A COX-2 inhibitor."}
    passing = await validate_candidate(described, reader=knowledge, shapes_ttl=[DRUG_SHAPES])
    shapes = check(passing, "shapes")
    assert shapes.passed and passing.valid
    assert [r.severity for r in passing.shape_results] == ["Warning"]


async def test_broken_domain_shapes_are_refused_by_name(knowledge: KnowledgeService) -> None:
    with pytest.raises(InvalidInput, match=r"shapes\.ttl\) are not valid Turtle"):
        await validate_candidate(CELECOXIB, reader=knowledge, shapes_ttl="ex:a ex:b")


async def test_a_duplicate_by_id(knowledge: KnowledgeService) -> None:
    ual = await publish(knowledge, [ASPIRIN, PTGS2])
    same_id = {**ASPIRIN, "identifier": "CHEBI:99999"}
    report = await validate_candidate(same_id, reader=knowledge)
    [duplicate] = report.duplicates
    assert (duplicate.ual, duplicate.by) == (f"{ual}/1", "@id")
    assert duplicate.value == ASPIRIN["@id"]
    assert not report.valid and not check(report, "duplicates").passed
    assert report.breakdown.checks == 0.75
    assert report.confidence == pytest.approx(0.25 * 0.75, abs=1e-3)


async def test_a_duplicate_by_identifier(knowledge: KnowledgeService) -> None:
    ual = await publish(knowledge, [ASPIRIN, PTGS2])
    renamed = {**PTGS2, "@id": "urn:example:cox2"}
    report = await validate_candidate(renamed, reader=knowledge)
    [duplicate] = report.duplicates
    assert (duplicate.ual, duplicate.by) == (f"{ual}/2", "identifier")
    assert duplicate.value == "NCBIGene:5743"
    assert "has the same identifier (NCBIGene:5743)" in check(report, "duplicates").detail


async def test_a_revised_asset_is_no_longer_a_duplicate(knowledge: KnowledgeService) -> None:
    first = await publish(knowledge, ASPIRIN)
    second = await publish(knowledge, ASPIRIN, revision_of=first)
    report = await validate_candidate(ASPIRIN, reader=knowledge)
    # both collections are current in the DKG layout: each is reported, neither is hidden
    assert {d.ual for d in report.duplicates} == {f"{first}/1", f"{second}/1"}


async def test_links_to_missing_uals_fail_and_count_zero(knowledge: KnowledgeService) -> None:
    ual = await publish(knowledge, PTGS2)
    nowhere = ual.rsplit("/", 1)[0] + "/99"
    in_jsonld = {**CELECOXIB, "isRelatedTo": {"@id": f"{ual}/7"}}
    report = await validate_candidate(
        {**in_jsonld, "linkedAssets": [ual, nowhere, "did:dkg:nonsense"]}, reader=knowledge
    )
    assert report.missing_links == [nowhere, "did:dkg:nonsense", f"{ual}/7"]
    links = check(report, "links")
    assert not links.passed and "3 links do not resolve" in links.detail
    assert "not a UAL" in links.detail and "no such knowledge collection" in links.detail
    assert "its collection has 1 asset, not this one" in links.detail
    trusts = [link.trust for link in report.breakdown.link_scores]
    assert trusts[1:] == [0, 0, 0] and trusts[0] > 0
    assert report.breakdown.links == pytest.approx(trusts[0] / 4)


async def test_a_candidate_that_does_not_expand_is_not_checked_further(
    knowledge: KnowledgeService,
) -> None:
    remote = {**CELECOXIB, "@context": "https://example.org/context.jsonld"}
    report = await validate_candidate(remote, reader=knowledge, sources=SOURCES)
    jsonld = check(report, "jsonld")
    assert not jsonld.passed and "https://example.org/context.jsonld" in jsonld.detail
    assert all("not checked" in c.detail for c in report.checks[1:])
    assert report.confidence == 0 and report.breakdown.gate == "it does not expand as JSON-LD"


async def test_seed_001_candidates_validate_what_they_would_publish(
    knowledge: KnowledgeService,
) -> None:
    target = await publish(knowledge, PTGS2)
    seed_shaped = {
        "@context": "https://schema.org/",
        "@type": "Drug",
        "properties": {"name": "celecoxib", "identifier": "CHEBI:41423"},
        "linkedAssets": [target],
        "trustSignals": {"confidence": 0.99},
        "provenance": {"sources": ["PMID:1", {"url": "https://example.org", "kind": "web"}]},
    }
    document = publishable_document(seed_shaped)
    assert document == {"@context": "https://schema.org/", "@type": "Drug",
                        "name": "celecoxib", "identifier": "CHEBI:41423",
                        PROV_DERIVED_FROM: [{"@id": "http://www.ncbi.nlm.nih.gov/pubmed/1"},
                                            {"@id": "https://example.org"}]}  # fmt: skip
    report = await validate_candidate(seed_shaped, reader=knowledge)
    assert report.valid
    assert [s.kind for s in report.breakdown.source_scores] == ["literature", "web"]
    wire = report.model_dump(mode="json", by_alias=True)
    assert {"valid", "checks", "confidence", "breakdown", "duplicates", "missingLinks"} <= set(wire)
    assert {"sourceScores", "linkScores", "formula"} <= set(wire["breakdown"])


def test_sources_are_counted_once_and_classified_by_reference() -> None:
    refs = ["did:dkg:otp:2043/0x5cac41237127f94c2d21dae0b14bfefa99880630/1", "doi:10.1/x",
            "https://pubmed.ncbi.nlm.nih.gov/1/", "PMC123", "https://example.org", "a note",
            "PMID:1", "pmid:1 "]  # fmt: skip
    scores = source_scores([Source(ref=r) for r in refs])
    assert [s.kind for s in scores] == ["knowledge-base", "literature", "literature",
                                        "literature", "web", "other", "literature"]  # fmt: skip
    assert source_scores([Source(ref="x", kind="database")])[0].weight == 0.5
    assert sources_component([]) == 0
    assert 0.99 < sources_component(scores) < 1
