"""The recall set of issue 32 (tests/fixtures/merge_quality/recall/, see its README): how each
merge path reads the spellings and stated equivalences of real identifiers.

Every pair's left node is written the way its `input` says a source publishes it: a plain node
(spellings), a KGX node property (`equivalent_identifiers`, `same_as`, `equivalent_ids`, `xref`),
the Node Normalizer's objects (`{"identifier": ...}`), a TRAPI attribute `biolink:same_as`, or a
JSON-LD `owl:sameAs` / `skos:*Match` reference. The right ids are a second tool result. Paths:
- `accumulator`: every document read by `core.formats` and merged by `GraphAccumulator`;
- `accumulator --normalize`: the same, after the Node Normalizer client added the equivalent
  ids of the recorded answers (recall/node_normalizer.json);
- `kgx-jsonl`, `kgx-tsv`: the pairs a KGX file carries (all but TRAPI and JSON-LD) as KGX files,
  merged by the DuckDB batch merge (`core/batch_merge`). TSV cells hold strings, so a Node
  Normalizer object is written as its identifier there.
"""

from __future__ import annotations

import asyncio
import csv
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import orjson

from graphwright.core.batch_merge import BatchInput, BatchMerge
from graphwright.core.formats import read_graph
from graphwright.core.formats.rdf import GRAPHWRIGHT_VOCAB as GRAPHWRIGHT
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_files import merge_files
from graphwright.sources.node_normalizer import NodeNormalizer, normalize_graphs

RECALL = Path(__file__).parent.parent / "tests" / "fixtures" / "merge_quality" / "recall"
BIOLINK = "https://w3id.org/biolink/vocab/"
KGX_FIELDS = ("equivalent_identifiers", "same_as", "equivalent_ids", "xref")
JSONLD = {
    "owl:sameAs": "http://www.w3.org/2002/07/owl#sameAs",
    "skos:exactMatch": "http://www.w3.org/2004/02/skos/core#exactMatch",
    "skos:broadMatch": "http://www.w3.org/2004/02/skos/core#broadMatch",
    "skos:narrowMatch": "http://www.w3.org/2004/02/skos/core#narrowMatch",
    "skos:closeMatch": "http://www.w3.org/2004/02/skos/core#closeMatch",
}
GROUPS = {  # the two groups: kind -> group
    "spelling": "spellings of one identifier",
    "other-namespace": "spellings of one identifier",
    "other-id": "spellings of one identifier",
    "stated": "stated equivalences",
    "related": "stated equivalences",
    "incorrect": "stated equivalences",
    "near-miss": "stated equivalences",
}
PATHS = ("accumulator", "kgx-jsonl", "kgx-tsv")
# Each input node carries its raw id in this property, which merging unions (or records in
# `conflicts`), so a pair is judged by the merged node each raw id ended in, not by our own
# normalisation of the ids.
MARK = "gw_mark"


def load_pairs() -> list[dict[str, str]]:
    with (RECALL / "pairs.tsv").open() as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _node(pair: dict[str, str], side: str) -> dict[str, Any]:
    node: dict[str, Any] = {"id": pair[side], MARK: [pair[side]]}
    if pair[f"{side}_label"]:
        node["name"] = pair[f"{side}_label"]
    if pair[f"{side}_category"]:
        node["category"] = pair[f"{side}_category"]
    return node


def _declare(node: dict[str, Any], pair: dict[str, str], *, tsv: bool = False) -> None:
    how = pair["input"]
    if how in KGX_FIELDS:
        node.setdefault(how, []).append(pair["right"])
    elif how == "nodenorm":
        item = pair["right"] if tsv else {"identifier": pair["right"], "label": pair["right_label"]}
        node.setdefault("equivalent_identifiers", []).append(item)


def _right_graph(pairs: list[dict[str, str]]) -> dict[str, Any]:
    nodes: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        nodes.setdefault(pair["right"], _node(pair, "right"))
    return {"nodes": list(nodes.values()), "links": []}


def _kgx_pairs(pairs: list[dict[str, str]]) -> list[dict[str, str]]:
    return [pair for pair in pairs if pair["input"] in ("", "nodenorm", *KGX_FIELDS)]


