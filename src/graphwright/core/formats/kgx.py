"""KGX, Biolink's exchange format: a nodes file and an edges file, as JSON or JSON Lines (TSV
is in kgx_tsv.py; the records here are shared by both).

KGX keeps nodes and edges in two files. For one stream, kgx-jsonl is the nodes file followed by
the edges file (`cat nodes.jsonl edges.jsonl`); a line with `subject` and `object` is an edge,
any other line a node (node properties with those names are escaped, see common.py, so the rule
holds).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from graphwright.core.formats.common import (
    Link,
    Node,
    category_from,
    escaped,
    is_auto_link_key,
    link_keys,
    link_predicate,
    node_categories,
    restore_link_fields,
    split_escaped,
)
from graphwright.core.graph import GraphFormatError, load_graph, parse_json

NODE_COLUMNS = (("id",),)
EDGE_COLUMNS = (("subject",), ("predicate", "edge_label"), ("object",))
# An edge record's keys that are not link properties (`publications` is the evidence).
EDGE_PARTS = ("id", "subject", "predicate", "object", "publications")
NODES_JSONL = "nodes.jsonl"
EDGES_JSONL = "edges.jsonl"

# Node properties with these names are escaped: KGX fields, and the edge discriminator.
NODE_RESERVED = frozenset({"id", "name", "category", "subject", "predicate", "object"})
EDGE_RESERVED = frozenset({"id", "subject", "predicate", "object", "publications", "label"})

Record = dict[str, Any]


# -- records (shared by JSON Lines and TSV) --------------------------------------------------


def node_records(graph: dict[str, Any]) -> Iterator[Record]:
    for node in graph["nodes"]:
        categories, category_rebuilt = node_categories(node)
        record: Record = {"id": node["id"]}
        if categories:
            record["category"] = categories
        if "name" in node:
            record["name"] = node["name"]
        for key, value in node.items():
            if key in ("id", "name") or (key == "category" and category_rebuilt):
                continue
            record[escaped(key, NODE_RESERVED)] = value
        yield record


def edge_records(graph: dict[str, Any]) -> Iterator[Record]:
    links = graph["links"]
    for link, (key, own_id) in zip(links, link_keys(links), strict=True):
        predicate, rebuilt = link_predicate(link)
        record: Record = {
            "id": key,
            "subject": link["source"],
            "predicate": predicate,
            "object": link["target"],
        }
        if link["evidence"]:
            record["publications"] = link["evidence"]
        used = {"source", "target", "evidence", *rebuilt}
        if own_id:
            used.add("id")
        for name, value in link.items():
            if name not in used:
                record[escaped(name, EDGE_RESERVED)] = value
        yield record


def node_from_record(record: Record, where: str) -> Node:
    node_id = record.get("id")
    if not isinstance(node_id, str) or not node_id:
        raise GraphFormatError(f"{where}: node has no id")
    node, restored = split_escaped(record)
    category = node.get("category")
    if isinstance(category, str):
        category = [category]
    if isinstance(category, list) and category and all(isinstance(c, str) for c in category):
        node["category"] = category_from(category)
    node.update(restored)
    return node


def link_from_record(record: Record, where: str) -> Link:
    if "predicate" not in record and "edge_label" in record:  # KGX before Biolink 2
        record = {("predicate" if k == "edge_label" else k): v for k, v in record.items()}
    edge_id = record.get("id")
    name = f"{where}: edge {edge_id!r}" if isinstance(edge_id, str) else f"{where}: edge"
    for field in ("subject", "predicate", "object"):
        value = record.get(field)
        if not isinstance(value, str) or not value:
            raise GraphFormatError(f"{name} has no {field}")
    plain, restored = split_escaped(record)
    link: Link = {key: value for key, value in plain.items() if key not in EDGE_PARTS}
    publications = plain.get("publications")
    if publications is None:
        publications = []
    link.update(
        source=record["subject"],
        target=record["object"],
        evidence=publications if isinstance(publications, list) else [publications],
    )
    if isinstance(edge_id, str) and edge_id and not is_auto_link_key(edge_id):
        link["id"] = edge_id
    link.update(restored)
    restore_link_fields(link, record["predicate"])
    return link


def partial_graph(nodes: Iterable[Node], links: Iterable[Link]) -> dict[str, Any]:
    """A graph that may name nodes held by another file (see `complete_graph`)."""
    return load_graph({"nodes": list(nodes), "links": list(links)}, partial=True)


# -- KGX JSON --------------------------------------------------------------------------------


def write_json(graph: dict[str, Any]) -> str:
    document = {"nodes": list(node_records(graph)), "edges": list(edge_records(graph))}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def read_json(data: str | bytes) -> dict[str, Any]:
    return from_json_document(parse_json(data))


def from_json_document(document: Any) -> dict[str, Any]:
    """A graph from KGX JSON: `{"nodes": [...], "edges": [...]}` of KGX records."""
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise GraphFormatError("not KGX JSON: expected a 'nodes' list")
    edges = document.get("edges") or []
    if not isinstance(edges, list):
        raise GraphFormatError("KGX JSON 'edges' must be a list")
    for name, items in (("node", document["nodes"]), ("edge", edges)):
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise GraphFormatError(f"KGX JSON {name} {index} must be an object")
    return partial_graph(
        (node_from_record(r, f"kgx-json node {i}") for i, r in enumerate(document["nodes"])),
        (link_from_record(r, f"kgx-json edge {i}") for i, r in enumerate(edges)),
    )


def looks_like_kgx_json(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("nodes"), list)
        and isinstance(document.get("edges"), list)
        and "links" not in document
    )


# -- JSON Lines ------------------------------------------------------------------------------


def write_jsonl(graph: dict[str, Any]) -> str:
    nodes, edges = write_jsonl_pair(graph)
    return nodes + edges


def write_jsonl_pair(graph: dict[str, Any]) -> tuple[str, str]:
    return _jsonl(node_records(graph)), _jsonl(edge_records(graph))


def _jsonl(records: Iterable[Record]) -> str:
    return "".join(orjson.dumps(record).decode() + "\n" for record in records)


def read_jsonl(data: str | bytes) -> dict[str, Any]:
    nodes: list[Node] = []
    links: list[Link] = []
    for where, record in _json_lines(data, "kgx-jsonl"):
        if "subject" in record and "object" in record:
            links.append(link_from_record(record, where))
        else:
            nodes.append(node_from_record(record, where))
    return partial_graph(nodes, links)


def read_jsonl_pair(nodes: str | bytes, edges: str | bytes) -> dict[str, Any]:
    return partial_graph(
        (node_from_record(record, where) for where, record in _json_lines(nodes, NODES_JSONL)),
        (link_from_record(record, where) for where, record in _json_lines(edges, EDGES_JSONL)),
    )


def _json_lines(data: str | bytes, name: str) -> Iterator[tuple[str, Record]]:
    for number, line in enumerate(split_lines(data), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise GraphFormatError(f"{where}: invalid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise GraphFormatError(f"{where}: expected a JSON object")
        yield where, record


def split_lines(data: str | bytes) -> list[str]:
    """Lines split at "\n" only: str.splitlines would also split at characters such as U+2028,
    which JSON and TSV values may hold."""
    text = data.decode() if isinstance(data, bytes) else data
    return [line.removesuffix("\r") for line in text.split("\n")]
