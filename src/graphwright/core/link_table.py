"""The links of a merged graph, stored as columns (docs/merge.md, rules 4 and 5).

A million links held as dicts and tuples would make every full pass of Python's cyclic garbage
collector walk all of them, in whatever code the process runs next. numpy columns are invisible
to it. A link's key is its source and target node indexes and its kind, which numbers the link's
label (with `key_by_source`, its label and primary knowledge source); `KeyedRows` hold the keys
and find links by them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from graphwright.core.link_evidence import GroupedEvidence, LinkEvidence, Pmids
from graphwright.core.merge_values import (
    CONFLICTS,
    PROVENANCE,
    Record,
    merge_conflicts,
    merge_properties,
    owned,
)
from graphwright.core.row_index import KeyedRows, Keys, first_occurrences, keys_of

LINK_FIXED = frozenset({"source", "target", "label", "evidence", PROVENANCE, CONFLICTS})
NO_LABEL = object()  # a link given without a `label` field

# Links turned into records a slice at a time: the Python ints of every link's ends at once
# would add tens of MB to the peak memory of a million-link `to_graph()`.
_RECORDS_AT_ONCE = 50_000

# (add number, result ids an input item carried, whether they come before that add's result id)
Carried = tuple[int, tuple[str, ...], bool]


class LinkTable:
    """Links by index, in first-seen order; a link folded into another keeps its index."""

    def __init__(self) -> None:
        # int32: no graph held in memory comes near 2**31 nodes or kinds
        self._rows = KeyedRows(np.int32, np.int32, np.int32)  # (source, target, kind) by link
        self._kind_of: dict[Hashable, int] = {}
        self._kind_labels: list[Any] = []  # kind number -> the label part of its links' keys
        self._evidence = LinkEvidence()
        self._labels: dict[int, Any] = {}  # a label not stored as its kind's (absent, empty, ...)
        self._fields: dict[int, Record] = {}  # fields besides the four, and conflicts
        self.folded: dict[int, int] = {}  # link index -> the index it was folded into
        self.carried: dict[int, list[Carried]] = {}
        # node index -> the links touching it; built when two stored nodes first fold
        self._adjacent: dict[int, list[int]] | None = None

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def live_count(self) -> int:
        return len(self) - len(self.folded)

    def upsert(
        self, sources: ArrayLike, targets: ArrayLike, kinds: Sequence[Hashable]
    ) -> tuple[np.ndarray, int]:
        """Each link's index, new links appended in first-seen order; and the first new index.
        `sources` and `targets` are node indexes."""
        start = len(self)
        keys = (
            np.asarray(sources, dtype=np.int32),
            np.asarray(targets, dtype=np.int32),
            self._kind_numbers(kinds),
        )
        found = self._rows.upsert(keys)
        if self._adjacent is not None:
            self._index_adjacent(self._adjacent, range(start, len(self)))
        return found, start

    def merge_evidence(
        self, indexes: np.ndarray, evidence: Sequence[Any], pmids: Pmids | None
    ) -> None:
        """Unite each link's given evidence into its stored evidence (`LinkEvidence.merge`)."""
        self._evidence.merge(indexes, evidence, pmids)

    def merge_link(self, index: int, link: Record, label: Any, *, created: bool) -> None:
        """A link with an unusual label or fields besides source, target, label and evidence."""
        if created and not (type(label) is str and label):
            self._labels[index] = label
        fields = self._fields.setdefault(index, {})
        merge_properties(fields, link, LINK_FIXED)
        merge_conflicts(fields, link)
        if not fields:
            del self._fields[index]

    def repoint(self, other: int, kept: int) -> None:
        """Links touching node `other` now touch node `kept`; links that become one fold."""
        adjacent = self._adjacency()
        touching = adjacent.pop(other, [])
        if not touching:  # a node without links (nodes files merged before their edges)
            return
        source, target, _ = self._rows.columns
        live = dict.fromkeys(index for index in touching if index not in self.folded)
        links = np.fromiter(live, dtype=np.int64, count=len(live))
        links = links[(source[links] == other) | (target[links] == other)]
        self._rows.unindex(links)
        for column in (source, target):
            ends = column[links]
            ends[ends == other] = kept
            column[links] = ends
        keys = keys_of(links, self._rows.columns)
        found = self._rows.find(keys)
        firsts, number = first_occurrences(keys)
        # of the links that now share a key no stored link has, the first one is indexed
        self._rows.index(links[firsts[found[firsts] < 0]])
        into = np.where(found >= 0, found, links[firsts[number]])
        # a link already stored under the new key absorbs the others
        folding = into != links
        kept_links, others = into[folding].tolist(), links[folding].tolist()
        for kept_link, link in zip(kept_links, others, strict=True):
            self._fold(kept_link, link)
        self._evidence.fold(kept_links, others)
        adjacent.setdefault(kept, []).extend(touching)

    def records(
        self, provenance: list[tuple[str, ...]], of_link: np.ndarray, names: list[str]
    ) -> list[Record]:
        """The live links as seed links with lists of their own, in first-seen order; link i's
        result ids are `provenance[of_link[i]]`."""
        kind_labels, special, folded = self._kind_labels, self.special, self.folded
        evidence = self.grouped_evidence()
        records: list[Record] = []
        for start in range(0, len(self), _RECORDS_AT_ONCE):
            stop = min(start + _RECORDS_AT_ONCE, len(self))
            columns = (column.tolist() for column in self.arrays(start, stop))
            entries = of_link[start:stop].tolist()
            lists = evidence.lists(start, stop)
            rows = zip(range(start, stop), *columns, lists, entries, strict=True)
            for index, source, target, kind, items, entry in rows:
                if index in special:
                    if index not in folded:
                        ids = provenance[entry]
                        records.append(self.record(index, ids, names, evidence, fresh=True))
                    continue
                records.append({"source": names[source], "target": names[target],
                                "label": kind_labels[kind], "evidence": items,
                                PROVENANCE: list(provenance[entry])})  # fmt: skip
        return records

    def record(
        self,
        index: int,
        provenance: tuple[str, ...],
        names: list[str],
        evidence: GroupedEvidence,
        *,
        fresh: bool,
    ) -> Record:
        """One link as a seed link, whatever its shape."""
        items = evidence.of(index)
        source, target, kind = (int(column[index]) for column in self._rows.columns)
        link = {"source": names[source], "target": names[target],
                "label": self._labels.get(index, self._kind_labels[kind]),
                "evidence": list(items) if fresh else items}  # fmt: skip
        if link["label"] is NO_LABEL:
            del link["label"]
        fields = self._fields.get(index)
        if fields:
            link.update((name, owned("", value)) for name, value in fields.items())
        link[PROVENANCE] = list(provenance) if fresh else provenance
        return link

    @property
    def special(self) -> set[int]:
        """Links that are folded, or whose label, fields or evidence are not the usual ones."""
        unusual = self._labels.keys() | self._fields.keys() | self._evidence.loose.keys()
        return unusual | self.folded.keys()

    @property
    def kind_labels(self) -> list[Any]:
        """Kind number -> the label part of its links' keys."""
        return self._kind_labels

    def arrays(self, start: int, stop: int) -> Keys:
        """Source and target node indexes and kind numbers of links `start:stop` (read-only
        use: views of the columns)."""
        return tuple(column[start:stop] for column in self._rows.columns)

    def grouped_evidence(self) -> GroupedEvidence:
        """Every link's evidence, grouped by link for output."""
        return self._evidence.grouped(len(self))

    def _kind_numbers(self, kinds: Sequence[Hashable]) -> np.ndarray:
        numbers = {kind: self._kind_number(kind) for kind in set(kinds)}
        if len(numbers) == 1:
            return np.full(len(kinds), numbers.popitem()[1], dtype=np.int32)
        return np.fromiter(map(numbers.__getitem__, kinds), dtype=np.int32, count=len(kinds))

    def _kind_number(self, kind: Hashable) -> int:
        number = self._kind_of.get(kind)
        if number is None:
            number = self._kind_of[kind] = len(self._kind_labels)
            self._kind_labels.append(kind[0] if type(kind) is tuple else kind)
        return number

    def _fold(self, kept: int, other: int) -> None:
        """Link `other` joins link `kept` (their evidence: `LinkEvidence.fold`)."""
        fields = self._fields.pop(other, None)
        if fields:
            record = self._fields.setdefault(kept, {})
            merge_properties(record, fields, LINK_FIXED)
            merge_conflicts(record, fields)
        self.folded[other] = kept
        move_carried(self.carried, other, kept)

    def _adjacency(self) -> dict[int, list[int]]:
        if self._adjacent is None:
            self._adjacent = {}
            folded = self.folded
            live = (index for index in range(len(self)) if index not in folded)
            self._index_adjacent(self._adjacent, live)
        return self._adjacent

    def _index_adjacent(self, adjacent: dict[int, list[int]], indexes: Iterable[int]) -> None:
        source, target, _ = self._rows.columns
        for index in indexes:
            ends = int(source[index]), int(target[index])
            adjacent.setdefault(ends[0], []).append(index)
            if ends[1] != ends[0]:
                adjacent.setdefault(ends[1], []).append(index)


def move_carried(table: dict[int, list[Carried]], other: int, kept: int) -> None:
    entries = table.pop(other, None)
    if entries:
        table.setdefault(kept, []).extend(entries)