def _left_kgx(pairs: list[dict[str, str]], *, tsv: bool = False) -> dict[str, Any]:
    nodes: dict[str, dict[str, Any]] = {}
    for pair in _kgx_pairs(pairs):
        _declare(nodes.setdefault(pair["left"], _node(pair, "left")), pair, tsv=tsv)
    return {"nodes": list(nodes.values()), "links": []}


def _left_trapi(pairs: list[dict[str, str]]) -> bytes:
    nodes: dict[str, Any] = {}
    for pair in pairs:
        if pair["input"] != "trapi_same_as":
            continue
        node = nodes.setdefault(
            pair["left"],
            {
                "name": pair["left_label"],
                "attributes": [{"attribute_type_id": MARK, "value": [pair["left"]]}],
            },
        )
        if pair["left_category"]:
            node["categories"] = [f"biolink:{pair['left_category']}"]
        node["attributes"].append(
            {
                "attribute_type_id": "biolink:same_as",
                "original_attribute_name": "equivalent_identifiers",
                "value": [pair["right"]],
                "value_type_id": "metatype:uriorcurie",
            }
        )
    return orjson.dumps({"message": {"knowledge_graph": {"nodes": nodes, "edges": {}}}})


def _left_jsonld(pairs: list[dict[str, str]]) -> bytes:
    items: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        predicate = JSONLD.get(pair["input"])
        if predicate is None:
            continue
        item = items.setdefault(
            pair["left"], {"@id": pair["left"], GRAPHWRIGHT + MARK: pair["left"]}
        )
        if pair["left_label"]:
            item["http://www.w3.org/2000/01/rdf-schema#label"] = pair["left_label"]
        if pair["left_category"]:
            item["@type"] = BIOLINK + pair["left_category"]
        item.setdefault(predicate, []).append({"@id": pair["right"]})
    return orjson.dumps({"@graph": list(items.values())})


def recorded_normalizer(answers_file: Path) -> NodeNormalizer:
    """The real Node Normalizer client, served the recorded answers of `answers_file`."""
    answers = orjson.loads(answers_file.read_bytes())

    def reply(request: httpx.Request) -> httpx.Response:
        asked = orjson.loads(request.content)["curies"]
        return httpx.Response(200, json={curie: answers.get(curie) for curie in asked})

    return NodeNormalizer("https://nodenorm.recorded/1.5", transport=httpx.MockTransport(reply))


def merge_accumulator(
    pairs: list[dict[str, str]], *, normalize: bool = False
) -> tuple[dict[str, str], Any]:
    graphs = [
        ("source-a", _left_kgx(pairs)),
        ("source-a-trapi", read_graph(_left_trapi(pairs), "trapi")),
        ("source-a-jsonld", read_graph(_left_jsonld(pairs), "jsonld")),
        ("source-b", _right_graph(pairs)),
    ]
    if normalize:
        client = recorded_normalizer(RECALL / "node_normalizer.json")
        graphs, _ = asyncio.run(normalize_graphs(graphs, client))
    accumulator = GraphAccumulator()
    merge_files(accumulator, graphs)
    return _node_of(accumulator.to_graph()["nodes"]), accumulator.report


def merge_batch(pairs: list[dict[str, str]], fmt: str) -> tuple[dict[str, str], Any]:
    kgx = _kgx_pairs(pairs)
    with tempfile.TemporaryDirectory() as folder:
        inputs = []
        for name, graph in (
            ("source-a", _left_kgx(kgx, tsv=fmt == "kgx-tsv")),
            ("source-b", _right_graph(kgx)),
        ):
            path = Path(folder) / f"{name}.{'tsv' if fmt == 'kgx-tsv' else 'jsonl'}"
            if fmt == "kgx-tsv":
                path.write_text(_tsv(graph["nodes"]))
                inputs.append(BatchInput(name, fmt, nodes=path))
            else:
                path.write_bytes(b"".join(orjson.dumps(n) + b"\n" for n in graph["nodes"]))
                inputs.append(BatchInput(name, fmt, stream=path))
        with BatchMerge(inputs) as merge:
            merge.run()
            return _node_of(merge.to_graph()["nodes"]), merge.report


