"""Which declared equivalences a merge follows, and the report of those it refused.

`equivalent_ids` and `same_as` say "the same entity"; `xref` only says "see also", so it is
recorded as a link labelled `xref` unless the accumulator is told to treat it as equivalence.
No two nodes merge when their Biolink categories cannot name one entity (a Gene and a
BiologicalProcess); each refusal is listed in the report with both ids and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from graphwright.core import biolink

EQUIVALENT_IDS = "equivalent_ids"
SAME_AS = "same_as"
XREF = "xref"
XREF_LABEL = "xref"


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
    return (EQUIVALENT_IDS, SAME_AS, XREF) if xref_equivalence else (EQUIVALENT_IDS, SAME_AS)


def declared_ids(node: dict[str, Any], fields: tuple[str, ...]) -> list[str]:
    """The ids a node declares in `fields` (each a string or a list)."""
    found: list[str] = []
    for name in fields:
        value = node.get(name)
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            found.extend(item for item in value if isinstance(item, str) and item.strip())
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
