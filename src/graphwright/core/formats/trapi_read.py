"""TRAPI knowledge graphs, read: 1.5 (a knowledge_graph, message or response), the singular
`category` and list `predicate` of 1.0, and the list-shaped knowledge graphs of 0.9.

Attributes become properties when they are plain (type and value, the type not repeated),
else they are kept whole in `attributes`; see docs/formats.md.
"""

from __future__ import annotations

from typing import Any

from graphwright.core.biolink import slot_kind
from graphwright.core.formats.common import (
    BIOLINK,
    DEFAULT_PREDICATE,
    GRAPHWRIGHT,
    Link,
    Node,
    categories_for,
    category_from,
    is_auto_link_key,
    restore_link_fields,
)
from graphwright.core.formats.trapi import (
    AGGREGATOR,
    ATTRIBUTES,
    GRAPHWRIGHT_INFORES,
    PRIMARY,
    PUBLICATIONS,
    UNKNOWN_SOURCE,
)
from graphwright.core.graph import GraphFormatError, load_graph, parse_json


def read(data: str | bytes) -> dict[str, Any]:
    return from_document(parse_json(data))


def from_document(document: Any) -> dict[str, Any]:
    """A seed graph from a TRAPI knowledge_graph, message or response (its message's graph)."""
    kg = _knowledge_graph(document)
    nodes = kg["nodes"]
    edges = kg.get("edges")
    if edges is None:
        edges = {}
    if isinstance(edges, list):
        edges = _old_edges(edges)
    if not isinstance(edges, dict):
        raise GraphFormatError(
            "TRAPI knowledge_graph 'edges' must be an object keyed by edge id (or a 0.9 list)"
        )
    graph_nodes = [_graph_node(key, value) for key, value in nodes.items()]
    graph_links = [_graph_link(key, value, nodes) for key, value in edges.items()]
    return load_graph({"nodes": graph_nodes, "links": graph_links})


def _knowledge_graph(document: Any) -> dict[str, Any]:
    if isinstance(document, dict) and "message" in document:
        document = document["message"]
    if isinstance(document, dict) and "knowledge_graph" in document:
        document = document["knowledge_graph"]
        if document is None:
            raise GraphFormatError("TRAPI message has no knowledge_graph (it is null)")
    if (
        isinstance(document, dict)
        and isinstance(document.get("nodes"), list)
        and isinstance(document.get("edges", []), list)
    ):  # TRAPI 0.9: lists of nodes and edges
        return {**document, "nodes": _old_nodes(document["nodes"])}
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), dict):
        raise GraphFormatError(
            "not a TRAPI knowledge_graph: expected 'nodes' as an object keyed by CURIE"
        )
    return document


def looks_like_old_trapi(document: Any) -> bool:
    """A bare TRAPI 0.9 knowledge graph: lists of nodes and of edges with `source_id`."""
    edges = document.get("edges") if isinstance(document, dict) else None
    return (
        isinstance(document.get("nodes"), list)
        and isinstance(edges, list)
        and any(isinstance(edge, dict) and "source_id" in edge for edge in edges)
    )


# TRAPI 0.9 and 1.0 names of the fields TRAPI 1.5 calls categories, subject, object, predicate.
_OLD_NODE_FIELDS = {"id", "name", "categories", "category", "type", "attributes"}
_OLD_EDGE_FIELDS = {"id", "subject", "source_id", "object", "target_id", "predicate", "type",
                    "edge_label", "attributes", "sources", "qualifiers"}  # fmt: skip


def _old_nodes(nodes: list[Any]) -> dict[str, Any]:
    """TRAPI 0.9's list of nodes (`id`, `type`) keyed by id, in TRAPI 1.5's shape."""
    keyed: dict[str, Any] = {}
    for index, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("id"), str) or not node["id"]:
            raise GraphFormatError(f"TRAPI node {index} has no id")
        keyed[node["id"]] = node
    return keyed


