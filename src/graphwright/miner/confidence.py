"""A candidate's confidence: a fixed formula over the validation checks, its sources and the
metadata of the assets it links to. `docs/miner.md` states it; every constant is here.

    confidence = 0                                   if it does not expand or fails its shapes
               = 0.25·checks + 0.50·sources + 0.25·links   otherwise

- checks: the share of the four checks passed (expands, shapes, no duplicate, links resolve);
- sources: 1 - ∏(1 - w) over the distinct sources, with w by kind (SOURCE_WEIGHTS), so that
  each independent source adds and none alone reaches 1;
- links: the mean trust of the linked assets (0 when there are none); a link that does not
  resolve has trust 0. An asset's trust = publisher · freshness · currency, where publisher is
  1.0 for a trusted publisher, 0.6 for any other recorded one and 0.2 for none or sample data;
  freshness halves every two years since publishing; currency is 1 / (1 + later states), since a
  link to a state that later revisions replaced points at outdated knowledge.

There is no stake per asset on the DKG (stake belongs to nodes), so none is used.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Literal

from pydantic import Field

from graphwright.knowledge.schemas import AssetMetadata, KbModel

SourceKind = Literal["literature", "knowledge-base", "database", "web", "other"]
SOURCE_WEIGHTS: dict[str, float] = {
    "literature": 0.6,  # peer-reviewed: a PMID, a PMC id, a DOI
    "knowledge-base": 0.5,  # an asset already in the knowledge base (a UAL)
    "database": 0.5,  # a curated database or knowledge graph (the biomedical KG tools)
    "web": 0.25,  # a web page (Tavily, a fetched URL)
    "other": 0.1,  # anything else, such as a note without a reference
}
WEIGHTS: dict[str, float] = {"checks": 0.25, "sources": 0.5, "links": 0.25}
TRUSTED_PUBLISHER, KNOWN_PUBLISHER, UNKNOWN_PUBLISHER = 1.0, 0.6, 0.2
HALF_LIFE_DAYS = 730.0
FORMULA = (
    "0 if the candidate does not expand or fails its shapes; otherwise "
    "0.25·checks + 0.50·sources + 0.25·links (see docs/miner.md)"
)

_LITERATURE = re.compile(
    r"^(pmid:|pmcid:|pmc\d|doi:|10\.\d{4,}/|https?://(www\.)?(pubmed\.ncbi\.nlm\.nih\.gov|"
    r"ncbi\.nlm\.nih\.gov/pmc|(dx\.)?doi\.org|europepmc\.org)/)",
    re.IGNORECASE,
)


class Source(KbModel):
    """Where a candidate's facts came from: a reference (URL, PMID, DOI, UAL) and its kind."""

    ref: str = Field(min_length=1, max_length=2000)
    kind: SourceKind | None = Field(
        default=None, description="Inferred from the reference when not given"
    )
    title: str | None = None

    @property
    def resolved_kind(self) -> SourceKind:
        if self.kind is not None:
            return self.kind
        ref = self.ref.strip()
        if ref.lower().startswith("did:dkg:"):
            return "knowledge-base"
        if _LITERATURE.match(ref):
            return "literature"
        if ref.lower().startswith(("http://", "https://")):
            return "web"
        return "other"


class SourceScore(KbModel):
    ref: str
    kind: SourceKind
    weight: float


class LinkScore(KbModel):
    """One linked asset's part in the confidence, with the metadata it rests on."""

    ual: str
    exists: bool
    detail: str | None = Field(default=None, description="Why the link does not resolve")
    publisher: str | None = None
    publisher_score: float = 0.0
    age_days: float | None = None
    freshness: float = 0.0
    later_states: int = 0
    currency: float = 0.0
    trust: float = 0.0


class ConfidenceBreakdown(KbModel):
    formula: str = FORMULA
    gate: str | None = Field(default=None, description="Why the confidence is 0, if it is")
    weights: dict[str, float] = Field(default_factory=lambda: dict(WEIGHTS))
    checks: float
    sources: float
    links: float
    source_scores: list[SourceScore] = Field(default_factory=list)
    link_scores: list[LinkScore] = Field(default_factory=list)


def _round(value: float) -> float:
    return round(value, 3)


def source_scores(sources: Sequence[Source]) -> list[SourceScore]:
    """One score per distinct reference (compared without case and surrounding space)."""
    seen: dict[str, SourceScore] = {}
    for source in sources:
        kind = source.resolved_kind
        seen.setdefault(
            source.ref.strip().lower(),
            SourceScore(ref=source.ref.strip(), kind=kind, weight=SOURCE_WEIGHTS[kind]),
        )
    return list(seen.values())


def sources_component(scores: Sequence[SourceScore]) -> float:
    doubt = 1.0
    for score in scores:
        doubt *= 1.0 - score.weight
    return 1.0 - doubt


def link_score(
    ual: str, metadata: AssetMetadata, *, trusted_publishers: Collection[str], now: datetime
) -> LinkScore:
    publisher = metadata.publisher
    if publisher and _trusted(metadata, trusted_publishers):
        publisher_score = TRUSTED_PUBLISHER
    elif publisher and not metadata.synthetic:
        publisher_score = KNOWN_PUBLISHER
    else:
        publisher_score = UNKNOWN_PUBLISHER
    age_days = None
    freshness = 1.0
    if metadata.publish_time is not None:
        age_days = max(0.0, (now - metadata.publish_time).total_seconds() / 86_400)
        freshness = 0.5 ** (age_days / HALF_LIFE_DAYS)
    currency = 1.0 / (1 + metadata.later_states)
    return LinkScore(
        ual=ual,
        exists=True,
        publisher=publisher,
        publisher_score=publisher_score,
        age_days=None if age_days is None else round(age_days, 2),
        freshness=_round(freshness),
        later_states=metadata.later_states,
        currency=_round(currency),
        trust=_round(publisher_score * freshness * currency),
    )


def _trusted(metadata: AssetMetadata, trusted: Collection[str]) -> bool:
    names = {name.strip().lower() for name in trusted}
    return bool(names & {(metadata.publisher or "").lower(), (metadata.owner or "").lower()})


def missing_link(ual: str, detail: str) -> LinkScore:
    return LinkScore(ual=ual, exists=False, detail=detail)


def breakdown(
    *,
    gate: str | None,
    checks_passed: int,
    checks_total: int,
    sources: Sequence[SourceScore],
    links: Sequence[LinkScore],
) -> tuple[float, ConfidenceBreakdown]:
    """The confidence and the parts it was computed from."""
    parts = {
        "checks": checks_passed / checks_total,
        "sources": sources_component(sources),
        "links": sum(link.trust for link in links) / len(links) if links else 0.0,
    }
    confidence = 0.0 if gate else sum(WEIGHTS[name] * value for name, value in parts.items())
    detail = ConfidenceBreakdown(
        gate=gate,
        checks=_round(parts["checks"]),
        sources=_round(parts["sources"]),
        links=_round(parts["links"]),
        source_scores=list(sources),
        link_scores=list(links),
    )
    return _round(min(1.0, confidence)), detail
