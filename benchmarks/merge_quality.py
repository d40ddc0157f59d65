"""How often the merge is right: precision and recall on the labelled pairs of
tests/fixtures/merge_quality/ (see its README), without and with --normalize.

Input: two tool results, as a KG tool would return them. The left id of every pair is a node of
the first result (with its label and the category its prefix gives, as KGX infers it), the right
id a node of the second; the left node carries what the pair's source declares: `equivalent_ids`
(an equivalence a source publishes), `xref` (a cross-reference), `same_as` (a source that
conflated two entities of the same name) or nothing (the same id written two ways).

A pair is predicted "same" when both ids end in one merged node. Precision is the share of
predicted pairs that are the same entity, recall the share of same-entity pairs predicted.
`--normalize` runs the same merge after the Translator Node Normalizer client has added the
equivalent ids it answers; the answers are the recorded responses of
tests/fixtures/merge_quality/node_normalizer.json, served to the real client.

For comparison, the same run with the rules before issue 14 (xref merges, no category check):
the accumulator's `xref_equivalence=True` and no Biolink categories on the nodes.

Then the recall set of issue 32 (tests/fixtures/merge_quality/recall/), by
benchmarks/merge_recall.py: every merge path, without and with --normalize.

Run: .venv/bin/python benchmarks/merge_quality.py
"""

from __future__ import annotations

import asyncio
import csv
import importlib.util
import time
from collections import Counter
from pathlib import Path
from typing import Any

from graphwright.core.ids import normalize_curie
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_files import merge_files
from graphwright.sources.node_normalizer import NodeNormalizer, normalize_graphs

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures" / "merge_quality"
# the recall set of issue 32, a script beside this one
_spec = importlib.util.spec_from_file_location(
    "merge_recall", Path(__file__).with_name("merge_recall.py")
)
assert _spec is not None and _spec.loader is not None
merge_recall = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(merge_recall)


def load_pairs() -> list[dict[str, str]]:
    with (FIXTURES / "pairs.tsv").open() as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def tool_results(pairs: list[dict[str, str]], *, categories: bool) -> list[tuple[str, Any]]:
    left: dict[str, dict[str, Any]] = {}
    right: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        node = left.setdefault(pair["left"], _node(pair, "left", categories=categories))
        right.setdefault(pair["right"], _node(pair, "right", categories=categories))
        if pair["input"]:
            node.setdefault(pair["input"], []).append(pair["right"])
    return [
        ("source-a", {"nodes": list(left.values()), "links": []}),
        ("source-b", {"nodes": list(right.values()), "links": []}),
    ]


def _node(pair: dict[str, str], side: str, *, categories: bool) -> dict[str, Any]:
    node: dict[str, Any] = {"id": pair[side], "name": pair[f"{side}_label"]}
    if categories and pair[f"{side}_category"]:
        node["category"] = pair[f"{side}_category"]
    return node


def recorded_normalizer() -> NodeNormalizer:
    return merge_recall.recorded_normalizer(FIXTURES / "node_normalizer.json")


def merge(
    pairs: list[dict[str, str]], *, normalize: bool, rules: str
) -> tuple[dict[str, str], GraphAccumulator, float, int]:
    """Merged node id of every input id, the accumulator, seconds, Node Normalizer requests."""
    old = rules == "before"
    graphs = tool_results(pairs, categories=not old)
    start = time.perf_counter()
    requests = 0
    if normalize:
        client = recorded_normalizer()
        graphs, _ = asyncio.run(normalize_graphs(graphs, client))
        requests = client.requests
    accumulator = GraphAccumulator(xref_equivalence=old)
    merge_files(accumulator, graphs)
    merged = accumulator.to_graph()
    elapsed = time.perf_counter() - start
    node_of: dict[str, str] = {}
    for node in merged["nodes"]:
        for member in (node["id"], *node.get("equivalent_ids", ())):
            node_of[member] = node["id"]
    return node_of, accumulator, elapsed, requests


# The family of a pair outside Biomappings, by the prefix of its left id.
FAMILIES = {
    "genes": {"HGNC", "NCBIGene", "ENSEMBL", "UniProtKB", "MGI"},
    "diseases": {"MONDO", "DOID", "OMIM"},
    "chemicals": {"CHEBI", "DRUGBANK", "PUBCHEM.COMPOUND"},
}