def _old_edges(edges: list[Any]) -> dict[str, Any]:
    keyed: dict[str, Any] = {}
    for index, edge in enumerate(edges):
        if not isinstance(edge, dict):
            raise GraphFormatError(f"TRAPI edge {index} must be an object")
        key = edge.get("id")
        keyed[key if isinstance(key, str) and key and key not in keyed else f"e{index}"] = edge
    return keyed


def _first(item: dict[str, Any], *fields: str) -> Any:
    return next((item[field] for field in fields if item.get(field) is not None), None)


def _old_attributes(item: dict[str, Any], known: set[str]) -> list[Any]:
    """Attributes of a TRAPI 0.9/1.0 item: its own (1.0's `name`/`type`/`url` renamed) and its
    extra top-level fields, which 0.9 used for properties."""
    attributes = item.get("attributes")
    result = [_attribute_1_5(a) for a in attributes] if isinstance(attributes, list) else []
    result.extend(
        {"attribute_type_id": key, "value": value}
        for key, value in item.items()
        if key not in known
    )
    return result


def _attribute_1_5(attribute: Any) -> Any:
    if not isinstance(attribute, dict) or "attribute_type_id" in attribute:
        return attribute
    renamed = {k: v for k, v in attribute.items() if k not in ("name", "type", "url", "source")}
    renamed["attribute_type_id"] = attribute.get("type") or attribute.get("name")
    for old, new in (("name", "original_attribute_name"), ("url", "value_url"),
                     ("source", "attribute_source")):  # fmt: skip
        if attribute.get(old) is not None:
            renamed[new] = attribute[old]
    return renamed


def _categories(trapi: dict[str, Any]) -> list[str] | None:
    value = _first(trapi, "categories", "category", "type")
    if isinstance(value, str):
        value = [value]
    return categories_for(value) if value else None


def _graph_node(key: str, trapi: Any) -> Node:
    if not isinstance(trapi, dict):
        raise GraphFormatError(f"TRAPI node {key!r} must be an object")
    attributes = (
        _old_attributes(trapi, _OLD_NODE_FIELDS)
        if trapi.keys() - {"name", "categories", "attributes", "is_set"}
        else trapi.get("attributes")
    )
    plain, restored, _ = _read_attributes(attributes, f"node {key!r}", edge=False)
    node: Node = dict(plain)
    node["id"] = key
    if "name" in trapi:
        node["name"] = trapi["name"]
    categories = _categories(trapi)
    if categories:
        node["category"] = category_from(categories)
    node.update(restored)
    return node


def _graph_link(key: str, edge: Any, nodes: dict[str, Any]) -> Link:
    if not isinstance(edge, dict):
        raise GraphFormatError(f"TRAPI edge {key!r} must be an object")
    ends = {"subject": _first(edge, "subject", "source_id"),
            "object": _first(edge, "object", "target_id")}  # fmt: skip
    for field, ref in ends.items():
        if not isinstance(ref, str) or not ref:
            raise GraphFormatError(f"TRAPI edge {key!r} has no {field}")
        if ref not in nodes:
            raise GraphFormatError(f"TRAPI edge {key!r} has {field} {ref!r}, which is not a node")
    predicate = _first(edge, "predicate", "type", "edge_label")
    if isinstance(predicate, list) and predicate:  # TRAPI 1.0 allowed a list
        predicate = predicate[0]
    if not isinstance(predicate, str) or not predicate:
        raise GraphFormatError(f"TRAPI edge {key!r} has no predicate")
    if isinstance(predicate, str) and ":" not in predicate:
        predicate = BIOLINK + predicate  # TRAPI 0.9 wrote bare Biolink names
    attributes = (
        _old_attributes(edge, _OLD_EDGE_FIELDS)
        if edge.keys() - {"subject", "object", "predicate", "sources", "qualifiers", "attributes"}
        else edge.get("attributes")
    )
    plain, restored, evidence = _read_attributes(attributes, f"edge {key!r}", edge=True)
    original = plain.pop("original_predicate", None)
    if predicate == DEFAULT_PREDICATE and isinstance(original, str) and original:
        predicate = original
    elif original is not None:
        plain["original_predicate"] = original
    link: Link = dict(plain)
    link.update(source=ends["subject"], target=ends["object"], evidence=evidence)
    if not is_auto_link_key(key):
        link["id"] = key
    link.update(_source_fields(edge.get("sources")))
    if edge.get("qualifiers"):
        link["qualifiers"] = edge["qualifiers"]
    link.update(restored)
    restore_link_fields(link, predicate)
    return link


