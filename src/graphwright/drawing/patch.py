"""What changed between two ECharts options of the same graph, as a patch the browser applies
to the option it holds, so that a live change sends and redraws only what changed.

A patch lists, per series, splices of its `data` and `links` arrays. It exists only when nothing
else in the option changed (the same series, legend and categories); otherwise the view draws
the whole option again. A splice is `[start, removed, items]` against the old array; a series'
splices do not overlap and are listed by increasing start, so the browser applies them last
first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ARRAYS = ("data", "links")
SPARSE_UP_TO = 64  # changed items replaced one by one; past this, one splice of the range

Splice = tuple[int, int, list[Any]]
SeriesPatch = dict[str, Any]  # {"index": i, "data": [splices], "links": [splices]}


def option_patch(old: dict[str, Any], new: dict[str, Any]) -> list[SeriesPatch] | None:
    """The splices that turn `old` into `new`, or None when more than series data changed."""
    old_series, new_series = old.get("series", []), new.get("series", [])
    if len(old_series) != len(new_series) or _frame(old) != _frame(new):
        return None
    patch: list[SeriesPatch] = []
    for index, (before, after) in enumerate(zip(old_series, new_series, strict=True)):
        if _frame(before, ARRAYS) != _frame(after, ARRAYS):
            return None
        changes: SeriesPatch = {}
        for key in ARRAYS:
            splices = array_patch(before.get(key) or [], after.get(key) or [])
            if splices:
                changes[key] = splices
        if changes:
            patch.append({"index": index, **changes})
    return patch


def array_patch(old: Sequence[Any], new: Sequence[Any]) -> list[Splice]:
    """Splices from `old` to `new`: around the common head and tail, changed items one by one
    (an edge changes two nodes' sizes) and the rest as one splice (what was added or removed)."""
    if old == new:  # most arrays of a live change (compared in C, far faster than below)
        return []
    size_old, size_new = len(old), len(new)
    shortest = min(size_old, size_new)
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[size_old - 1 - tail] == new[size_new - 1 - tail]:
        tail += 1
    middle_old = old[head : size_old - tail]
    middle_new = new[head : size_new - tail]
    common = min(len(middle_old), len(middle_new))
    changed = [i for i in range(common) if middle_old[i] != middle_new[i]]
    if len(changed) > SPARSE_UP_TO:
        return [(head, len(middle_old), list(middle_new))]
    splices: list[Splice] = [(head + i, 1, [middle_new[i]]) for i in changed]
    if len(middle_old) != len(middle_new):
        splices.append((head + common, len(middle_old) - common, list(middle_new[common:])))
    return splices


def _frame(option: dict[str, Any], skip: Sequence[str] = ("series",)) -> dict[str, Any]:
    return {key: value for key, value in option.items() if key not in skip}
