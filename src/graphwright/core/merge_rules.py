"""Which declared equivalences a merge follows, and the report of those it refused.

Every field KG builders publish for "the same entity" declares an equivalence: `equivalent_ids`,
KGX's and the Node Normalizer's `equivalent_identifiers` (strings, or the Node Normalizer's
`{"identifier": ...}` objects), Biolink's `same_as` and `exact_match`, and a TRAPI attribute
`biolink:same_as` or `biolink:exact_match`
(kept whole in `attributes`); RDF's `owl:sameAs` and `skos:exactMatch` become `same_as` when read
(core/formats/rdf_read.py). `xref` only says "see also", so it is recorded as a link labelled
`xref` unless the accumulator is told to treat it as equivalence; broad, narrow, close and
related matches stay links.
No two nodes merge when their Biolink categories cannot name one entity (a Gene and a
BiologicalProcess); each refusal is listed in the report with both ids and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from graphwright.core import biolink

EQUIVALENT_IDS = "equivalent_ids"
EQUIVALENT_IDENTIFIERS = "equivalent_identifiers"
SAME_AS = "same_as"
EXACT_MATCH = "exact_match"  # Biolink's name for skos:exactMatch
ATTRIBUTES = "attributes"  # TRAPI attributes kept whole
XREF = "xref"
XREF_LABEL = "xref"
# TRAPI attribute types that declare an equivalence
SAME_AS_ATTRIBUTES = frozenset({"biolink:same_as", "biolink:exact_match"})


@dataclass(frozen=True)
class RefusedMerge:
    """Two ids declared equivalent whose nodes were kept apart, and why."""

    first: str
    second: str
    reason: str


@dataclass
class MergeReport:
    """What a merge decided beyond its output: the merges it refused."""

    refused: list[RefusedMerge] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "refused_merges": [
                {"ids": [item.first, item.second], "reason": item.reason} for item in self.refused
            ],
        }


def equivalence_fields(*, xref_equivalence: bool) -> tuple[str, ...]:
    fields = (EQUIVALENT_IDS, EQUIVALENT_IDENTIFIERS, SAME_AS, EXACT_MATCH, ATTRIBUTES)
    return (*fields, XREF) if xref_equivalence else fields


def declared_ids(node: dict[str, Any], fields: tuple[str, ...]) -> list[str]:
    """The ids a node declares in `fields`: each a string, a Node Normalizer object or a list
    of them; in `attributes`, the values of its `biolink:same_as` attributes."""
    found: list[str] = []
    for name in fields:
        value = node.get(name)
        if value is None:
            continue
        if name == ATTRIBUTES:
            if isinstance(value, list):
                for attribute in value:
                    if (
                        isinstance(attribute, dict)
                        and attribute.get("attribute_type_id") in SAME_AS_ATTRIBUTES
                    ):
                        found.extend(_ids_in(attribute.get("value")))
            continue
        found.extend(_ids_in(value))
    return found


def _ids_in(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    found = []
    for item in items:
        if isinstance(item, dict):  # the Node Normalizer's {"identifier": ..., "label": ...}
            item = item.get("identifier")
        if isinstance(item, str) and item.strip():
            found.append(item)
    return found


def node_categories(node: dict[str, Any]) -> frozenset[str]:
    """A node's categories (`category`, a string or a list, else the seed's `entityType`)."""
    value = node.get("category")
    if value is None:
        value = node.get("entityType")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return frozenset()
    return frozenset(item for item in value if isinstance(item, str) and item.strip())


@lru_cache(maxsize=4096)
def merge_refusal(first: frozenset[str], second: frozenset[str]) -> str | None:
    """Why nodes with these categories may not merge, or None when they may."""
    if not first or not second:
        return None
    ok, reason = biolink.compatible(first, second)
    return None if ok else reason


def with_equivalents(
    graph: dict[str, Any], equivalents: dict[str, tuple[str, ...]]
) -> dict[str, Any]:
    """`graph` with each node's `equivalent_ids` extended by the ids an equivalence service
    gave for its id (a new graph; nodes the service did not know are kept as they are)."""
    nodes = []
    for node in graph["nodes"]:
        extra = equivalents.get(node["id"])
        own = node.get(EQUIVALENT_IDS)
        if extra and (own is None or isinstance(own, str | list)):
            declared = [own] if isinstance(own, str) else list(own or [])
            node = {**node, EQUIVALENT_IDS: list(dict.fromkeys([*declared, *extra]))}
        nodes.append(node)
    return {**graph, "nodes": nodes}
