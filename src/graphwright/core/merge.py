"""Incremental merge of knowledge graphs returned by many tool calls (seed 000, done right).

The seed's `mergeKnowledgeGraphs(merged, new)` rebuilds its maps from the whole accumulated graph
on every tool call. `GraphAccumulator` keeps its indexes between calls, so adding a result costs
O(size of that result). The rules are in docs/merge.md.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from typing import Any

import orjson

from graphwright.core.graph import check_graph, parse_json
from graphwright.core.ids import normalize_curie, normalize_pmid, pick_leader, prefix_rank

PROVENANCE = "provenance"
CONFLICTS = "conflicts"
EQUIVALENT_IDS = "equivalent_ids"
EQUIVALENCE_FIELDS = (EQUIVALENT_IDS, "same_as", "xref")
# Fields whose values are PMIDs, so that a bare `123` there means `PMID:123`.
PMID_FIELDS = frozenset({"pmid", "pmids", "PMID", "PMIDs", "publications", "publication"})

_NODE_FIXED = frozenset({"id", EQUIVALENT_IDS, PROVENANCE, CONFLICTS})
_LINK_FIXED = frozenset({"source", "target", "label", "evidence", PROVENANCE, CONFLICTS})
_SORT_KEYS = orjson.OPT_SORT_KEYS

LinkKey = tuple[Any, ...]
Record = dict[str, Any]
# A record's result ids: a bit mask of add numbers, or the ids themselves (see GraphAccumulator)
Provenance = int | tuple[str, ...]
# Adds recorded as mask bits; masks of up to 60 bits stay small ints (two 30-bit digits)
MASK_ADDS = 59
_JSON_SLICE = 10_000
_SCALARS = frozenset({str, int, float, bool, type(None)})


class GraphAccumulator:
    """Merges seed graphs one tool result at a time; see docs/merge.md for the rules.

    Internally `evidence` is a tuple, and `provenance` is usually a bit mask of the adds that
    touched the record (bit n: the n-th add, whose result id is `_result_id_of[n]`): recording
    a result is then one `|` in the hot loops instead of building a tuple, and records whose
    evidence did not change hold nothing the cyclic garbage collector must scan again. Records
    whose provenance is not in add order (carried by an input, or merged when two records
    fold), and every record after the first `MASK_ADDS` adds, hold a tuple of result ids.
    `to_graph()` and `to_json()` hand out lists.
    """

    def __init__(self, *, key_by_source: bool = False) -> None:
        self._key_by_source = key_by_source
        self._result_numbers = count(1)
        self._normalized: dict[str, str] = {}
        # raw id -> its node record (a record keeps its identity when it moves to a new leader;
        # emptied when a record is folded into another)
        self._record_of_raw: dict[str, Record] = {}
        # raw id -> a copy of a node already merged into that record which is not a subset of
        # it (a known conflict, an equivalence declared again): the same node again changes
        # nothing but provenance. Only nodes whose values are scalars or lists of scalars.
        self._merged_node: dict[str, Record] = {}
        self._parent: dict[str, str] = {}
        self._members: dict[str, list[str]] = {}
        self._nodes: dict[str, Record] = {}
        self._node_seq: dict[str, int] = {}
        self._node_order: list[Record] = []
        # Link key -> link, in first-seen order. Re-pointing a link adds its new key and leaves
        # the old one behind (stale, counted), so the link keeps its place: no later key can
        # equal a stale one, since that names an id which is no longer a leader.
        self._links: dict[LinkKey, Record] = {}
        self._stale_keys = 0
        # node id -> the links touching it; built when an equivalence first merges two stored
        # nodes, kept up to date from then on
        self._adjacent: dict[str, list[Record]] | None = None
        # id() of nodes and links folded into another one; they stay referenced (node order,
        # stale keys), so their ids are never reused
        self._folded: set[int] = set()
        self._moved_records = 0
        self._result_id_of: list[str] = [""]  # add number -> its result id

    @property
    def node_count(self) -> int:
        return len(self._nodes)

    @property
    def link_count(self) -> int:
        return len(self._links) - self._stale_keys

    def add(self, graph: dict[str, Any] | str | bytes, result_id: str | None = None) -> None:
        """Merge one tool result's graph; `result_id` (default `result-<n>`) goes to provenance.

        The graph is validated first (GraphFormatError names the problem), so a bad result
        changes nothing. `graph` is never modified.
        """
        owned = isinstance(graph, str | bytes)
        nodes, links = check_graph(parse_json(graph) if owned else graph)
        number = next(self._result_numbers)
        rid = result_id if result_id is not None else f"result-{number}"
        self._result_id_of.append(rid)
        bit = 1 << number if number <= MASK_ADDS else 0
        with _collector_paused():
            moved_before = self._moved_records
            local = self._add_nodes(nodes, bit)
            if self._moved_records != moved_before:
                # an equivalence declared later in this result may have moved earlier nodes
                local = {raw: self._find(leader) for raw, leader in local.items()}
            self._add_links(links, local, bit, owned=owned)

    def to_graph(self) -> dict[str, list[Record]]:
        """The merged graph in first-seen order, as new dicts and lists the caller may change."""
        ids = _ResultIds(self._result_id_of)
        with _collector_paused():
            return {
                "nodes": [_fresh_copy(node, ids) for node in self._live_nodes()],
                "links": [_fresh_link(link, ids) for link in self._live_links()],
            }

    def to_json(self) -> bytes:
        """The merged graph serialised as seed graph JSON."""
        ids = _ResultIds(self._result_id_of)
        parts = [b'{"nodes":[']
        with _collector_paused():
            for name, records in (("nodes", self._live_nodes()), ("links", self._live_links())):
                if name == "links":
                    parts.append(b'],"links":[')
                # in slices, so that the copies (with provenance as result ids) stay few
                for start in range(0, len(records), _JSON_SLICE):
                    chunk = records[start : start + _JSON_SLICE]
                    items = [{**item, PROVENANCE: ids[item[PROVENANCE]]} for item in chunk]
                    parts.extend((b"," if start else b"", orjson.dumps(items)[1:-1]))
        parts.append(b"]}")
        return b"".join(parts)

    def _live_nodes(self) -> list[Record]:
        folded = self._folded
        if not folded:
            return self._node_order
        return [node for node in self._node_order if id(node) not in folded]

    def _live_links(self) -> list[Record]:
        if not self._stale_keys:
            return list(self._links.values())
        folded, seen = self._folded, set()
        live = []
        for link in self._links.values():
            if id(link) not in folded and id(link) not in seen:
                seen.add(id(link))
                live.append(link)
        return live

    # -- provenance ----------------------------------------------------------------------------

    def _result_ids(self, provenance: Provenance) -> tuple[str, ...]:
        if type(provenance) is int:
            return _decoded(provenance, self._result_id_of)
        return provenance

    def _touched(self, provenance: Provenance) -> tuple[str, ...]:
        """`provenance` as result ids that end with (or already have) this add's result id."""
        past = self._result_ids(provenance)
        rid = self._result_id_of[-1]
        return past if rid in past else (*past, rid)

    def _add_provenance(self, record: Record, result_ids: tuple[str, ...]) -> None:
        past = self._result_ids(record[PROVENANCE])
        merged = _with_prior(past, result_ids)
        if merged != past:
            record[PROVENANCE] = merged

    # -- identifiers -------------------------------------------------------------------------

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
        winner = pick_leader((root_a, root_b))
        loser = root_b if winner == root_a else root_a
        self._parent[loser] = winner
        members = self._members.pop(winner, [winner]) + self._members.pop(loser, [loser])
        self._members[winner] = members
        self._move_node(loser, winner)
        record = self._nodes.get(winner)
        if record is not None:
            record[EQUIVALENT_IDS] = sorted(members, key=prefix_rank)

    def _move_node(self, loser: str, winner: str) -> None:
        """Re-key the record and links of `loser` under `winner`, folding duplicates."""
        moved = self._nodes.pop(loser, None)
        if moved is None:
            return
        self._moved_records += 1
        moved_seq = self._node_seq.pop(loser)
        kept = self._nodes.get(winner)
        if kept is None:
            moved["id"] = winner
            self._nodes[winner] = moved
            self._node_seq[winner] = moved_seq
        else:
            if moved_seq < self._node_seq[winner]:  # the first-seen record keeps its place
                kept, moved = moved, kept
                self._node_seq[winner] = moved_seq
                kept["id"] = winner
                self._nodes[winner] = kept
            self._fold(kept, moved, _NODE_FIXED)
            # some raw ids led to the folded record
            self._record_of_raw.clear()
            self._merged_node.clear()
        self._repoint_links(loser, winner)

    def _fold(self, kept: Record, other: Record, fixed: frozenset) -> None:
        """Fold the stored record `other` (same node or link) into `kept`."""
        _merge_properties(kept, other, fixed)
        self._add_provenance(kept, self._result_ids(other[PROVENANCE]))
        _merge_conflicts(kept, other)
        self._folded.add(id(other))

    def _merge_input(self, record: Record, item: Record, fixed: frozenset) -> None:
        """Merge an input node or link's properties, provenance and conflicts into `record`."""
        _merge_properties(record, item, fixed)
        incoming = item.get(PROVENANCE)
        if incoming:
            self._add_provenance(record, _with_prior(incoming, ()))
        _merge_conflicts(record, item)

    def _repoint_links(self, loser: str, winner: str) -> None:
        """Only the links touching `loser` are re-keyed (the adjacency index lists them)."""
        adjacent = self._adjacency()
        touching = adjacent.pop(loser, [])
        links, folded = self._links, self._folded
        for link in touching:
            source, target = link["source"], link["target"]
            if id(link) in folded or (source != loser and target != loser):
                continue
            self._stale_keys += 1
            source = winner if source == loser else source
            target = winner if target == loser else target
            link["source"], link["target"] = source, target
            key = self._link_key(source, link, target)
            kept = links.get(key)
            if kept is None:
                links[key] = link
            else:
                if link["evidence"]:
                    kept["evidence"] = _union_evidence(kept["evidence"], link["evidence"])
                self._fold(kept, link, _LINK_FIXED)
        adjacent.setdefault(winner, []).extend(touching)

    def _adjacency(self) -> dict[str, list[Record]]:
        if self._adjacent is None:
            self._adjacent = {}
            for link in self._live_links():
                self._adjacent.setdefault(link["source"], []).append(link)
                if link["target"] != link["source"]:
                    self._adjacent.setdefault(link["target"], []).append(link)
        return self._adjacent

    def _link_key(self, source: str, link: Record, target: str) -> LinkKey:
        label = link.get("label") or ""
        if self._key_by_source:
            return (source, label, target, primary_knowledge_source(link))
        return (source, label, target)

    # -- nodes and links -----------------------------------------------------------------------

    def _add_nodes(self, nodes: list[Record], bit: int) -> dict[str, str]:
        """Merge the nodes; return each raw node id's leader."""
        local: dict[str, str] = {}
        record_of_raw, merged_node = self._record_of_raw.get, self._merged_node.get
        for node in nodes:
            raw = node["id"]
            record = record_of_raw(raw)
            # The common case, a node merged before, is two C-speed comparisons: `node` adds
            # nothing to its record, or equals a node that was merged into it already.
            if record is None or not (node.items() <= record.items() or node == merged_node(raw)):
                record = self._merge_node(node, raw, bit)
            local[raw] = record["id"]
            provenance = record[PROVENANCE]
            if type(provenance) is int and bit:
                record[PROVENANCE] = provenance | bit
            else:
                record[PROVENANCE] = self._touched(provenance)
        return local

    def _merge_node(self, node: Record, raw: str, bit: int) -> Record:
        """The careful path: equivalences, a new record, or properties to merge."""
        if "equivalent_ids" in node or "same_as" in node or "xref" in node:
            node_id = self._normalize(raw)
            for other in _declared_equivalents(node):
                self._union(node_id, self._normalize(other))
        record = self._record_of_raw.get(raw)
        if record is None:
            leader = self._leader(raw)
            record = self._nodes.get(leader)
            inserted = record is None
            if inserted:
                record = self._insert_node(leader, node, bit)
            self._record_of_raw[raw] = record
        else:
            inserted = False
        if not node.items() <= record.items():
            if not inserted:
                self._merge_input(record, node, _NODE_FIXED)
            snapshot = _snapshot(node)
            if snapshot is not None:
                self._merged_node[raw] = snapshot
        return record

    def _insert_node(self, leader: str, node: Record, bit: int) -> Record:
        record = node.copy()
        for field, value in node.items():
            if type(value) is list or type(value) is dict or field in PMID_FIELDS:
                record[field] = _owned(field, value)
        record["id"] = leader
        members = self._members.get(leader)
        if members is not None:
            record[EQUIVALENT_IDS] = sorted(members, key=prefix_rank)
        record[PROVENANCE] = self._new_provenance(node.get(PROVENANCE), bit)
        self._nodes[leader] = record
        self._node_seq[leader] = len(self._node_order)
        self._node_order.append(record)
        return record

    def _new_provenance(self, prior: Any, bit: int) -> Provenance:
        """Provenance an input already carried (a merged graph added again), then this add's."""
        if not prior and bit:
            return bit
        return _with_prior(prior, (self._result_id_of[-1],))

    def _add_links(
        self, links: list[Record], local: dict[str, str], bit: int, *, owned: bool
    ) -> None:
        # The hot loop of a merge: plain dict and tuple operations, and helper calls only for
        # what the common case (a new link, or a repeated one with known evidence) does not need.
        index_get, index = self._links.get, self._links
        adjacent = self._adjacent
        by_source = self._key_by_source
        for link in links:
            try:  # subscripts, not .get() calls: a link of the usual shape costs less
                source, target = local[link["source"]], local[link["target"]]
                label, evidence = link["label"], link["evidence"]
            except KeyError:
                source, target, label, evidence = self._link_parts(link, local)
            if by_source:
                key: LinkKey = (source, label or "", target, primary_knowledge_source(link))
            else:
                key = (source, label or "", target)
            if not evidence:
                evidence = ()
            elif type(evidence) is not list and type(evidence) is not tuple:
                evidence = (evidence,)
            # `plain`: only source, target, label and evidence, no other fields to merge
            plain = len(link) == 4 and label is not None and "evidence" in link
            kept = index_get(key)
            if kept is None:
                if (
                    len(evidence) == 1
                    and type(item := evidence[0]) is str
                    and item[:5] == "PMID:"
                    and item[5:].isdigit()
                ):
                    evidence = (item,)
                elif evidence:
                    evidence = _normalized_evidence(evidence)
                if plain and bit:
                    # a new dict holding no list, which the garbage collector can stop
                    # tracking (a copy of the input would stay tracked)
                    new = {"source": source, "target": target, "label": label,
                           "evidence": evidence, PROVENANCE: bit}  # fmt: skip
                else:
                    new = self._new_link(link, source, target, evidence, bit, owned=owned)
                index[key] = new
                if adjacent is not None:
                    adjacent.setdefault(source, []).append(new)
                    if target != source:
                        adjacent.setdefault(target, []).append(new)
                continue
            if evidence:
                current = kept["evidence"]
                for item in evidence:
                    if item not in current:
                        kept["evidence"] = _union_evidence(current, evidence)
                        break
            provenance = kept[PROVENANCE]
            if type(provenance) is int and bit:
                kept[PROVENANCE] = provenance | bit
            else:
                kept[PROVENANCE] = self._touched(provenance)
            if not plain and len(link) > 2 + ("label" in link) + ("evidence" in link):
                self._merge_input(kept, link, _LINK_FIXED)

    def _link_parts(self, link: Record, local: dict[str, str]) -> tuple[str, str, Any, Any]:
        """Source and target leaders, label and evidence of a link without the usual shape."""
        source = local.get(link["source"]) or self._leader(link["source"])
        target = local.get(link["target"]) or self._leader(link["target"])
        return source, target, link.get("label"), link.get("evidence")

    def _new_link(
        self, link: Record, source: str, target: str, evidence: Any, bit: int, *, owned: bool
    ) -> Record:
        new = link if owned else link.copy()
        new["source"] = source
        new["target"] = target
        new["evidence"] = evidence
        new[PROVENANCE] = self._new_provenance(link.get(PROVENANCE), bit)
        _own_extras(new)
        return new


