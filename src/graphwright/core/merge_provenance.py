"""Provenance of merged nodes and links: which tool results contributed to each.

`GraphAccumulator` keeps, per add, the indexes it touched; these helpers turn those into result
ids (bit masks decoded once per distinct mask, with numpy), and keep the ids a merged graph
carried when it is added again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np

from graphwright.core.link_table import Carried
from graphwright.core.merge_values import PROVENANCE, Record


def carry(
    table: dict[int, list[Carried]], index: int, item: Record, number: int, *, before: bool
) -> None:
    """Note the result ids an input node or link carried (a merged graph added again)."""
    carried = item.get(PROVENANCE)
    if carried:
        items = carried if isinstance(carried, list | tuple) else [carried]
        ids = tuple(dict.fromkeys(item for item in items if isinstance(item, str)))
        if ids:
            table.setdefault(index, []).append((number, ids, before))


@dataclass(slots=True)
class Provenance:
    """The result ids of each item (node or link) by index: entry `of_item[index]`.

    An entry is the flags of the adds that touched its items (bytes, one per add), or the ids
    themselves (tuple: items that carried ids of their own). Entries are decoded only as
    asked: tuples for records here, JSON lists for serialising in merge_json.py."""

    entries: list[bytes | tuple[str, ...]]
    of_item: np.ndarray
    result_ids: list[str]  # by add number
    unique: bool  # no result id was given to two adds

    def of(self, index: int) -> tuple[str, ...]:
        return self._ids(self.entries[self.of_item[index]])

    def tuples(self) -> list[tuple[str, ...]]:
        """Each item's result ids, by index."""
        return list(map(self.decoded().__getitem__, self.of_item.tolist()))

    def decoded(self) -> list[tuple[str, ...]]:
        """Each entry's result ids."""
        return list(map(self._ids, self.entries))

    def _ids(self, entry: bytes | tuple[str, ...]) -> tuple[str, ...]:
        if type(entry) is tuple:
            return entry
        ids = compress(self.result_ids, entry)
        return tuple(ids if self.unique else dict.fromkeys(ids))


def provenance(
    touched: Sequence[np.ndarray],
    size: int,
    folded: dict[int, int],
    carried: dict[int, list[Carried]],
    result_id_of: list[str],
) -> Provenance:
    """The result ids of `size` items, in add order, each once, from the item indexes each add
    touched (`touched`, by add number); an item folded into another counts for that one.

    One row of bits per item (bit n: add n touched it) is built with numpy; the distinct rows,
    told apart by hashing them (Arrow), are kept as flags and decoded when asked."""
    adds = len(result_id_of)
    roots = _fold_roots(size, folded)
    masks = np.zeros((size, max(1, -(-adds // 64))), dtype=np.uint64)
    for number, indexes in enumerate(touched):
        word, bit = divmod(number, 64)
        masks[roots[indexes], word] |= np.uint64(1 << bit)
    # pyarrow loads with the first output: the CLI and the app start without it
    from graphwright.core.arrow_columns import distinct_rows

    distinct_masks, of_item = distinct_rows(masks)
    # one byte per bit (little-endian words: bit n of a mask is byte n of its row)
    flags = np.unpackbits(
        np.ascontiguousarray(distinct_masks, dtype="<u8").view(np.uint8), axis=1, bitorder="little"
    )[:, :adds].tobytes()
    step = max(adds, 1)
    entries: list[bytes | tuple[str, ...]] = [
        flags[start : start + adds] for start in range(0, len(flags), step)
    ]
    for index, carried_here in carried.items():
        numbers = compress(range(adds), entries[of_item[index]])
        of_item[index] = len(entries)
        entries.append(_with_carried(numbers, carried_here, result_id_of))
    return Provenance(entries, of_item, result_id_of, len(set(result_id_of)) == adds)


def _fold_roots(size: int, folded: dict[int, int]) -> np.ndarray:
    """index -> the live index it was folded into (itself if not folded)."""
    roots = np.arange(size, dtype=np.intp)
    for index in folded:
        root = index
        while (kept := folded.get(root)) is not None:
            root = kept
        roots[index] = root
    return roots


def _with_carried(
    numbers: Iterable[int], entries: list[Carried], result_id_of: list[str]
) -> tuple[str, ...]:
    """The result ids of the adds `numbers` (in add order), each add's carried ids before or
    after its own result id."""
    ids: dict[str, None] = {}
    for number in numbers:
        added = [entry for entry in entries if entry[0] == number]
        for _, carried, before in added:
            if before:
                ids.update(dict.fromkeys(carried))
        ids[result_id_of[number]] = None
        for _, carried, before in added:
            if not before:
                ids.update(dict.fromkeys(carried))
    return tuple(ids)