def _read_attributes(
    attributes: Any, where: str, *, edge: bool
) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """(properties, escaped properties, an edge's publications) of a TRAPI attribute list.

    An attribute of only `attribute_type_id` and `value`, whose type no other attribute has,
    becomes the property of that type (without `biolink:`). Any other attribute (with an
    original name, a value type, a source, sub-attributes, or a type that repeats) is kept
    whole, in the item's `attributes` list; a repeated multivalued Biolink slot (`xref`) gives
    the list of its values.
    """
    if attributes is None:
        return {}, {}, []
    if not isinstance(attributes, list):
        raise GraphFormatError(f"TRAPI {where}: 'attributes' must be a list")
    restored: dict[str, Any] = {}
    publications: list[Any] = []
    simple: list[tuple[str, Any]] = []
    whole: list[dict[str, Any]] = []
    for index, attribute in enumerate(attributes):
        type_id = attribute.get("attribute_type_id") if isinstance(attribute, dict) else None
        if not isinstance(type_id, str) or not type_id:
            raise GraphFormatError(f"TRAPI {where}: attribute {index} has no attribute_type_id")
        value = attribute.get("value")
        if edge and type_id == PUBLICATIONS and attribute.keys() <= {"attribute_type_id", "value"}:
            publications.extend(value if isinstance(value, list) else [value])
        elif type_id.startswith(GRAPHWRIGHT):
            restored[type_id[len(GRAPHWRIGHT) :]] = value
        elif attribute.keys() == {"attribute_type_id", "value"}:
            simple.append((type_id, value))
        else:
            whole.append(attribute)
    counts: dict[str, int] = {}
    for type_id, _ in simple:
        counts[type_id] = counts.get(type_id, 0) + 1
    plain: dict[str, Any] = {}
    for type_id, value in simple:
        key = type_id.removeprefix(BIOLINK)
        if counts[type_id] == 1:
            plain[key] = value
        elif type_id.startswith(BIOLINK) and slot_kind(key) == "multivalued":
            plain.setdefault(key, []).append(value)  # a Biolink list slot, one item each
        else:
            whole.append({"attribute_type_id": type_id, "value": value})
    if whole:
        plain[ATTRIBUTES] = whole
    return plain, restored, publications


def _source_fields(sources: Any) -> dict[str, Any]:
    """Link fields for TRAPI `sources`: simple ones as KGX-style source fields, others verbatim.
    Translator's `infores:unknown` stand-in and graphwright's own aggregation are dropped."""
    if not isinstance(sources, list):
        return {}
    entries = [
        source
        for source in sources
        if source != UNKNOWN_SOURCE
        and not (isinstance(source, dict) and source.get("resource_id") == GRAPHWRIGHT_INFORES)
    ]
    if not entries:
        return {}
    primaries = [s["resource_id"] for s in entries if _is_simple(s, PRIMARY)]
    aggregators = [s["resource_id"] for s in entries if _is_simple(s, AGGREGATOR)]
    if len(primaries) > 1 or len(primaries) + len(aggregators) != len(entries):
        return {"sources": entries}
    fields: dict[str, Any] = {}
    if primaries:
        fields[PRIMARY] = primaries[0]
    if aggregators:
        fields[AGGREGATOR] = aggregators
    return fields


def _is_simple(source: Any, role: str) -> bool:
    return (
        isinstance(source, dict)
        and source.keys() == {"resource_id", "resource_role"}
        and source["resource_role"] == role
        and isinstance(source["resource_id"], str)
        and bool(source["resource_id"])
    )
