"""Validation that rests on checks in code, not only on the model's word.

A candidate knowledge asset is checked four ways, against the knowledge base it would join:

- **jsonld**: it expands as JSON-LD and would be accepted for publishing as it stands;
- **shapes**: it passes SHACL, the default shape (a type, a name, an identifier) on each of its
  top-level objects plus the domain tag's own `shapes.ttl`;
- **duplicates**: no current asset has the same `@id` or the same identifier (SPARQL);
- **links**: every UAL it links to (in `linkedAssets` or as an object in the JSON-LD) exists.

Its confidence is then computed from these checks, its sources and its linked assets' metadata
(`confidence.py`), and the report carries the breakdown.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import pyoxigraph as ox
from anyio import to_thread
from pydantic import Field
from pyld import jsonld

from graphwright.core.words import counted
from graphwright.errors import InvalidInput, NotFound
from graphwright.knowledge import vocab
from graphwright.knowledge.jsonld import Triple, canonical_hash, checked_drafts, load_document
from graphwright.knowledge.schemas import KbModel
from graphwright.knowledge.service import KnowledgeService
from graphwright.knowledge.ual import Ual
from graphwright.miner.confidence import (
    ConfidenceBreakdown,
    LinkScore,
    Source,
    breakdown,
    link_score,
    missing_link,
    source_scores,
)
from graphwright.miner.publishable import publishable_document
from graphwright.miner.shapes import ShapeResult, check_shapes

CheckName = Literal["jsonld", "shapes", "duplicates", "links"]
CHECKS: tuple[CheckName, ...] = ("jsonld", "shapes", "duplicates", "links")
# A top-level object without an @id gets this name while it is checked, so shapes can target it.
UNNAMED = "urn:graphwright:miner:candidate/"
IDENTIFIER_PREDICATES = (
    f"{vocab.SCHEMA}identifier",
    "https://schema.org/identifier",
    "http://purl.org/dc/terms/identifier",
)
DUPLICATE_ROWS = 100


class Check(KbModel):
    name: CheckName
    passed: bool
    detail: str


class Duplicate(KbModel):
    """A current asset that already holds what the candidate would add."""

    ual: str = Field(description="The existing knowledge asset")
    subject: str
    by: Literal["@id", "identifier"]
    value: str


class ValidationReport(KbModel):
    valid: bool = Field(description="Every check passed")
    document_hash: str | None = Field(
        default=None,
        description="SHA-256 of the RDFC-1.0 canonical N-Quads of the document checked (the "
        "candidate without its bookkeeping): what is approved and published has the same",
    )
    revision_of: str | None = Field(
        default=None, description="The asset it revises: its states are not duplicates"
    )
    confidence: float = Field(ge=0, le=1)
    checks: list[Check]
    breakdown: ConfidenceBreakdown
    duplicates: list[Duplicate] = Field(default_factory=list)
    missing_links: list[str] = Field(default_factory=list)
    shape_results: list[ShapeResult] = Field(default_factory=list)


@dataclass(frozen=True)
class ParsedCandidate:
    roots: list[str]
    triples: list[Triple]

    @property
    def ntriples(self) -> str:
        return "".join(f"{s} {p} {o} .\n" for s, p, o in self.triples)

    def root_values(self, predicates: Iterable[str]) -> list[tuple[str, str]]:
        wanted, roots = set(predicates), set(self.roots)
        return [
            (s.value, o.value) for s, p, o in self.triples if s.value in roots and p.value in wanted
        ]

    def linked_uals(self) -> list[str]:
        return [
            o.value
            for _, _, o in self.triples
            if isinstance(o, ox.NamedNode)
            and o.value.startswith("did:dkg:")
            and not o.value.startswith(vocab.PUBLISHER_KEY)
        ]


def candidate_sources(candidate: Mapping[str, Any]) -> list[Source]:
    """The sources a candidate names in seed 001's `provenance.sources` (references or
    {ref|url, kind, title} objects)."""
    provenance = candidate.get("provenance")
    listed = provenance.get("sources", []) if isinstance(provenance, Mapping) else []
    sources = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, str) and item.strip():
            sources.append(Source(ref=item))
        elif isinstance(item, Mapping) and (ref := item.get("ref") or item.get("url")):
            sources.append(Source(ref=str(ref), kind=item.get("kind"), title=item.get("title")))
    return sources


def _declared_links(candidate: Mapping[str, Any]) -> list[str]:
    linked = candidate.get("linkedAssets")
    links = []
    for item in linked if isinstance(linked, list) else []:
        ual = item.get("@id") or item.get("ual") if isinstance(item, Mapping) else item
        if isinstance(ual, str) and ual.strip():
            links.append(ual.strip())
    return links


def _named_roots(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every top-level object named (an @id) so each can be found again."""
    count = 0

    def named(node: Any) -> Any:
        nonlocal count
        if not isinstance(node, dict) or "@id" in node:
            return node
        count += 1
        return {**node, "@id": f"{UNNAMED}{count}"}

    graph = document.get("@graph")
    if isinstance(graph, list):
        return {**document, "@graph": [named(node) for node in graph]}
    return named(document)


