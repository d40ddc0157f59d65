"""Cross-references between merged nodes (docs/merge.md, rule 2).

An `xref` says "see also", not "the same entity": every xref of a merged node that names
another node of the merged graph becomes a link labelled `xref`, computed from the merged
nodes so that it does not depend on input order. Its provenance is the node's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from graphwright.core.merge_rules import XREF, XREF_LABEL, declared_ids
from graphwright.core.merge_values import PROVENANCE, Record


def xref_pairs(
    live: Iterable[tuple[int, Record]], node_of: Callable[[str], int | None]
) -> list[tuple[int, int]]:
    """(node index, index of the node it names in `xref`) for the live nodes, each pair once;
    `node_of` gives the index of the node an id names, if any."""
    pairs: dict[tuple[int, int], None] = {}
    for index, record in live:
        if XREF not in record:
            continue
        for xref in declared_ids(record, (XREF,)):
            target = node_of(xref)
            if target is not None and target != index:
                pairs[(index, target)] = None
    return list(pairs)


def xref_links(
    pairs: list[tuple[int, int]],
    names: list[str],
    provenance_of: Callable[[int], tuple[str, ...]],
    *,
    fresh: bool,
) -> list[Record]:
    """The xref links as seed links (`fresh`: with lists of their own); `provenance_of` gives
    a node's result ids by its index."""
    return [
        {
            "source": names[source],
            "target": names[target],
            "label": XREF_LABEL,
            "evidence": [],
            PROVENANCE: list(provenance_of(source)) if fresh else provenance_of(source),
        }
        for source, target in pairs
    ]
