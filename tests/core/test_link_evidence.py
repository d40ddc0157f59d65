"""LinkEvidence: links' evidence as (link, PMID) rows, against tuples united one by one."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.core.link_evidence import LinkEvidence
from graphwright.core.merge_values import union_evidence

LINKS = 6
canonical_items = st.sampled_from(["PMID:1", "PMID:2", "PMID:30", "PMID:123456789012345678"])
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
        pmids = None
        if kind == "canonical":
            pmids = np.array([int(item[5:]) for items in evidence for item in items], np.int64)
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
    stored.merge(np.array([0, 1]), [["PMID:2"], ["PMID:3"]], np.array([2, 3]))
    stored.merge(np.array([0]), [["doi:10.1/x", "pmid: 2"]], None)
    stored.merge(np.array([0, 1]), [["PMID:5"], ["PMID:5"]], np.array([5, 5]))
    assert stored.loose == {0: ("PMID:2", "doi:10.1/x", "PMID:5")}
    grouped = stored.grouped(2)
    assert grouped.lists(0, 2) == [[], ["PMID:3", "PMID:5"]]
