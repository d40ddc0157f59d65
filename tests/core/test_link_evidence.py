"""LinkEvidence: links' evidence as (link, PMID) rows, against tuples united one by one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.core.link_evidence import LinkEvidence, Pmids, read_pmids
from graphwright.core.merge_values import union_evidence

LINKS = 6
CANONICAL = ["PMID:1", "PMID:2", "PMID:30", "PMID:123456789012345678"]
canonical_items = st.sampled_from(CANONICAL)
other_items = st.sampled_from(["pmid:1", " PMID: 2", "PMID:0", "doi:10.1/x", {"note": "x"}])
canonical_batches = st.lists(
    st.tuples(st.integers(0, LINKS - 1), st.lists(canonical_items, max_size=3)), max_size=8
)
any_batches = st.lists(
    st.tuples(
        st.integers(0, LINKS - 1),
        st.one_of(
            st.lists(st.one_of(canonical_items, other_items), max_size=3),
            canonical_items,
            other_items,
        ),
    ),
    max_size=8,
)
folds = st.lists(st.integers(0, LINKS - 1), min_size=2, max_size=5, unique=True)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("canonical"), canonical_batches),
        st.tuples(st.just("any"), any_batches),
        st.tuples(st.just("fold"), folds),
    ),
    max_size=12,
)


def canonical(evidence: Any) -> bool:
    return type(evidence) is list and all(item in CANONICAL for item in evidence)


def as_items(evidence: Any) -> Any:
    return evidence if type(evidence) is list else (evidence,)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_rows_give_what_uniting_tuples_one_by_one_gives(steps: list[tuple[str, Any]]) -> None:
    stored, model = LinkEvidence(), {link: () for link in range(LINKS)}
    gone: set[int] = set()  # links folded into others
    for kind, step in steps:
        if kind == "fold":  # the first link still there absorbs the others still there
            kept, *others = [link for link in step if link not in gone] or [0]
            stored.fold([kept] * len(others), others)
            for other in others:
                model[kept] = union_evidence(model[kept], model.pop(other))
                gone.add(other)
            continue
        batch = [(link, evidence) for link, evidence in step if link not in gone]
        links = np.array([link for link, _ in batch], dtype=np.int64)
        evidence = [evidence for _, evidence in batch]
        pmids = read_pmids(evidence)
        assert (pmids is not None) == (kind == "canonical" or all(map(canonical, evidence)))
        stored.merge(links, evidence, pmids)
        for link, items in batch:
            if items:
                model[link] = union_evidence(model[link], as_items(items))
    grouped = stored.grouped(LINKS)
    assert {link: grouped.of(link) for link in model} == model
    lists = grouped.lists(0, LINKS)
    assert {link: lists[link] for link in model if link not in grouped.loose} == {
        link: list(items) for link, items in model.items() if link not in grouped.loose
    }


def test_a_link_given_another_item_keeps_its_evidence_as_a_tuple_from_then_on() -> None:
    stored = LinkEvidence()
    ones = np.array([1, 1])
    stored.merge(np.array([0, 1]), [["PMID:2"], ["PMID:3"]], Pmids(ones, np.array([2, 3])))
    stored.merge(np.array([0]), [["doi:10.1/x", "pmid: 2"]], None)
    stored.merge(np.array([0, 1]), [["PMID:5"], ["PMID:5"]], Pmids(ones, np.array([5, 5])))
    assert stored.loose == {0: ("PMID:2", "doi:10.1/x", "PMID:5")}
    grouped = stored.grouped(2)
    assert grouped.lists(0, 2) == [[], ["PMID:3", "PMID:5"]]


@pytest.mark.parametrize(
    ("evidence", "numbers"),
    [
        ([["PMID:1", "PMID:22"], [], ["PMID:123456789012345678"]], [1, 22, 123456789012345678]),
        ([], []),
        ([[], []], []),
        ([["PMID:0"]], None),  # a leading zero
        ([["PMID:1234567890123456789"]], None),  # 19 digits
        ([["PMID:1", ""]], None),
        ([["PMID:"]], None),
        ([["PMID:1\nPMID:2"]], None),
        ([["PMID:1x"]], None),
        ([["pmid:1"]], None),
        ([["PMID:\u0661"]], None),  # an Arabic-Indic digit: not ASCII
        ([["PMID:1"], "PMID:2"], None),  # not a list
        ([["PMID:1", 2]], None),
        ([("PMID:1",)], None),
    ],
)
def test_pmids_are_read_only_from_lists_of_canonical_pmids(
    evidence: list[Any], numbers: list[int] | None
) -> None:
    read = read_pmids(evidence)
    if numbers is None:
        assert read is None
    else:
        assert read is not None
        assert read.numbers.tolist() == numbers
        assert read.counts.tolist() == [len(items) for items in evidence]
