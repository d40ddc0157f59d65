"""The recall set of issue 32 (tests/fixtures/merge_quality/recall/): every merge path meets the
issue's targets, and the paths agree pair for pair (figures printed by
benchmarks/merge_recall.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from graphwright.core.biolink import compatible

ROOT = Path(__file__).parent.parent.parent
spec = importlib.util.spec_from_file_location("merge_recall", ROOT / "benchmarks/merge_recall.py")
assert spec is not None and spec.loader is not None
merge_recall = importlib.util.module_from_spec(spec)
spec.loader.exec_module(merge_recall)

SPELLINGS, STATED = "spellings of one identifier", "stated equivalences"


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return merge_recall.run()


def test_the_set_spans_both_groups_and_every_way_of_stating_an_equivalence() -> None:
    pairs = merge_recall.load_pairs()
    assert sum(p["kind"] == "spelling" for p in pairs) >= 2000
    assert sum(p["kind"] == "other-namespace" for p in pairs) >= 500
    stated = {p["input"] for p in pairs if p["kind"] == "stated"}
    assert stated == {"equivalent_identifiers", "same_as", "equivalent_ids", "nodenorm",
                      "trapi_same_as", "owl:sameAs", "skos:exactMatch"}  # fmt: skip


@pytest.mark.parametrize("path", merge_recall.PATHS)
def test_precision_and_recall_meet_the_targets(results: dict[str, Any], path: str) -> None:
    pairs, predicted, _ = results[path]
    scores = merge_recall.score(pairs, predicted)
    for group in (SPELLINGS, STATED):
        assert scores[group]["precision"] >= 0.99, group
        assert scores[group]["recall"] >= 0.97, group


@pytest.mark.parametrize("path", merge_recall.PATHS)
def test_no_merge_across_incompatible_categories(results: dict[str, Any], path: str) -> None:
    pairs, predicted, report = results[path]
    across = [
        (pair["left"], pair["right"])
        for pair, merged in zip(pairs, predicted, strict=True)
        if merged
        and pair["left_category"]
        and pair["right_category"]
        and not compatible([pair["left_category"]], [pair["right_category"]])[0]
    ]
    assert across == []
    assert report.refused  # the near-misses were refused, and listed


def test_the_batch_merge_agrees_with_the_accumulator_pair_for_pair(
    results: dict[str, Any],
) -> None:
    pairs, predicted, _ = results["accumulator"]
    by_pair = {tuple(p.values()): merged for p, merged in zip(pairs, predicted, strict=True)}
    for path in ("kgx-jsonl", "kgx-tsv"):
        scored, found, _ = results[path]
        assert [by_pair[tuple(p.values())] for p in scored] == found, path