def _tsv(nodes: list[dict[str, Any]]) -> str:
    columns = ["id", "category", "name", MARK, "equivalent_identifiers", *KGX_FIELDS[1:]]
    lines = ["\t".join(columns)]
    for node in nodes:
        cells = []
        for column in columns:
            value = node.get(column, "")
            cells.append("|".join(value) if isinstance(value, list) else value)
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


def _node_of(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """Raw input id -> the id of the merged node it ended in."""
    node_of: dict[str, str] = {}
    for node in nodes:
        marks = node.get(MARK, [])
        marks = [marks] if isinstance(marks, str) else list(marks)
        for value in node.get("conflicts", {}).get(MARK, []):
            marks.extend([value] if isinstance(value, str) else value)
        for raw in marks:
            node_of[raw] = node["id"]
    return node_of


def predictions(pairs: list[dict[str, str]], node_of: dict[str, str]) -> list[bool]:
    """For each pair, whether both its ids ended in one merged node."""
    found = []
    for pair in pairs:
        left, right = node_of.get(pair["left"]), node_of.get(pair["right"])
        if left is None or right is None:
            raise AssertionError(f"a merge lost a node: {pair['left']} or {pair['right']}")
        found.append(left == right)
    return found


def score(pairs: list[dict[str, str]], predicted: list[bool]) -> dict[str, dict[str, Any]]:
    """Precision and recall per group, and per `input` of the stated group."""
    outcome: Counter[tuple[str, str]] = Counter()
    for pair, merged in zip(pairs, predicted, strict=True):
        verdict = ("t" if merged == (pair["same"] == "1") else "f") + ("p" if merged else "n")
        for name in (GROUPS[pair["kind"]], f"input {pair['input'] or '(none)'}", "all"):
            outcome[(name, verdict)] += 1
    names = dict.fromkeys(name for name, _ in outcome)
    return {
        name: rates(*(outcome[(name, verdict)] for verdict in ("tp", "fp", "fn"))) for name in names
    }


def rates(tp: int, fp: int, fn: int) -> dict[str, Any]:
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def run(*, normalize: bool = False) -> dict[str, Any]:
    """Each path's pairs, predictions and report; with `normalize`, the accumulator's only, after
    the Node Normalizer client added the recorded answers' equivalent ids."""
    pairs = load_pairs()
    node_of, report = merge_accumulator(pairs, normalize=normalize)
    results: dict[str, Any] = {"accumulator": (pairs, predictions(pairs, node_of), report)}
    if not normalize:
        kgx = _kgx_pairs(pairs)
        for fmt in ("kgx-jsonl", "kgx-tsv"):
            node_of, report = merge_batch(pairs, fmt)
            results[fmt] = (kgx, predictions(kgx, node_of), report)
    return results


def main() -> None:
    pairs = load_pairs()
    kinds = Counter(pair["kind"] for pair in pairs)
    print(
        f"\nrecall set (issue 32): {len(pairs)} pairs; "
        + ", ".join(f"{k} {n}" for k, n in kinds.items())
    )
    results = run()
    normalized = run(normalize=True)["accumulator"]
    print(f"  {'path':<24}{'group':<40}{'precision':>10}{'recall':>8}{'TP':>6}{'FP':>5}{'FN':>5}")
    runs = [*results.items(), ("accumulator --normalize", normalized)]
    for path, (scored, predicted, _) in runs:
        for name, rates in score(scored, predicted).items():
            print(
                f"  {path:<24}{name:<40}{rates['precision']:>10.3f}{rates['recall']:>8.3f}"
                f"{rates['tp']:>6}{rates['fp']:>5}{rates['fn']:>5}"
            )
    accumulator = dict(
        zip(map(_key, results["accumulator"][0]), results["accumulator"][1], strict=True)
    )
    for path in ("kgx-jsonl", "kgx-tsv"):
        scored, predicted, _ = results[path]
        differ = sum(accumulator[_key(p)] != m for p, m in zip(scored, predicted, strict=True))
        print(f"  {path} and the accumulator differ on {differ} of {len(scored)} pairs")
    refused = results["accumulator"][2].refused
    print(f"  merges refused for incompatible categories (accumulator): {len(refused)}")


def _key(pair: dict[str, str]) -> tuple[str, ...]:
    return tuple(pair.values())


if __name__ == "__main__":
    main()
