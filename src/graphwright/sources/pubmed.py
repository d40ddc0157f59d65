"""PubMed citations: NCBI E-utilities (esearch, efetch, esummary) and the offline sample corpus.

A citation is a plain dict: pmid, title, authors, journal, year, doi, abstract (when present),
and `synthetic: true` on the sample corpus's made-up records.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import httpx
import orjson
from lxml import etree

from graphwright.errors import InvalidInput
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.http import fetch_bytes
from graphwright.sources.textindex import FullTextIndex

EUTILS_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
TOOL_NAME = "graphwright"

Citation = dict[str, Any]


class RateLimiter:
    """At most `per_second` request starts per second, across every task that shares it."""

    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second
        self._next_start = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            now = time.monotonic()
            delay = self._next_start - now
            self._next_start = max(now, self._next_start) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


def parse_esearch(payload: bytes | str) -> list[str]:
    """PMIDs from an esearch reply (retmode=json), in relevance order."""
    try:
        result = orjson.loads(payload)["esearchresult"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise SourceUnavailable(f"PubMed esearch returned an unexpected reply ({exc})") from None
    if "ERROR" in result:
        raise SourceUnavailable(f"PubMed esearch error: {result['ERROR']}")
    return [str(pmid) for pmid in result.get("idlist", [])]


def _text(element: etree._Element | None) -> str:
    """All text in `element`, inline markup (<i>, <sup>) included, whitespace collapsed."""
    if element is None:
        return ""
    return " ".join("".join(element.itertext()).split())


def _year(article: etree._Element) -> int | None:
    for path in (
        "MedlineCitation/Article/Journal/JournalIssue/PubDate/Year",
        "MedlineCitation/Article/ArticleDate/Year",
        "MedlineCitation/Article/Journal/JournalIssue/PubDate/MedlineDate",
    ):
        match = re.search(r"\d{4}", _text(article.find(path)))
        if match:
            return int(match.group())
    return None


def _authors(article: etree._Element) -> list[str]:
    names = []
    for author in article.iterfind("MedlineCitation/Article/AuthorList/Author"):
        collective = _text(author.find("CollectiveName"))
        last = _text(author.find("LastName"))
        initials = _text(author.find("Initials"))
        name = collective or " ".join(part for part in (last, initials) if part)
        if name:
            names.append(name)
    return names


def _abstract(article: etree._Element) -> str | None:
    sections = []
    for part in article.iterfind("MedlineCitation/Article/Abstract/AbstractText"):
        text = _text(part)
        label = part.get("Label")
        if text:
            sections.append(f"{label}: {text}" if label else text)
    return "\n".join(sections) or None


def _doi(article: etree._Element) -> str | None:
    for path in (
        "PubmedData/ArticleIdList/ArticleId[@IdType='doi']",
        "MedlineCitation/Article/ELocationID[@EIdType='doi']",
    ):
        doi = _text(article.find(path))
        if doi:
            return doi
    return None


def parse_efetch(payload: bytes) -> list[Citation]:
    """Citations from an efetch PubmedArticleSet (retmode=xml), in document order."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(payload, parser)
    except etree.XMLSyntaxError as exc:
        raise SourceUnavailable(f"PubMed efetch returned malformed XML ({exc})") from None
    citations = []
    for article in root.iterfind("PubmedArticle"):
        pmid = _text(article.find("MedlineCitation/PMID"))
        if not pmid:
            continue
        journal = _text(article.find("MedlineCitation/Article/Journal/Title")) or _text(
            article.find("MedlineCitation/Article/Journal/ISOAbbreviation")
        )
        citation: Citation = {
            "pmid": pmid,
            "title": _text(article.find("MedlineCitation/Article/ArticleTitle")),
            "authors": _authors(article),
            "journal": journal,
            "year": _year(article),
            "doi": _doi(article),
        }
        abstract = _abstract(article)
        if abstract:
            citation["abstract"] = abstract
        citations.append(citation)
    return citations


def parse_esummary(payload: bytes) -> list[Citation]:
    """Citations (no abstracts) from an esummary reply (retmode=json); unknown ids are skipped."""
    try:
        result = orjson.loads(payload)["result"]
        uids = [str(uid) for uid in result["uids"]]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise SourceUnavailable(f"PubMed esummary returned an unexpected reply ({exc})") from None
    citations = []
    for uid in uids:
        summary = result.get(uid)
        if not isinstance(summary, dict) or "error" in summary:
            continue
        year = re.search(r"\d{4}", summary.get("pubdate") or summary.get("sortpubdate") or "")
        ids = {a.get("idtype"): a.get("value") for a in summary.get("articleids") or []}
        citations.append(
            {
                "pmid": uid,
                "title": summary.get("title") or summary.get("booktitle") or "",
                "authors": [
                    a["name"]
                    for a in summary.get("authors") or []
                    if a.get("name") and a.get("authtype", "Author") == "Author"
                ],
                "journal": summary.get("fulljournalname") or summary.get("source") or None,
                "year": int(year.group()) if year else None,
                "doi": ids.get("doi"),
            }
        )
    return citations


