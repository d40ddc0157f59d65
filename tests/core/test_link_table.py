"""LinkTable: links as columns, keyed by node indexes and label kind."""

from __future__ import annotations

import numpy as np

from graphwright.core.column import Column
from graphwright.core.link_evidence import read_pmids
from graphwright.core.link_table import LinkTable


def records(table: LinkTable, names: list[str]) -> list[tuple[str, str, str, list]]:
    no_results = np.zeros(len(table), dtype=np.intp)  # every link: entry 0, no result ids
    return [
        (link["source"], link["label"], link["target"], link["evidence"])
        for link in table.records([()], no_results, names)
    ]


def merge(table: LinkTable, indexes: np.ndarray, evidence: list, *, canonical: bool) -> None:
    """`canonical`: every item is a canonical PMID, read as numbers too (as `read_links` does)."""
    pmids = read_pmids(evidence)
    assert (pmids is not None) == canonical
    table.merge_evidence(indexes, evidence, pmids)


def test_upsert_appends_new_links_in_first_seen_order_once_each() -> None:
    table = LinkTable()
    indexes, start = table.upsert([0, 1, 0, 0], [1, 2, 1, 2], ["x", "x", "x", "y"])
    assert (indexes.tolist(), start) == ([0, 1, 0, 2], 0)
    indexes, start = table.upsert([0, 2], [2, 0], ["y", "x"])
    assert (indexes.tolist(), start) == ([2, 3], 3)
    assert records(table, ["A", "B", "C"]) == [
        ("A", "x", "B", []),
        ("B", "x", "C", []),
        ("A", "y", "C", []),
        ("C", "x", "A", []),
    ]


def test_evidence_is_unioned_in_first_seen_order_also_within_one_result() -> None:
    table = LinkTable()
    indexes, _ = table.upsert([0, 0], [1, 1], ["x", "x"])
    merge(table, indexes, [["PMID:1"], ["PMID:2", "PMID:1"]], canonical=True)
    indexes, _ = table.upsert([0], [1], ["x"])
    merge(table, indexes, [["pmid: 3", "PMID:2"]], canonical=False)
    assert records(table, ["A", "B"]) == [("A", "x", "B", ["PMID:1", "PMID:2", "PMID:3"])]


def test_a_new_link_takes_its_evidence_at_its_first_place_with_evidence() -> None:
    table = LinkTable()
    indexes, _ = table.upsert([0, 0, 1, 0], [1, 1, 0, 1], ["x", "x", "x", "x"])
    evidence = [[], ["PMID:2", "PMID:2", "PMID:1"], ["PMID:3", "PMID:3"], ["PMID:1", "PMID:4"]]
    merge(table, indexes, evidence, canonical=True)
    assert records(table, ["A", "B"]) == [
        ("A", "x", "B", ["PMID:2", "PMID:1", "PMID:4"]),
        ("B", "x", "A", ["PMID:3"]),
    ]


def test_repointing_a_node_folds_links_that_become_one() -> None:
    table = LinkTable()
    indexes, _ = table.upsert([0, 2, 2], [1, 1, 0], ["x", "x", "y"])
    merge(table, indexes, [["PMID:1"], ["PMID:2"], []], canonical=True)
    table.repoint(2, 0)  # node 2 is now node 0
    assert table.live_count == 2
    assert table.folded == {1: 0}
    assert records(table, ["A", "B", "C"]) == [
        ("A", "x", "B", ["PMID:1", "PMID:2"]),
        ("A", "y", "A", []),
    ]
    assert table.upsert([0], [1], ["x"])[0].tolist() == [0]  # the kept link answers to the new key


def test_repointing_folds_touching_links_that_meet_into_the_first_of_them() -> None:
    table = LinkTable()
    indexes, _ = table.upsert([2, 3, 2, 3], [3, 2, 1, 1], ["x", "x", "x", "x"])
    merge(table, indexes, [["PMID:1"], ["PMID:2"], ["PMID:3"], ["PMID:4"]], canonical=True)
    table.repoint(3, 2)  # 2->3 and 3->2 both become 2->2; 3->1 becomes 2->1, stored already
    assert table.folded == {1: 0, 3: 2}
    assert records(table, ["A", "B", "C", "D"]) == [
        ("C", "x", "C", ["PMID:1", "PMID:2"]),
        ("C", "x", "B", ["PMID:3", "PMID:4"]),
    ]
    assert table.upsert([2, 2], [2, 1], ["x", "x"])[0].tolist() == [0, 2]


def test_a_link_repointed_twice_folds_once_into_the_link_it_meets() -> None:
    table = LinkTable()
    indexes, _ = table.upsert([0, 2], [1, 2], ["x", "x"])
    merge(table, indexes, [["PMID:1"], ["PMID:2"]], canonical=True)
    table.repoint(1, 0)  # 0->1 becomes 0->0, listed twice among node 0's links
    table.repoint(0, 2)  # 0->0 becomes 2->2, which is stored
    assert table.folded == {0: 1}
    assert records(table, ["A", "B", "C"]) == [("C", "x", "C", ["PMID:2", "PMID:1"])]
    assert table.upsert([2, 0], [2, 0], ["x", "x"])[0].tolist() == [1, 2]


def test_a_column_keeps_its_values_as_it_grows() -> None:
    column = Column(np.int64)
    for start in range(0, 1000, 7):
        column.extend(np.arange(start, start + 7))
    assert column.array.tolist() == list(range(1001))[: len(column)]
    assert len(column) == 1001
