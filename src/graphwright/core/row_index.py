"""Row key -> row index, for a whole batch of keys at once, in numpy (docs/merge.md, rule 4).

A table kept as numpy columns (the link table, the links' evidence) keys its rows by some of its
columns: a link by (source node index, target node index, kind number), an evidence item by
(link index, PMID). `RowIndex` is an open-addressing hash table with linear probing whose slots
hold row indexes only: the keys stay in the table's columns, which every probe reads to compare.
Each operation runs over a batch of keys with a few numpy passes per probe step, so no Python
code runs per row, and the index costs 4 bytes per slot instead of a dict entry and a Python
int per row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphwright.core.column import Column

EMPTY, REMOVED = -1, -2  # slots holding no row: never used, or whose row was removed
_MIN_SLOTS = 1 << 10
_MAX_LOAD = 4  # at most one slot in four is used (rows and removed ones): probes stay short
_MIX = np.uint64(0xBF58476D1CE4E5B9)  # odd multipliers of a 64-bit finaliser (splitmix64)
_PART_MIX = np.uint64(0x94D049BB133111EB)

# a row key's parts, two or more integer arrays: (source, target, kind) of links,
# (link, PMID) of evidence items
Keys = tuple[np.ndarray, ...]


class RowIndex:
    """The stored row of each key, for batches of keys (see the module's docstring)."""

    def __init__(self) -> None:
        self._slots = np.full(_MIN_SLOTS, EMPTY, dtype=np.int32)
        self._used = 0  # slots holding a row or REMOVED

    def find(self, keys: Keys, columns: Keys) -> np.ndarray:
        """The row index of each key, -1 where no row has it; `columns` are the table's key
        columns."""
        found = np.full(len(keys[0]), -1, dtype=np.int64)
        pending = np.arange(len(found))
        slots = self._home(keys)
        while len(pending):
            held = self._slots[slots]
            filled = np.flatnonzero(held >= 0)
            same = _equal(keys, pending[filled], columns, held[filled])
            found[pending[filled[same]]] = held[filled[same]]
            # go on past rows of other keys and removed ones; an empty slot ends the search
            going_on = held != EMPTY
            going_on[filled[same]] = False
            pending, slots = pending[going_on], self._next(slots[going_on])
        return found

    def insert(self, rows: np.ndarray, columns: Keys) -> None:
        """Index rows whose keys are distinct and not indexed yet."""
        if (self._used + len(rows)) * _MAX_LOAD > len(self._slots):
            self._grow(len(rows), columns)
        self._place(rows, columns)

    def remove(self, rows: np.ndarray, columns: Keys) -> None:
        """Forget indexed rows (before their keys change in `columns`)."""
        keys = keys_of(rows, columns)
        pending = np.arange(len(rows))
        slots = self._home(keys)
        while len(pending):
            held = self._slots[slots]
            here = held == rows[pending]
            self._slots[slots[here]] = REMOVED
            going_on = ~here & (held != EMPTY)  # an empty slot: the row was not indexed
            pending, slots = pending[going_on], self._next(slots[going_on])

    def _place(self, rows: np.ndarray, columns: Keys) -> None:
        keys = keys_of(rows, columns)
        self._used += len(rows)
        pending = np.arange(len(rows))
        slots = self._home(keys)
        while len(pending):
            free = self._slots[slots] == EMPTY
            # several rows may want one free slot: one of them gets it, the rest probe on
            self._slots[slots[free]] = rows[pending[free]]
            placed = np.zeros(len(pending), dtype=bool)
            placed[free] = self._slots[slots[free]] == rows[pending[free]]
            pending, slots = pending[~placed], self._next(slots[~placed])

    def _grow(self, adding: int, columns: Keys) -> None:
        """A table for the rows held and `adding` more, at most a quarter full (REMOVED slots
        are dropped)."""
        held = self._slots[self._slots >= 0]
        size = len(self._slots)
        while (len(held) + adding) * _MAX_LOAD > size:
            size *= 2
        self._slots = np.full(size, EMPTY, dtype=np.int32)
        self._used = 0
        self._place(held, columns)

    def _home(self, keys: Keys) -> np.ndarray:
        """Each key's first slot: the top bits of a 64-bit mix of its parts."""
        first, second, *rest = (part.astype(np.uint64) for part in keys)
        mixed = (first << np.uint64(32)) ^ second
        for part in rest:
            mixed ^= part * _PART_MIX
        mixed ^= mixed >> np.uint64(31)
        mixed *= _MIX
        mixed ^= mixed >> np.uint64(29)
        bits = len(self._slots).bit_length() - 1
        return (mixed >> np.uint64(64 - bits)).astype(np.int64)

    def _next(self, slots: np.ndarray) -> np.ndarray:
        return (slots + 1) & (len(self._slots) - 1)


class KeyedRows:
    """Rows of integer key columns, one per distinct key, in first-seen order, found by key
    through a `RowIndex` (the links by (source, target, kind); evidence by (link, PMID))."""

    def __init__(self, *dtypes: Any) -> None:
        self._columns = tuple(Column(dtype) for dtype in dtypes)
        self._index = RowIndex()

    def __len__(self) -> int:
        return len(self._columns[0])

    @property
    def columns(self) -> Keys:
        """The key columns (views: a row's key changes between `unindex` and `index`)."""
        return tuple(column.array for column in self._columns)

    def find(self, keys: Keys) -> np.ndarray:
        """The row of each key, -1 where no row has it."""
        return self._index.find(keys, self.columns)

    def upsert(self, keys: Keys) -> np.ndarray:
        """The row of each key, rows for new keys appended in first-seen order."""
        found = self.find(keys)
        new = np.flatnonzero(found < 0)
        if len(new):
            firsts, number = first_occurrences(tuple(part[new] for part in keys))
            start = len(self)
            for column, part in zip(self._columns, keys, strict=True):
                column.extend(part[new[firsts]])  # a key repeated in `keys`: its first place
            self._index.insert(np.arange(start, len(self)), self.columns)
            found[new] = start + number
        return found

    def unindex(self, rows: np.ndarray) -> None:
        """Forget rows whose keys are about to change (or that are dropped)."""
        self._index.remove(rows, self.columns)

    def index(self, rows: np.ndarray) -> None:
        """Index rows whose keys are distinct and not indexed yet."""
        self._index.insert(rows, self.columns)


def keys_of(rows: np.ndarray, columns: Keys) -> Keys:
    """The keys of these rows, read from the table's key columns."""
    return tuple(column[rows] for column in columns)


def _equal(keys: Keys, positions: np.ndarray, columns: Keys, rows: np.ndarray) -> np.ndarray:
    """Whether the key at each position is the key of the row beside it."""
    same = keys[0][positions] == columns[0][rows]
    for part, column in zip(keys[1:], columns[1:], strict=True):
        same &= part[positions] == column[rows]
    return same


def first_occurrences(keys: Keys) -> tuple[np.ndarray, np.ndarray]:
    """Where each distinct key first occurs (positions, ascending), and each position's key
    as a number into them."""
    packed = _packed(keys)
    if packed is not None:  # one stable sort of one int per key
        _, firsts, of_position = np.unique(packed, return_index=True, return_inverse=True)
    else:  # a sort on the parts (numbers too large to pack)
        order = np.lexsort((np.arange(len(keys[0])), *reversed(keys)))
        starts = np.zeros(len(order), dtype=bool)
        starts[:1] = True
        for part in keys:
            ordered = part[order]
            starts[1:] |= ordered[1:] != ordered[:-1]
        firsts = order[starts]  # of each key, in key order
        of_position = np.empty(len(order), dtype=np.int64)
        of_position[order] = np.cumsum(starts) - 1
    by_position = np.argsort(firsts)
    number = np.empty(len(firsts), dtype=np.int64)
    number[by_position] = np.arange(len(firsts))
    return firsts[by_position], number[of_position]


def _packed(keys: Keys) -> np.ndarray | None:
    """Each key as one int64, its parts side by side, if they fit in 63 bits."""
    widths = [int(part.max()).bit_length() if len(part) else 0 for part in keys]
    if sum(widths) > 63:
        return None
    packed = keys[0].astype(np.int64)
    for part, width in zip(keys[1:], widths[1:], strict=True):
        packed = (packed << width) | part.astype(np.int64)
    return packed