def clean_pmids(pmids: Iterable[str]) -> list[str]:
    """Deduplicated PMIDs (a 'PMID:' prefix is accepted); raises InvalidInput on anything else."""
    cleaned: list[str] = []
    for raw in pmids:
        pmid = re.sub(r"(?i)^\s*pmid\s*:?\s*", "", str(raw)).strip()
        if not (pmid.isdigit() or SampleCorpus.is_sample_id(pmid)):
            raise InvalidInput(f"'{raw}' is not a PubMed id (expected digits, e.g. 11287972)")
        if pmid not in cleaned:
            cleaned.append(pmid)
    if not cleaned:
        raise InvalidInput("Give at least one PubMed id")
    return cleaned


class EUtilsClient:
    """esearch + efetch against NCBI, within NCBI's rate limit (3/s, 10/s with an API key)."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str = EUTILS_URL,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 20.0,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.transport = transport
        self.timeout = timeout
        self.limiter = RateLimiter(10 if api_key else 3)

    async def search(self, query: str, max_results: int) -> list[Citation]:
        reply = await self._get(
            "esearch.fcgi", term=query, retmax=max_results, retmode="json", sort="relevance"
        )
        pmids = parse_esearch(reply)
        return await self.fetch(pmids) if pmids else []

    async def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        """Full records from efetch; esummary fills in ids efetch has no article for (books)."""
        reply = await self._get("efetch.fcgi", id=",".join(pmids), retmode="xml")
        by_pmid = {citation["pmid"]: citation for citation in parse_efetch(reply)}
        missing = [pmid for pmid in pmids if pmid not in by_pmid]
        if missing:
            summary = await self._get("esummary.fcgi", id=",".join(missing), retmode="json")
            by_pmid.update((c["pmid"], c) for c in parse_esummary(summary))
        return [by_pmid[pmid] for pmid in pmids if pmid in by_pmid]

    async def _get(self, endpoint: str, **params: Any) -> bytes:
        query = {"db": "pubmed", "tool": TOOL_NAME, **params}
        if self.api_key:
            query["api_key"] = self.api_key
        await self.limiter.wait()
        return await fetch_bytes(
            "GET",
            f"{self.base_url}/{endpoint}",
            label="PubMed E-utilities",
            transport=self.transport,
            timeout=self.timeout,
            params=query,
        )


class SampleCorpus:
    """The citations shipped in sample_data, ranked by SQLite FTS5 bm25: citations.json (a few
    hand-picked real records and the synthetic ones) and pubmed_sample.json (a few hundred real
    PubMed records with their MeSH descriptors; its description says where they come from)."""

    FILES = ("citations.json", "pubmed_sample.json")

    SAMPLE_PREFIX = "synthetic-"

    def __init__(self, citations: list[Citation]) -> None:
        self.citations = {citation["pmid"]: citation for citation in citations}
        self.index = FullTextIndex(
            # Title matches weigh most, then keywords, then abstract.
            {"title": 10.0, "abstract": 2.0, "keywords": 5.0, "authors": 1.0, "journal": 1.0},
            (
                (
                    c["pmid"],
                    {
                        "title": c["title"],
                        "abstract": c.get("abstract", ""),
                        "keywords": " ".join([*c.get("keywords", []), *c.get("mesh", [])]),
                        "authors": " ".join(c["authors"]),
                        "journal": c["journal"],
                    },
                )
                for c in citations
            ),
        )

    @classmethod
    def bundled(cls) -> SampleCorpus:
        folder = resources.files("graphwright.sources.sample_data")
        citations: dict[str, Citation] = {}
        for name in cls.FILES:
            for citation in orjson.loads(folder.joinpath(name).read_bytes())["citations"]:
                citations.setdefault(citation["pmid"], citation)  # the hand-picked one first
        return cls(list(citations.values()))

    @classmethod
    def is_sample_id(cls, pmid: str) -> bool:
        return pmid.startswith(cls.SAMPLE_PREFIX)

    def search(self, query: str, max_results: int) -> list[Citation]:
        return [self._public(self.citations[p]) for p in self.index.search(query, max_results)]

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        return [self._public(self.citations[p]) for p in pmids if p in self.citations]

    @staticmethod
    def _public(citation: Citation) -> Citation:
        return {key: value for key, value in citation.items() if key != "keywords"}