def _decoded(mask: int, result_id_of: list[str]) -> tuple[str, ...]:
    """The result ids of the adds whose bits are set, in add order, each once."""
    ids: dict[str, None] = {}
    while mask:
        lowest = mask & -mask
        ids[result_id_of[lowest.bit_length() - 1]] = None
        mask ^= lowest
    return tuple(ids)


class _ResultIds(dict[Any, tuple[str, ...]]):
    """`ids[provenance]`: a stored provenance's result ids, each mask decoded once (a dict
    lookup per record when writing out the whole graph)."""

    def __init__(self, result_id_of: list[str]) -> None:
        super().__init__()
        self._result_id_of = result_id_of

    def __missing__(self, provenance: Provenance) -> tuple[str, ...]:
        if type(provenance) is not int:
            return provenance
        ids = self[provenance] = _decoded(provenance, self._result_id_of)
        return ids


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while merging.

    A merge allocates many small dicts and tuples and creates no reference cycles; left on, the
    collector would rescan the whole accumulated graph again and again during one large add.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def primary_knowledge_source(link: Record) -> str | None:
    """Translator's primary knowledge source of a link, from its field or its `sources` list."""
    value = link.get("primary_knowledge_source")
    if value:
        return value if isinstance(value, str) else _canonical_json(value).decode()
    for source in link.get("sources") or ():
        if isinstance(source, dict) and source.get("resource_role") == "primary_knowledge_source":
            resource = source.get("resource_id")
            return resource if resource is None or isinstance(resource, str) else str(resource)
    return None


