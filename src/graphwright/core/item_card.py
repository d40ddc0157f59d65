"""A graph node or edge as a person reads it: identifiers as links to their resolver, evidence as
PubMed links, and provenance in words ("found by kg.queryNeighbors in turn 1").

Resolver links come from Bioregistry (`bioregistry.get_bioregistry_iri`): a prefix Bioregistry
does not know gets no link rather than a guessed one. Provenance ids are tool call ids (what
`core.merge` records per tool result); `origins` says which tool made each call and in which turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from graphwright.core.citation_formats import pmid_links
from graphwright.core.merge_rules import (
    ATTRIBUTES,
    EQUIVALENT_IDENTIFIERS,
    EQUIVALENT_IDS,
    EXACT_MATCH,
    SAME_AS,
    declared_ids,
)
from graphwright.core.merge_values import PROVENANCE

QUOTED_CHARS = 60  # of the message that opened a turn, quoted in a provenance sentence
IMPORT_PREFIX = "import-"  # Graph Mode's import result ids (graphmode.importing)
EVIDENCE_FIELDS = ("evidence", "publications")
_EQUIVALENCE_FIELDS = (EQUIVALENT_IDS, EQUIVALENT_IDENTIFIERS, SAME_AS, EXACT_MATCH, ATTRIBUTES)


@dataclass(frozen=True)
class Link:
    """Text to show, and where it leads (None: shown as plain text)."""

    text: str
    url: str | None


@dataclass(frozen=True)
class ToolOrigin:
    """Where a tool call came from: the tool (`server.tool`), the turn's number in its
    conversation (from 1), and the message that opened the turn."""

    tool: str
    turn: int
    message: str = ""


@dataclass(frozen=True)
class ItemCard:
    """What a card shows about a node or an edge, beyond its name and type."""

    identifier: Link
    equivalents: list[Link] = field(default_factory=list)
    description: str = ""
    synonyms: list[str] = field(default_factory=list)
    evidence: list[Link] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)


@cache
def _bioregistry() -> Any:
    # imported on first use: importing bioregistry takes a second
    import bioregistry

    return bioregistry


def resolver_link(curie: str) -> Link:
    """`curie` linked to Bioregistry's resolver (`https://bioregistry.io/ncbigene:7157`), or as
    plain text when it is no CURIE of a prefix Bioregistry knows."""
    prefix, colon, local = curie.partition(":")
    if not colon or not prefix or not local or local.startswith("//"):
        return Link(curie, None)
    return Link(curie, _bioregistry().get_bioregistry_iri(prefix, local))


def provenance_ids(data: Mapping[str, Any] | None) -> list[str]:
    """The result ids an item's data records as its provenance."""
    value = (data or {}).get(PROVENANCE)
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, str) and item]


def provenance_words(ids: Iterable[str], origins: Mapping[str, ToolOrigin]) -> list[str]:
    """Each provenance id in words, in order, once each: the tool call it names, by tool and
    turn, and an import into the graph; internal markers (`__existing__`) are left out."""
    found: list[str] = []
    for result_id in ids:
        origin = origins.get(result_id)
        if origin is not None:
            words = f"found by {origin.tool} in turn {origin.turn}"
            message = " ".join(origin.message.split())
            if message:
                if len(message) > QUOTED_CHARS:
                    message = message[: QUOTED_CHARS - 1].rstrip() + "…"
                words += f" (“{message}”)"
        elif result_id.startswith(IMPORT_PREFIX):
            words = "imported into this graph"
        elif result_id.startswith("__"):
            continue
        else:
            words = f"from tool result {result_id} (no longer in this conversation)"
        if words not in found:
            found.append(words)
    return found


def evidence_links(data: Mapping[str, Any] | None) -> list[Link]:
    """An item's evidence: PMIDs linked to PubMed, URLs to themselves, once each."""
    found: dict[str, Link] = {}
    for name in EVIDENCE_FIELDS:
        for text, url in pmid_links((data or {}).get(name) or []):
            found.setdefault(text, Link(text, url))
    return list(found.values())


def node_card(node: Mapping[str, Any], origins: Mapping[str, ToolOrigin]) -> ItemCard:
    """A node's id and equivalent ids as resolver links, its description and synonyms, its
    evidence and its provenance in words."""
    data = node.get("data") or {}
    node_id = str(node["id"])
    declared = dict.fromkeys(declared_ids(data, _EQUIVALENCE_FIELDS))
    equivalents = [i for i in declared if i != node_id]
    synonyms = data.get("synonyms")
    return ItemCard(
        identifier=resolver_link(node_id),
        equivalents=[resolver_link(i) for i in equivalents],
        description=str(data.get("description") or ""),
        synonyms=[str(s) for s in synonyms] if isinstance(synonyms, list) else [],
        evidence=evidence_links(data),
        provenance=provenance_words(provenance_ids(data), origins),
    )


def edge_card(edge: Mapping[str, Any], origins: Mapping[str, ToolOrigin]) -> ItemCard:
    """An edge's predicate (as a resolver link when it is a CURIE such as `RO:0002436`), its
    evidence and its provenance in words."""
    data = edge.get("data") or {}
    predicate = str(edge.get("label") or edge.get("type") or "")
    return ItemCard(
        identifier=resolver_link(predicate) if ":" in predicate else Link(predicate, None),
        evidence=evidence_links(data),
        provenance=provenance_words(provenance_ids(data), origins),
    )


def all_provenance_ids(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every provenance id of these items, once each, in order."""
    return list(dict.fromkeys(i for item in items for i in provenance_ids(item.get("data"))))
