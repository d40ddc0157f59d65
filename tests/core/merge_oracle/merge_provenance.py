"""Provenance of merged nodes and links: which tool results contributed to each.

`GraphAccumulator` keeps, per add, the indexes it touched; these helpers turn those into result
ids (bit masks decoded once per distinct mask), and keep the ids a merged graph carried when
it is added again.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from tests.core.merge_oracle.link_table import Carried
from tests.core.merge_oracle.merge_values import PROVENANCE, Record


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


def fold_roots(size: int, folded: dict[int, int]) -> np.ndarray:
    """index -> the live index it was folded into (itself if not folded)."""
    roots = np.arange(size, dtype=np.intp)
    for index in folded:
        root = index
        while (kept := folded.get(root)) is not None:
            root = kept
        roots[index] = root
    return roots


def with_carried(mask: int, entries: list[Carried], result_id_of: list[str]) -> tuple[str, ...]:
    """Result ids in add order, each add's carried ids before or after its own result id."""
    ids: dict[str, None] = {}
    for number in bits(mask):
        added = [entry for entry in entries if entry[0] == number]
        for _, carried, before in added:
            if before:
                ids.update(dict.fromkeys(carried))
        ids[result_id_of[number]] = None
        for _, carried, before in added:
            if not before:
                ids.update(dict.fromkeys(carried))
    return tuple(ids)


def bits(mask: int) -> Iterator[int]:
    while mask:
        lowest = mask & -mask
        yield lowest.bit_length() - 1
        mask ^= lowest


class ResultIds(dict[int, tuple[str, ...]]):
    """`ids[mask]`: the result ids of the adds whose bits are set, in add order, each once;
    each distinct mask is decoded once."""

    def __init__(self, result_id_of: list[str]) -> None:
        super().__init__()
        self._result_id_of = result_id_of

    def __missing__(self, mask: int) -> tuple[str, ...]:
        ids = self[mask] = tuple(dict.fromkeys(self._result_id_of[n] for n in bits(mask)))
        return ids