def parse_candidate(document: dict[str, Any]) -> ParsedCandidate:
    """Its top-level subjects and triples; InvalidInput says why it does not expand."""
    named = _named_roots(document)
    drafts = checked_drafts(named)
    expanded = jsonld.expand(named, {"documentLoader": load_document})
    roots = [node["@id"] for node in expanded if isinstance(node, dict) and "@id" in node]
    return ParsedCandidate(roots, [t for draft in drafts for t in draft.public])


def duplicate_keys(document: dict[str, Any]) -> list[str]:
    """What another candidate would duplicate this one by: the @id and the identifiers of its
    top-level objects, as `@id <iri>` and `identifier <value>`."""
    parsed = parse_candidate(document)
    ids = [f"@id {root}" for root in parsed.roots if not root.startswith(UNNAMED)]
    identifiers = [f"identifier {v}" for _, v in parsed.root_values(IDENTIFIER_PREDICATES)]
    return sorted(set(ids + identifiers))


def _label(subject: str) -> str:
    if subject.startswith(UNNAMED):
        return f"top-level object {subject.removeprefix(UNNAMED)} (no @id)"
    return subject


def duplicates_query(ids: Sequence[str], identifiers: Sequence[str]) -> str:
    """Current assets whose subject is one of `ids`, or that give one of `identifiers`."""
    branches = []
    if ids:
        values = " ".join(str(ox.NamedNode(i)) for i in ids)
        branches.append(
            f'{{ VALUES ?s {{ {values} }} GRAPH ?g {{ ?s ?p ?o }} BIND("@id" AS ?by) '
            "BIND(STR(?s) AS ?value) }"
        )
    if identifiers:
        predicates = " ".join(f"<{p}>" for p in IDENTIFIER_PREDICATES)
        values = " ".join(str(ox.Literal(i)) for i in identifiers)
        branches.append(
            f"{{ VALUES ?value {{ {values} }} VALUES ?idp {{ {predicates} }} "
            f'GRAPH ?g {{ ?s ?idp ?v }} FILTER(STR(?v) = ?value) BIND("identifier" AS ?by) }}'
        )
    current = (
        f"GRAPH <{vocab.CURRENT_GRAPH}> {{ <{vocab.CURRENT_GRAPH}> <{vocab.HAS_NAMED_GRAPH}> ?g }}"
    )
    return (
        f"SELECT DISTINCT ?g ?s ?by ?value WHERE {{\n  {' UNION '.join(branches)}\n  {current}\n}}"
        f" ORDER BY ?g ?s LIMIT {DUPLICATE_ROWS}"
    )


async def find_duplicates(reader: KnowledgeService, parsed: ParsedCandidate) -> list[Duplicate]:
    ids = sorted({root for root in parsed.roots if not root.startswith(UNNAMED)})
    identifiers = sorted({value for _, value in parsed.root_values(IDENTIFIER_PREDICATES)})
    if not ids and not identifiers:
        return []
    answer = await reader.query(duplicates_query(ids, identifiers), limit=DUPLICATE_ROWS)
    return [
        Duplicate(
            ual=row["g"]["value"].removesuffix("/public"),
            subject=row["s"]["value"],
            by=row["by"]["value"],  # type: ignore[arg-type]
            value=row["value"]["value"],
        )
        for row in answer.rows
    ]


async def check_link(
    reader: KnowledgeService, ual: str, *, trusted_publishers: Collection[str], now: datetime
) -> LinkScore:
    """The link's score from its asset's metadata, or a missing link that says why."""
    try:
        parsed = Ual.parse(ual)
    except InvalidInput:
        return missing_link(ual, "not a UAL")
    try:
        metadata = await reader.metadata(str(parsed.collection))
    except NotFound:
        return missing_link(ual, "no such knowledge collection in the knowledge base")
    if not parsed.is_collection and str(parsed) not in metadata.knowledge_assets:
        count = len(metadata.knowledge_assets)
        return missing_link(ual, f"its collection has {counted(count, 'asset')}, not this one")
    return link_score(ual, metadata, trusted_publishers=trusted_publishers, now=now)


def _shapes_check(results: Sequence[ShapeResult]) -> Check:
    violations = [r for r in results if r.severity == "Violation"]
    others = [r for r in results if r.severity != "Violation"]
    lines = [
        f"{r.severity.lower()}: {_label(r.focus)}{f' ({r.path})' if r.path else ''}: {r.message}"
        for r in violations + others
    ]
    head = "conforms" if not violations else counted(len(violations), "violation")
    return Check(name="shapes", passed=not violations, detail="; ".join([head, *lines]))


