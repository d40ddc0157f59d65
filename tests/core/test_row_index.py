"""RowIndex: row keys to row indexes in numpy, against a dict doing the same."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.core.row_index import RowIndex, first_occurrences

# small node and kind ranges, so that batches repeat keys and probes meet other keys
link_keys = st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 3))
# evidence items: (link, PMID), PMIDs up to 18 digits
pmids = st.sampled_from([1, 2, 3, 35_000_000, 2**40, 10**17 + 7])
evidence_keys = st.tuples(st.integers(0, 40), pmids)
batches_of = {
    "links": st.lists(st.lists(link_keys, max_size=60), min_size=1, max_size=12),
    "evidence": st.lists(st.lists(evidence_keys, max_size=60), min_size=1, max_size=12),
}

Key = tuple[int, ...]


class Columns:
    """A table's key columns: the keys of rows 0, 1, 2, ..."""

    def __init__(self, width: int) -> None:
        self.parts: list[list[int]] = [[] for _ in range(width)]

    def append(self, keys: list[Key]) -> None:
        for key in keys:
            for part, value in zip(self.parts, key, strict=True):
                part.append(value)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(np.array(part, dtype=np.int64) for part in self.parts)


def as_keys(keys: list[Key], width: int = 3) -> tuple[np.ndarray, ...]:
    parts = zip(*keys, strict=True) if keys else ((),) * width
    return tuple(np.array(part, dtype=np.int64) for part in parts)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(batches_of)).flatmap(batches_of.__getitem__), st.data())
def test_the_index_finds_what_a_dict_finds_as_rows_come_and_go(
    batches: list[list[Key]], data: st.DataObject
) -> None:
    width = len(next((key for batch in batches for key in batch), (0, 0)))
    index, columns, model = RowIndex(), Columns(width), {}
    for batch in batches:
        found = index.find(as_keys(batch, width), columns.arrays())
        assert found.tolist() == [model.get(key, -1) for key in batch]
        new = list(dict.fromkeys(key for key in batch if key not in model))
        start = len(columns.parts[0])
        columns.append(new)
        model.update(zip(new, range(start, start + len(new)), strict=True))
        index.insert(np.arange(start, start + len(new)), columns.arrays())
        if model and data.draw(st.booleans()):
            gone = data.draw(st.lists(st.sampled_from(sorted(model)), unique=True))
            index.remove(
                np.array([model.pop(key) for key in gone], dtype=np.int64), columns.arrays()
            )
    everything = sorted(set(model) | {key for batch in batches for key in batch})
    found = index.find(as_keys(everything, width), columns.arrays())
    assert found.tolist() == [model.get(key, -1) for key in everything]


def test_the_index_grows_and_stays_a_quarter_full_at_most() -> None:
    index, columns = RowIndex(), Columns(3)
    keys = [(node, node * 7 % 1000, node % 5) for node in range(20_000)]
    for start in range(0, len(keys), 3_000):
        columns.append(keys[start : start + 3_000])
        index.insert(np.arange(start, min(start + 3_000, len(keys))), columns.arrays())
    assert index.find(as_keys(keys), columns.arrays()).tolist() == list(range(len(keys)))
    assert len(index._slots) >= 4 * len(keys)


@given(st.lists(link_keys, max_size=80), st.sampled_from([0, 2**30]))
def test_first_occurrences_number_keys_by_where_they_first_occur(
    keys: list[Key], offset: int
) -> None:
    """With the offset, the three parts no longer fit in one int64 together."""
    firsts, number = first_occurrences(tuple(part + offset for part in as_keys(keys)))
    distinct = list(dict.fromkeys(keys))
    assert firsts.tolist() == [keys.index(key) for key in distinct]
    assert number.tolist() == [distinct.index(key) for key in keys]