def _declared_equivalents(node: Record) -> list[str]:
    found: list[str] = []
    for field in EQUIVALENCE_FIELDS:
        value = node.get(field)
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            found.extend(item for item in value if isinstance(item, str) and item.strip())
    return found


# -- values ------------------------------------------------------------------------------------


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {} or value == ()


def _canonical_json(value: Any) -> bytes:
    return orjson.dumps(value, option=_SORT_KEYS)


def _hash_key(value: Any) -> Any:
    """A key under which equal JSON values compare equal (dicts and lists by canonical JSON)."""
    if isinstance(value, dict | list | tuple):
        return _canonical_json(value)
    return value


def _pmid_item(value: Any) -> Any:
    return normalize_pmid(value, bare_digits=True) or value


def _normalized_evidence(items: Any) -> tuple[Any, ...]:
    for item in items:
        if not (type(item) is str and item[:5] == "PMID:" and item[5:].isdigit()):
            return _union_evidence((), items)
    return tuple(dict.fromkeys(items))  # all canonical PMIDs already: just drop repeats


def _union_evidence(current: tuple[Any, ...], items: Any) -> tuple[Any, ...]:
    """`current` followed by the items not in it yet; PMIDs as `PMID:<digits>`."""
    added: dict[str, None] = {}  # the common case: canonical PMIDs only, compared as they are
    for item in items:
        if not (type(item) is str and item[:5] == "PMID:" and item[5:].isdigit()):
            return _union_evidence_slowly(current, items)
        if item not in current:
            added[item] = None
    return (*current, *added) if added else current