def family(pair: dict[str, str]) -> str:
    if pair["source"].startswith("biomappings"):
        return "biomappings"
    prefix = normalize_curie(pair["left"]).partition(":")[0]
    return next((name for name, prefixes in FAMILIES.items() if prefix in prefixes), "other")


def score(pairs: list[dict[str, str]], node_of: dict[str, str]) -> dict[str, Any]:
    outcome: Counter[str] = Counter()
    by_kind: Counter[tuple[str, bool]] = Counter()
    by_family: Counter[tuple[str, str]] = Counter()
    for pair in pairs:
        left = node_of.get(normalize_curie(pair["left"]))
        right = node_of.get(normalize_curie(pair["right"]))
        predicted = left is not None and left == right
        same = pair["same"] == "1"
        verdict = ("t" if predicted == same else "f") + ("p" if predicted else "n")
        outcome[verdict] += 1
        by_kind[(pair["kind"], predicted)] += 1
        by_family[(family(pair), verdict)] += 1
    return {
        **merge_recall.rates(outcome["tp"], outcome["fp"], outcome["fn"]),
        "by_kind": by_kind,
        "by_family": {
            name: merge_recall.rates(
                *(by_family[(name, verdict)] for verdict in ("tp", "fp", "fn"))
            )
            for name in ("biomappings", *FAMILIES)
        },
    }


def main() -> None:
    pairs = load_pairs()
    kinds = Counter(pair["kind"] for pair in pairs)
    same = sum(pair["same"] == "1" for pair in pairs)
    print(f"{len(pairs)} labelled pairs: {same} same entity, {len(pairs) - same} different")
    print("  " + ", ".join(f"{kind} {count}" for kind, count in kinds.items()))
    print(f"\n{'run':<44}{'precision':>10}{'recall':>8}{'TP':>6}{'FP':>5}{'FN':>5}{'s':>7}")
    runs = {}
    for rules in ("issue 14", "before"):
        for normalize in (False, True):
            node_of, accumulator, elapsed, requests = merge(pairs, normalize=normalize, rules=rules)
            result = score(pairs, node_of)
            name = f"{'with' if normalize else 'without'} --normalize, rules {rules}"
            runs[(rules, normalize)] = (result, accumulator, requests)
            print(
                f"{name:<44}{result['precision']:>10.3f}{result['recall']:>8.3f}"
                f"{result['tp']:>6}{result['fp']:>5}{result['fn']:>5}{elapsed:>7.2f}"
            )
    print("\nwhich pairs each run (rules of issue 14) merged, by kind:")
    print(f"  {'kind':<20}{'same?':>6}{'without':>9}{'with --normalize':>18}")
    for kind in kinds:
        label = next(pair["same"] for pair in pairs if pair["kind"] == kind)
        counts = [runs[("issue 14", n)][0]["by_kind"][(kind, True)] for n in (False, True)]
        print(f"  {kind:<20}{label:>6}{counts[0]:>6}/{kinds[kind]:<3}{counts[1]:>11}/{kinds[kind]}")
    print("\nprecision / recall by family (rules of issue 14):")
    print(f"  {'family':<14}{'without':>16}{'with --normalize':>20}")
    for name in ("biomappings", *FAMILIES):
        cells = [runs[("issue 14", n)][0]["by_family"][name] for n in (False, True)]
        shown = [f"{cell['precision']:.3f} / {cell['recall']:.3f}" for cell in cells]
        print(f"  {name:<14}{shown[0]:>16}{shown[1]:>20}")
    for normalize in (False, True):
        _, accumulator, requests = runs[("issue 14", normalize)]
        refused = accumulator.report.refused
        print(
            f"\n{'with' if normalize else 'without'} --normalize: {len(refused)} merges refused "
            f"for incompatible categories"
            + (f"; Node Normalizer requests: {requests} (batched, cached)" if normalize else "")
        )
        for item in refused[:3]:
            print(f"  {item.first} / {item.second}: {item.reason}")
    print("\ntargets: precision >= 0.99; recall >= 0.95 with the Node Normalizer, >= 0.6 without")
    merge_recall.main()
    print(
        "\ntargets (issue 32): precision >= 0.99, no merge across incompatible categories, "
        "recall >= 0.97 in each group, on every path"
    )


if __name__ == "__main__":
    main()
