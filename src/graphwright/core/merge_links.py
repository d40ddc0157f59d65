"""Reading one tool result's links before the accumulator stores anything (docs/merge.md).

Links are read once into columns; validation looks closer only at what these passes flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from graphwright.core.link_evidence import Pmids, read_pmids
from graphwright.core.link_table import NO_LABEL
from graphwright.core.merge_values import canonical_json, hash_key

_LINK_PARTS = frozenset({"source", "target", "label", "evidence"})
_PARTS = tuple(map(itemgetter, ("source", "target", "label", "evidence")))
_node_id = itemgetter("id")


@dataclass(slots=True)
class Links:
    """A result's links, read (and checked) before anything is stored."""

    sources: tuple[Any, ...]
    targets: tuple[Any, ...]
    labels: tuple[Any, ...]  # as given (NO_LABEL when absent)
    kinds: tuple[Any, ...] | list[Any]  # the label part of the link keys (and primary source)
    evidence: tuple[Any, ...]
    pmids: Pmids | None  # when every evidence is a list of `PMID:<digits>` strings
    unusual: list[int]  # positions of links with an unusual label or fields besides the four


def read_links(links: list[Any], *, key_by_source: bool) -> Links:
    """A result's links as columns, with what the careful path must look at."""
    try:  # a pass in C per field: the cheapest read of links of the usual shape
        sources, targets, labels, evidence = (tuple(map(part, links)) for part in _PARTS)
        complete = True
    except (KeyError, TypeError):  # a field missing, or not an object (validation says)
        rows = [_loose_parts(link) for link in links]
        sources, targets, labels, evidence = zip(*rows, strict=True) if rows else ((),) * 4
        complete = False
    unusual, kinds = _unusual_links(links, labels, complete=complete)
    if key_by_source:
        primary = map(primary_knowledge_source, links)
        kinds = list(zip(kinds, primary, strict=True))
    return Links(sources, targets, labels, kinds, evidence, read_pmids(evidence), unusual)


def plain_node_ids(nodes: list[Any], read: Links) -> list[str] | None:
    """The nodes' ids, if every node is an object with a plain, non-empty string id and every
    link end names one of them exactly as written; else None (validation must look closer)."""
    try:
        raws = list(map(_node_id, nodes))
        known = set(raws)
        ends_known = known.issuperset(read.sources) and known.issuperset(read.targets)
    except (KeyError, TypeError):
        return None
    if not ends_known or set(map(type, known)) - {str} or not all(map(str.strip, known)):
        return None
    return raws


def _loose_parts(link: Any) -> tuple[Any, Any, Any, Any]:
    if type(link) is not dict:
        return (None, None, None, None)
    return (link.get("source"), link.get("target"), link.get("label", NO_LABEL),
            link.get("evidence"))  # fmt: skip


def _unusual_links(
    links: list[Any], labels: tuple[Any, ...], *, complete: bool
) -> tuple[list[int], Any]:
    """Positions of the links that need the careful path, and the labels as link-key parts."""
    usual = not set(map(type, labels)) - {str} and "" not in labels
    kinds = labels if usual else [_label_key(label) for label in labels]
    if complete and usual:
        if max(map(len, links), default=0) <= 4:  # every link has the four fields alone
            return [], kinds
        return [position for position, size in enumerate(map(len, links)) if size > 4], kinds
    unusual = [
        position
        for position, (link, label) in enumerate(zip(links, labels, strict=True))
        if not (type(label) is str and label)
        or (type(link) is dict and not link.keys() <= _LINK_PARTS)
    ]
    return unusual, kinds


def _label_key(label: Any) -> Any:
    if label is NO_LABEL or not label:
        return ""
    return hash_key(label)


def primary_knowledge_source(link: Any) -> str | None:
    """Translator's primary knowledge source of a link, from its field or its `sources` list."""
    if type(link) is not dict:
        return None
    value = link.get("primary_knowledge_source")
    if value:
        return value if isinstance(value, str) else canonical_json(value).decode()
    for source in link.get("sources") or ():
        if isinstance(source, dict) and source.get("resource_role") == "primary_knowledge_source":
            resource = source.get("resource_id")
            return resource if resource is None or isinstance(resource, str) else str(resource)
    return None