def _union_evidence_slowly(current: tuple[Any, ...], items: Any) -> tuple[Any, ...]:
    seen = {item if type(item) is str else _hash_key(item) for item in current}
    added = []
    for item in items:
        if type(item) is str:
            if not (item[:5] == "PMID:" and item[5:].isdigit()):
                item = normalize_pmid(item) or item.strip()
            key = item
        else:
            key = _hash_key(item)
        if key not in seen:
            seen.add(key)
            added.append(item)
    return (*current, *added) if added else current


def _union_lists(current: list[Any], incoming: list[Any], field: str) -> list[Any]:
    normalize = _pmid_item if field in PMID_FIELDS else None
    result = list(current)
    seen = {_hash_key(item) for item in current}
    for item in incoming:
        if normalize is not None:
            item = normalize(item)
        key = _hash_key(item)
        if key not in seen:
            seen.add(key)
            result.append(item)
    return result


def _owned(field: str, value: Any) -> Any:
    """A value as the accumulator stores it: lists copied (PMID fields normalised), dicts copied."""
    if type(value) is list or type(value) is tuple:
        return _union_lists([], value, field) if field in PMID_FIELDS else list(value)
    if type(value) is dict:
        return {key: _owned("", item) for key, item in value.items()}
    if field in PMID_FIELDS:
        return _pmid_item(value)
    return value


