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
import pyarrow.compute as pc

from graphwright.core.arrow_columns import POOL, fixed_rows, numpy_of
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
    """The result ids of each item (node or link) by index: `distinct[of_item[index]]`."""

    distinct: list[tuple[str, ...]]
    of_item: np.ndarray

    def tuples(self) -> list[tuple[str, ...]]:
        return list(map(self.distinct.__getitem__, self.of_item.tolist()))


def provenance(
    touched: Sequence[np.ndarray],
    size: int,
    folded: dict[int, int],
    carried: dict[int, list[Carried]],
    result_id_of: list[str],
) -> Provenance:
    """The result ids of `size` items, in add order, each once, from the item indexes each add
    touched (`touched`, by add number); an item folded into another counts for that one.

    One row of bits per item (bit n: add n touched it) is built with numpy; each distinct row
    is decoded once. Rows are told apart by hashing them (Arrow), not by sorting them."""
    adds = len(result_id_of)
    roots = _fold_roots(size, folded)
    masks = np.zeros((size, max(1, -(-adds // 64))), dtype=np.uint64)
    for number, indexes in enumerate(touched):
        word, bit = divmod(number, 64)
        masks[roots[indexes], word] |= np.uint64(1 << bit)
    distinct_masks, of_item = _distinct_rows(masks)
    # one byte per bit (little-endian words: bit n of a mask is byte n of its row)
    flags = np.unpackbits(
        np.ascontiguousarray(distinct_masks, dtype="<u8").view(np.uint8), axis=1, bitorder="little"
    )[:, :adds].tobytes()
    rows = [flags[start : start + adds] for start in range(0, len(flags), max(adds, 1))]
    if len(set(result_id_of)) == adds:
        distinct = [tuple(compress(result_id_of, row)) for row in rows]
    else:  # a result id given to more than one add appears once
        distinct = [tuple(dict.fromkeys(compress(result_id_of, row))) for row in rows]
    for index, entries in carried.items():
        numbers = compress(range(adds), rows[of_item[index]])
        of_item[index] = len(distinct)
        distinct.append(_with_carried(numbers, entries, result_id_of))
    return Provenance(distinct, of_item)


def _distinct_rows(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of `masks`, and the number of each row's value among them."""
    encoded = pc.dictionary_encode(fixed_rows(masks), memory_pool=POOL)
    dictionary, words = encoded.dictionary, masks.shape[1]
    rows = np.frombuffer(dictionary.buffers()[1], dtype=np.uint64).reshape(-1, words)
    distinct = rows[dictionary.offset : dictionary.offset + len(dictionary)]
    return distinct, numpy_of(encoded.indices, np.int32).astype(np.intp)


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
