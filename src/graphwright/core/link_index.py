"""Link key -> link index for a whole batch of links at once, in numpy (docs/merge.md, rule 4).

A link's key is its (source node index, target node index, kind number). `LinkIndex` is an
open-addressing hash table with linear probing whose slots hold link indexes only: the keys
stay in the link table's columns, which every probe reads to compare. Each operation runs over
a batch of keys with a few numpy passes per probe step, so no Python code runs per link, and
the table costs 4 bytes per slot instead of a dict entry and a Python int per link.
"""

from __future__ import annotations

import numpy as np

EMPTY, REMOVED = -1, -2  # slots holding no link: never used, or whose link was removed
_MIN_SLOTS = 1 << 10
_MAX_LOAD = 4  # at most one slot in four is used (links and removed ones): probes stay short
_MIX = np.uint64(0xBF58476D1CE4E5B9)  # odd multipliers of a 64-bit finaliser (splitmix64)
_KIND_MIX = np.uint64(0x94D049BB133111EB)

# a link key's parts: source and target node indexes and kind numbers (int32 arrays)
Keys = tuple[np.ndarray, np.ndarray, np.ndarray]


class LinkIndex:
    """The stored link of each key, for batches of keys (see the module's docstring)."""

    def __init__(self) -> None:
        self._slots = np.full(_MIN_SLOTS, EMPTY, dtype=np.int32)
        self._used = 0  # slots holding a link or REMOVED

    def find(self, keys: Keys, columns: Keys) -> np.ndarray:
        """The link index of each key, -1 where no link has it; `columns` are the link
        table's source, target and kind columns."""
        found = np.full(len(keys[0]), -1, dtype=np.int64)
        pending = np.arange(len(found))
        slots = self._home(keys)
        while len(pending):
            held = self._slots[slots]
            linked = np.flatnonzero(held >= 0)
            same = _equal(keys, pending[linked], columns, held[linked])
            found[pending[linked[same]]] = held[linked[same]]
            # go on past links of other keys and removed ones; an empty slot ends the search
            going_on = held != EMPTY
            going_on[linked[same]] = False
            pending, slots = pending[going_on], self._next(slots[going_on])
        return found

    def insert(self, links: np.ndarray, columns: Keys) -> None:
        """Index links whose keys are distinct and not indexed yet."""
        if (self._used + len(links)) * _MAX_LOAD > len(self._slots):
            self._grow(len(links), columns)
        self._place(links, columns)

    def remove(self, links: np.ndarray, columns: Keys) -> None:
        """Forget indexed links (before their keys change in `columns`)."""
        keys = keys_of(links, columns)
        pending = np.arange(len(links))
        slots = self._home(keys)
        while len(pending):
            held = self._slots[slots]
            here = held == links[pending]
            self._slots[slots[here]] = REMOVED
            going_on = ~here & (held != EMPTY)  # an empty slot: the link was not indexed
            pending, slots = pending[going_on], self._next(slots[going_on])

    def _place(self, links: np.ndarray, columns: Keys) -> None:
        keys = keys_of(links, columns)
        self._used += len(links)
        pending = np.arange(len(links))
        slots = self._home(keys)
        while len(pending):
            free = self._slots[slots] == EMPTY
            # several links may want one free slot: one of them gets it, the rest probe on
            self._slots[slots[free]] = links[pending[free]]
            placed = np.zeros(len(pending), dtype=bool)
            placed[free] = self._slots[slots[free]] == links[pending[free]]
            pending, slots = pending[~placed], self._next(slots[~placed])

    def _grow(self, adding: int, columns: Keys) -> None:
        """A table for the links held and `adding` more, at most a quarter full (REMOVED
        slots are dropped)."""
        held = self._slots[self._slots >= 0]
        size = len(self._slots)
        while (len(held) + adding) * _MAX_LOAD > size:
            size *= 2
        self._slots = np.full(size, EMPTY, dtype=np.int32)
        self._used = 0
        self._place(held, columns)

    def _home(self, keys: Keys) -> np.ndarray:
        """Each key's first slot: the top bits of a 64-bit mix of its three parts."""
        source, target, kind = (part.astype(np.uint64) for part in keys)
        mixed = (source << np.uint64(32) | target) ^ kind * _KIND_MIX
        mixed ^= mixed >> np.uint64(31)
        mixed *= _MIX
        mixed ^= mixed >> np.uint64(29)
        bits = len(self._slots).bit_length() - 1
        return (mixed >> np.uint64(64 - bits)).astype(np.int64)

    def _next(self, slots: np.ndarray) -> np.ndarray:
        return (slots + 1) & (len(self._slots) - 1)


def keys_of(links: np.ndarray, columns: Keys) -> Keys:
    """The keys of these links, read from the link table's columns."""
    source, target, kind = (column[links] for column in columns)
    return source, target, kind


def _equal(keys: Keys, positions: np.ndarray, columns: Keys, links: np.ndarray) -> np.ndarray:
    """Whether the key at each position is the key of the link beside it."""
    same = keys[0][positions] == columns[0][links]
    for part, column in zip(keys[1:], columns[1:], strict=True):
        same &= part[positions] == column[links]
    return same


def first_occurrences(keys: Keys) -> tuple[np.ndarray, np.ndarray]:
    """Where each distinct key first occurs (positions, ascending), and each position's key
    as a number into them."""
    packed = _packed(keys)
    if packed is not None:  # one stable sort of one int per key
        _, firsts, of_position = np.unique(packed, return_index=True, return_inverse=True)
    else:  # a sort on the three parts (node or kind numbers too large to pack)
        order = np.lexsort((np.arange(len(keys[0])), keys[2], keys[1], keys[0]))
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
    source, target, kind = (part.astype(np.int64) for part in keys)
    return (source << (widths[1] + widths[2])) | (target << widths[2]) | kind