def _own_extras(link: Record) -> None:
    for field, value in link.items():
        if field not in _LINK_FIXED:
            link[field] = _owned(field, value)


def _fresh_copy(item: Record, result_ids: _ResultIds) -> Record:
    fresh = {key: _owned("", value) for key, value in item.items()}
    fresh[PROVENANCE] = list(result_ids[item[PROVENANCE]])
    return fresh


def _fresh_link(link: Record, result_ids: _ResultIds) -> Record:
    if len(link) == 4 + ("label" in link):  # source, target, evidence, provenance only
        return {**link, "evidence": list(link["evidence"]),
                PROVENANCE: list(result_ids[link[PROVENANCE]])}  # fmt: skip
    return _fresh_copy(link, result_ids)


def _snapshot(node: Record) -> Record | None:
    """A copy of `node` that later changes to it cannot reach, if its values are JSON scalars
    or lists of them (else None: not worth a deep copy)."""
    snapshot = {}
    for field, value in node.items():
        if type(value) is list or type(value) is tuple:
            if not all(type(item) in _SCALARS for item in value):
                return None
            value = list(value) if type(value) is list else value
        elif type(value) not in _SCALARS:
            return None
        snapshot[field] = value
    return snapshot


def _with_prior(prior: Any, provenance: tuple[str, ...]) -> tuple[str, ...]:
    """Provenance an input already carried (a merged graph added again), then this result's."""
    if not prior:
        return provenance
    items = prior if isinstance(prior, list | tuple) else [prior]
    merged = dict.fromkeys(item for item in items if isinstance(item, str))
    merged.update(dict.fromkeys(provenance))
    return tuple(merged)