async def revised_collections(reader: KnowledgeService, revision_of: str) -> set[str]:
    """The collections of every state of the asset a revision revises: the same @id or
    identifier in them is what a revision is expected to have."""
    return {state.collection_ual for state in await reader.states(revision_of)}


def _collection(ual: str) -> str:
    return str(Ual.parse(ual).collection)


def _duplicates_check(duplicates: Sequence[Duplicate], revision_of: str | None) -> Check:
    if not duplicates:
        detail = "no current asset has its @id or identifier"
        if revision_of is not None:
            detail = (
                f"a revision of {revision_of}; no other current asset has its @id or identifier"
            )
        return Check(name="duplicates", passed=True, detail=detail)
    found = "; ".join(f"{d.ual} has the same {d.by} ({d.value})" for d in duplicates)
    return Check(name="duplicates", passed=False, detail=f"already in the knowledge base: {found}")


def _links_check(links: Sequence[LinkScore]) -> Check:
    missing = [link for link in links if not link.exists]
    if not links:
        return Check(name="links", passed=True, detail="links to no knowledge asset")
    if not missing:
        return Check(
            name="links", passed=True, detail=f"all {counted(len(links), 'linked asset')} exist"
        )
    listed = "; ".join(f"{link.ual}: {link.detail}" for link in missing)
    detail = f"{counted(len(missing), 'link does', 'links do')} not resolve: {listed}"
    return Check(name="links", passed=False, detail=detail)


async def validate_candidate(
    candidate: Mapping[str, Any],
    *,
    reader: KnowledgeService,
    shapes_ttl: str | Sequence[str] | None = None,
    sources: Sequence[Source] = (),
    trusted_publishers: Collection[str] = (),
    now: datetime | None = None,
    revision_of: str | None = None,
) -> ValidationReport:
    """Check the document a candidate publishes (`publishable_document`) against the knowledge
    base `reader` reads, and score it.

    `shapes_ttl` is the domain tags' `shapes.ttl` (one text, or one per tag); `sources` default
    to those the candidate names in `provenance.sources`. `trusted_publishers` are publisher
    keys or owner addresses the person trusts. A candidate that revises `revision_of` is no
    duplicate of that asset's states. A broken `shapes_ttl` raises InvalidInput.
    """
    now = now or datetime.now(UTC)
    domain_shapes = [shapes_ttl] if isinstance(shapes_ttl, str) else list(shapes_ttl or ())
    scores = source_scores(list(sources) or candidate_sources(candidate))
    document = publishable_document(candidate)
    try:
        parsed, digest = await to_thread.run_sync(_parsed, document)
    except InvalidInput as exc:
        return _unparsed_report(str(exc), scores)

    shape_results = await to_thread.run_sync(
        lambda: check_shapes(parsed.ntriples, roots=parsed.roots, domain_shapes=domain_shapes)
    )
    duplicates = await find_duplicates(reader, parsed)
    if revision_of is not None:
        revised = await revised_collections(reader, revision_of)
        duplicates = [d for d in duplicates if _collection(d.ual) not in revised]
    uals = list(dict.fromkeys(_declared_links(candidate) + parsed.linked_uals()))
    links = [
        await check_link(reader, ual, trusted_publishers=trusted_publishers, now=now)
        for ual in uals
    ]
    checks = [
        Check(
            name="jsonld",
            passed=True,
            detail=f"expands to {counted(len(parsed.triples), 'triple')}",
        ),
        _shapes_check(shape_results),
        _duplicates_check(duplicates, revision_of),
        _links_check(links),
    ]
    gate = None if checks[1].passed else "it does not pass its shapes"
    confidence, parts = breakdown(
        gate=gate,
        checks_passed=sum(check.passed for check in checks),
        checks_total=len(CHECKS),
        sources=scores,
        links=links,
    )
    return ValidationReport(
        valid=all(check.passed for check in checks),
        document_hash=digest,
        revision_of=revision_of,
        confidence=confidence,
        checks=checks,
        breakdown=parts,
        duplicates=duplicates,
        missing_links=[link.ual for link in links if not link.exists],
        shape_results=shape_results,
    )


def _parsed(document: dict[str, Any]) -> tuple[ParsedCandidate, str]:
    return parse_candidate(document), canonical_hash(document)


def _unparsed_report(reason: str, scores: Sequence[Any]) -> ValidationReport:
    skipped = "not checked: the candidate does not expand as JSON-LD"
    checks = [Check(name="jsonld", passed=False, detail=reason)] + [
        Check(name=name, passed=False, detail=skipped) for name in CHECKS[1:]
    ]
    confidence, parts = breakdown(
        gate="it does not expand as JSON-LD",
        checks_passed=0,
        checks_total=len(CHECKS),
        sources=scores,
        links=[],
    )
    return ValidationReport(valid=False, confidence=confidence, checks=checks, breakdown=parts)
