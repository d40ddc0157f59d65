"""Incremental merge of knowledge graphs returned by many tool calls (seed 000, done right).

The seed's `mergeKnowledgeGraphs(merged, new)` rebuilds its maps from the whole accumulated graph
on every tool call. `GraphAccumulator` keeps its indexes between calls, so adding a result costs
O(size of that result). The rules are in docs/merge.md.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import compress
from typing import Any

import numpy as np

from graphwright.core.graph import check_graph, graph_lists, parse_json
from graphwright.core.ids import normalize_curie, pick_leader, prefix_rank
from graphwright.core.link_table import Carried, LinkTable, move_carried
from graphwright.core.merge_links import Links, plain_node_ids, read_links
from graphwright.core.merge_provenance import Provenance, carry, provenance
from graphwright.core.merge_rules import (
    EQUIVALENT_IDS,
    MergeReport,
    RefusedMerge,
    declared_ids,
    equivalence_fields,
    merge_refusal,
    node_categories,
)
from graphwright.core.merge_values import (
    CONFLICTS,
    PROVENANCE,
    Record,
    fresh_copy,
    merge_conflicts,
    merge_properties,
    node_snapshot,
    owned,
)
from graphwright.core.merge_xrefs import xref_links, xref_pairs

_NODE_FIXED = frozenset({"id", EQUIVALENT_IDS, PROVENANCE, CONFLICTS})


class GraphAccumulator:
    """Merges seed graphs one tool result at a time; see docs/merge.md for the rules.

    Nodes are dict records and links are columns (`LinkTable`), both by index in first-seen
    order. A link names its end nodes by index, so giving a node a new leader id re-keys
    nothing. Provenance is not stored per record: each add keeps arrays of the node and link
    indexes it touched, and `to_graph()` / `to_json()` turn them into result ids with numpy.
    A record folded into another one stays in place, mapped to the one it joined.
    """

    def __init__(self, *, key_by_source: bool = False, xref_equivalence: bool = False) -> None:
        self._key_by_source = key_by_source
        self._equivalence_fields = equivalence_fields(xref_equivalence=xref_equivalence)
        self._xref_links = not xref_equivalence
        self.report = MergeReport()
        self._refused: set[tuple[str, str]] = set()
        self._categories: dict[str, frozenset[str]] = {}  # class leader -> its categories
        self._typed_ids: set[str] = set()  # ids whose own nodes came with a category

        self._result_ids: list[str] = []  # add number -> result id
        # add number -> the node and link indexes that add touched
        self._touched_nodes: list[np.ndarray] = []
        self._touched_links: list[np.ndarray] = []
        self._normalized: dict[str, str] = {}
        self._parent: dict[str, str] = {}
        self._members: dict[str, list[str]] = {}
        self._nodes: list[Record] = []
        self._node_at: dict[str, int] = {}  # leader id -> node index
        self._node_of_raw: dict[str, int] = {}  # raw id -> node index (cleared when nodes fold)
        # raw id -> a copy of a node already merged which is not a subset of its record (a
        # known conflict, an equivalence declared again): the same node again changes nothing
        self._merged_node: dict[str, Record] = {}
        self._folded_nodes: dict[int, int] = {}  # node index -> the index it was folded into
        self._carried_nodes: dict[int, list[Carried]] = {}
        self._folds = 0
        self._links = LinkTable()

    @property
    def node_count(self) -> int:
        return len(self._nodes) - len(self._folded_nodes)

    @property
    def link_count(self) -> int:
        return self._links.live_count + len(self._xref_pairs())

    def distinct_ids(self) -> list[str]:
        """Every distinct id spelling seen so far; each was normalised once (cached)."""
        return list(self._normalized)

    def knows(self, node_id: str) -> bool:
        """Whether a stored node has this id (in any spelling, or as an equivalent id)."""
        return self._leader(node_id) in self._node_at

    def add(
        self,
        graph: dict[str, Any] | str | bytes,
        result_id: str | None = None,
        *,
        stored_ends: bool = False,
    ) -> None:
        """Merge one tool result's graph; `result_id` (default `result-<n>`) goes to provenance.

        The graph is validated first (GraphFormatError names the problem), so a bad result
        changes nothing. `graph` is never modified. With `stored_ends`, a link may name a node
        stored by an earlier add instead of one of this graph (files merged in two passes).
        """
        data = parse_json(graph) if isinstance(graph, str | bytes) else graph
        nodes, links = graph_lists(data)
        with _collector_paused():
            read = read_links(links, key_by_source=self._key_by_source)
            raws = plain_node_ids(nodes, read)
            if raws is None:
                # names the problem, or accepts ends that match once normalised (or are stored)
                check_graph(data, known=self.knows if stored_ends else None)
                raws = [node["id"] for node in nodes]
            number = len(self._result_ids)
            self._result_ids.append(result_id if result_id is not None else f"result-{number + 1}")
            local = self._add_nodes(nodes, raws, number)
            indexes = self._add_links(links, read, local, number)
            touched = np.fromiter(local.values(), dtype=np.int32, count=len(local))
            self._touched_nodes.append(touched)  # int32: no graph in memory nears 2**31 items
            self._touched_links.append(indexes.astype(np.int32))

    def to_graph(self) -> dict[str, list[Record]]:
        """The merged graph in first-seen order, as new dicts and lists the caller may change."""
        with _collector_paused():
            node_provenance, link_provenance = self._provenance()
            node_ids = node_provenance.tuples()
            names = [record["id"] for record in self._nodes]
            nodes = [fresh_copy(record, node_ids[index]) for index, record in self._live()]
            links = self._links.records(link_provenance.decoded(), link_provenance.of_item, names)
            links += self._xref_records(names, node_ids.__getitem__, fresh=True)
            return {"nodes": nodes, "links": links}

    def to_json(self) -> bytes:
        """The merged graph serialised as seed graph JSON."""
        # pyarrow loads with the first output: the CLI and the app start without it
        from graphwright.core.merge_json import graph_json, links_json, nodes_json

        with _collector_paused():
            node_provenance, link_provenance = self._provenance()
            live = np.ones(len(self._nodes), dtype=bool)
            live[list(self._folded_nodes)] = False
            records = list(compress(self._nodes, live.tolist()))
            nodes = nodes_json(records, node_provenance, np.flatnonzero(live))
            names = [record["id"] for record in self._nodes]
            links = links_json(self._links, names, link_provenance)
            xrefs = self._xref_records(names, node_provenance.of, fresh=False)
            return graph_json(nodes, links, xrefs)

    def _provenance(self) -> tuple[Provenance, Provenance]:
        """Each node's and link's result ids, from the indexes each add touched."""
        nodes, links, ids = self._nodes, self._links, self._result_ids
        return (
            provenance(
                self._touched_nodes, len(nodes), self._folded_nodes, self._carried_nodes, ids
            ),
            provenance(self._touched_links, len(links), links.folded, links.carried, ids),
        )

    # -- identifiers -----------------------------------------------------------------------------

    def _normalize(self, raw: str) -> str:
        normalized = self._normalized.get(raw)
        if normalized is None:
            normalized = self._normalized[raw] = normalize_curie(raw)
        return normalized

    def _leader(self, raw: str) -> str:
        return self._find(self._normalize(raw))

    def _find(self, node_id: str) -> str:
        parent = self._parent
        root = node_id
        while (up := parent.get(root)) is not None:
            root = up
        while node_id != root:
            parent[node_id], node_id = root, parent[node_id]
        return root

    def _union(self, a: str, b: str) -> None:
        root_a, root_b = self._find(a), self._find(b)
        if root_a == root_b:
            return
        categories_a = self._categories.get(root_a, frozenset())
        categories_b = self._categories.get(root_b, frozenset())
        refusal = merge_refusal(categories_a, categories_b)
        if refusal is not None:
            self._refuse(a, b, refusal)
            return
        winner = pick_leader((root_a, root_b))
        loser = root_b if winner == root_a else root_a
        self._parent[loser] = winner
        if categories_a or categories_b:
            self._categories.pop(loser, None)
            self._categories[winner] = categories_a | categories_b
        members = self._members.pop(winner, [winner]) + self._members.pop(loser, [loser])
        self._members[winner] = members
        self._move_node(loser, winner)
        index = self._node_at.get(winner)
        if index is not None:
            self._nodes[index][EQUIVALENT_IDS] = sorted(members, key=prefix_rank)

    def _move_node(self, loser: str, winner: str) -> None:
        """Give the record of `loser` the id `winner`, folding it with the one already there."""
        index = self._node_at.pop(loser, None)
        if index is None:
            return
        kept = self._node_at.get(winner)
        if kept is None:  # links name nodes by index: nothing else to change
            self._nodes[index]["id"] = winner
            self._node_at[winner] = index
            return
        self._folds += 1
        first, other = sorted((index, kept))  # the first-seen record keeps its place
        self._node_at[winner] = first
        record, folded = self._nodes[first], self._nodes[other]
        record["id"] = winner
        merge_properties(record, folded, _NODE_FIXED)
        merge_conflicts(record, folded)
        self._folded_nodes[other] = first
        move_carried(self._carried_nodes, other, first)
        self._node_of_raw.clear()
        self._merged_node.clear()
        self._links.repoint(other, first)

    def _live_node(self, index: int) -> int:
        while (kept := self._folded_nodes.get(index)) is not None:
            index = kept
        return index

    def _live(self) -> Iterator[tuple[int, Record]]:
        folded = self._folded_nodes
        return ((index, node) for index, node in enumerate(self._nodes) if index not in folded)

    # -- nodes -----------------------------------------------------------------------------------

    def _add_nodes(self, nodes: list[Record], raws: list[str], number: int) -> dict[str, int]:
        """Merge the nodes; return each raw node id's node index."""
        records, merged_node = self._nodes, self._merged_node.get
        folds = self._folds
        local: dict[str, int] = {}
        for node, raw, index in zip(nodes, raws, map(self._node_of_raw.get, raws), strict=True):
            # The common case, a node merged before, is a comparison or two in C: `node` is
            # its record, adds nothing to it, or equals a node merged into it already.
            if index is None or not (
                node == (record := records[index])
                or node.items() <= record.items()
                or node == merged_node(raw)
            ):
                index = self._merge_node(node, raw, number)
            local[raw] = index
        if self._folds != folds:  # an equivalence later in this result folded earlier nodes
            local = {raw: self._live_node(index) for raw, index in local.items()}
        return local

    def _merge_node(self, node: Record, raw: str, number: int) -> int:
        """The careful path: equivalences, a new record, or properties to merge."""
        categories = node_categories(node)
        if categories:
            self._note_categories(self._normalize(raw), categories)
        declared = declared_ids(node, self._equivalence_fields)
        if declared:
            node_id = self._normalize(raw)
            for other in declared:
                self._union(node_id, self._normalize(other))
        index = self._node_of_raw.get(raw)
        inserted = False
        if index is None:
            leader = self._leader(raw)
            index = self._node_at.get(leader)
            if index is None:
                index, inserted = self._insert_node(leader, node), True
            self._node_of_raw[raw] = index
        carry(self._carried_nodes, index, node, number, before=inserted)
        record = self._nodes[index]
        if not node.items() <= record.items():
            if not inserted:
                merge_properties(record, node, _NODE_FIXED)
                merge_conflicts(record, node)
            snapshot = node_snapshot(node)
            if snapshot is not None:
                self._merged_node[raw] = snapshot
        return index

    def _insert_node(self, leader: str, node: Record) -> int:
        record = {field: owned(field, value) for field, value in node.items()}
        record.pop(PROVENANCE, None)
        record["id"] = leader
        members = self._members.get(leader)
        if members is not None:
            record[EQUIVALENT_IDS] = sorted(members, key=prefix_rank)
        elif EQUIVALENT_IDS in record:  # every declared equivalence was refused
            record[EQUIVALENT_IDS] = [leader]
        index = self._node_at[leader] = len(self._nodes)
        self._nodes.append(record)
        return index

    def _note_categories(self, node_id: str, categories: frozenset[str]) -> None:
        """Add a node's categories to its class. The first typed node of an id that an earlier
        declaration put in a class of incompatible categories leaves that class instead."""
        leader = self._find(node_id)
        known = self._categories.get(leader, frozenset())
        if known and node_id not in self._typed_ids and leader in self._members:
            refusal = merge_refusal(known, categories)
            if refusal is not None:
                self._refuse(node_id, leader, refusal)
                self._detach(node_id, leader)
                leader, known = node_id, frozenset()
        self._typed_ids.add(node_id)
        self._categories[leader] = known | categories

    def _detach(self, node_id: str, leader: str) -> None:
        """Take `node_id` out of its class (it has no record of its own yet)."""
        rest = [member for member in self._members.pop(leader) if member != node_id]
        new_leader = pick_leader(rest) if leader == node_id else leader
        for member in rest:
            self._parent[member] = new_leader
        self._parent.pop(new_leader, None)
        self._parent.pop(node_id, None)
        if len(rest) > 1:
            self._members[new_leader] = rest
        self._categories[new_leader] = self._categories.pop(leader, frozenset())
        index = self._node_at.pop(leader, None)
        if index is not None:
            self._node_at[new_leader] = index
            record = self._nodes[index]
            record["id"] = new_leader
            record[EQUIVALENT_IDS] = sorted(rest, key=prefix_rank)
        self._node_of_raw.clear()
        self._merged_node.clear()

    def _refuse(self, a: str, b: str, reason: str) -> None:
        pair = (a, b) if a <= b else (b, a)
        if pair not in self._refused:
            self._refused.add(pair)
            self.report.refused.append(RefusedMerge(a, b, reason))

    # -- xref links (core/merge_xrefs.py) -------------------------------------------------------

    def _xref_pairs(self) -> list[tuple[int, int]]:
        if not self._xref_links:
            return []
        return xref_pairs(self._live(), lambda xref: self._node_at.get(self._leader(xref)))

    def _xref_records(
        self, names: list[str], provenance_of: Callable[[int], tuple[str, ...]], *, fresh: bool
    ) -> list[Record]:
        return xref_links(self._xref_pairs(), names, provenance_of, fresh=fresh)

    # -- links -----------------------------------------------------------------------------------

    def _add_links(
        self, links: list[Any], read: Links, local: dict[str, int], number: int
    ) -> np.ndarray:
        """Merge the links; return their indexes."""
        size = len(read.sources)
        try:
            sources = np.fromiter(map(local.__getitem__, read.sources), np.int32, size)
            targets = np.fromiter(map(local.__getitem__, read.targets), np.int32, size)
        except KeyError:  # some end is named by a spelling no node of the result used
            sources = np.array([self._node_index(raw, local) for raw in read.sources], np.int32)
            targets = np.array([self._node_index(raw, local) for raw in read.targets], np.int32)
        table = self._links
        indexes, start = table.upsert(sources, targets, read.kinds)
        table.merge_evidence(indexes, read.evidence, read.pmids)
        if read.unusual:
            of_position = indexes.tolist()
            first_position = dict(
                zip(reversed(of_position), reversed(range(len(of_position))), strict=True)
            )
            for position in read.unusual:
                link, index = links[position], of_position[position]
                created = index >= start and first_position[index] == position
                table.merge_link(index, link, read.labels[position], created=created)
                carry(table.carried, index, link, number, before=created)
        return indexes

    def _node_index(self, raw: Any, local: dict[str, int]) -> int:
        index = local.get(raw)
        return index if index is not None else self._node_at[self._leader(raw)]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while merging.

    A merge allocates many small containers and creates no reference cycles; left on, the
    collector would scan them again and again during one large add.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