def _merge_properties(record: Record, other: Record, fixed: frozenset) -> None:
    for field, value in other.items():
        if field not in fixed and record.get(field) != value:
            _merge_property(record, field, value)


def _merge_conflicts(record: Record, other: Record) -> None:
    conflicts = other.get(CONFLICTS)
    if isinstance(conflicts, dict):
        for field, values in conflicts.items():
            for value in values if isinstance(values, list) else [values]:
                _record_conflict(record, field, value)


def _merge_property(record: Record, field: str, value: Any) -> None:
    """First non-empty scalar wins, lists are unioned, a differing scalar goes to `conflicts`."""
    if field not in record or _is_empty(record[field]):
        if field not in record or not _is_empty(value):
            record[field] = _owned(field, value)
        return
    current = record[field]
    if _is_empty(value):
        return
    if field in PMID_FIELDS and type(current) is not list and type(value) is not list:
        value = _pmid_item(value)
        if current == value:
            return
    if type(current) is list or type(value) is list:
        record[field] = _union_lists(
            current if type(current) is list else [current],
            value if type(value) is list else [value],
            field,
        )
    else:
        _record_conflict(record, field, value)


def _record_conflict(record: Record, field: str, value: Any) -> None:
    conflicts = record.setdefault(CONFLICTS, {})
    values = conflicts.get(field)
    if values is None:
        values = conflicts[field] = [record.get(field)]
    key = _hash_key(value)
    if all(_hash_key(seen) != key for seen in values):
        values.append(value)
