"""TRAPI 1.5 `knowledge_graph`: nodes keyed by CURIE, edges keyed by id, properties as attributes.

Mapping (docs/formats.md has the full table):
- node `name` <-> `name`; node `category` <-> `categories` (Biolink CURIEs);
- link `label` <-> `predicate`; `evidence` <-> the `biolink:publications` attribute;
- `primary_knowledge_source` / `aggregator_knowledge_source` <-> `sources`;
- any other property <-> an attribute: `biolink:<key>` for a few Biolink slots, else
  `graphwright:<key>`, so that it comes back under its own name.
"""

from __future__ import annotations

from typing import Any

import orjson

from graphwright.core.formats.common import (
    BIOLINK,
    GRAPHWRIGHT,
    Link,
    Node,
    category_from,
    is_auto_link_key,
    link_keys,
    link_predicate,
    node_categories,
    restore_link_fields,
)
from graphwright.core.graph import GraphFormatError, load_graph, parse_json

PUBLICATIONS = "biolink:publications"
PRIMARY = "primary_knowledge_source"
AGGREGATOR = "aggregator_knowledge_source"
# TRAPI requires one primary source per edge; this stands in when a link names none.
PLACEHOLDER_SOURCE = {"resource_id": "infores:graphwright", "resource_role": PRIMARY}
# Properties written as Biolink attributes (others use the graphwright namespace).
BIOLINK_SLOTS = frozenset(
    {
        "description", "synonym", "xref", "same_as", "provided_by", "iri", "full_name",
        "symbol", "in_taxon", "knowledge_level", "agent_type", "p_value", "adjusted_p_value",
        "has_evidence", "negated", "original_predicate",
    }
)  # fmt: skip


def write(graph: dict[str, Any]) -> str:
    return orjson.dumps(to_knowledge_graph(graph), option=orjson.OPT_INDENT_2).decode()


def read(data: str | bytes) -> dict[str, Any]:
    return from_document(parse_json(data))


def to_knowledge_graph(graph: dict[str, Any]) -> dict[str, Any]:
    links = graph["links"]
    return {
        "nodes": {node["id"]: _trapi_node(node) for node in graph["nodes"]},
        "edges": {
            key: _trapi_edge(link, own_id)
            for link, (key, own_id) in zip(links, link_keys(links), strict=True)
        },
    }


def _trapi_node(node: Node) -> dict[str, Any]:
    categories, category_rebuilt = node_categories(node)
    used = {"id"}
    trapi: dict[str, Any] = {}
    name = node.get("name")
    if "name" in node and (name is None or isinstance(name, str)):
        trapi["name"] = name
        used.add("name")
    if categories:
        trapi["categories"] = categories
    if category_rebuilt:
        used.add("category")
    trapi["attributes"] = _attributes(node, used)
    return trapi


def _trapi_edge(link: Link, own_id: bool) -> dict[str, Any]:
    predicate, rebuilt = link_predicate(link)
    sources, sources_used = _sources(link)
    edge: dict[str, Any] = {
        "subject": link["source"],
        "predicate": predicate,
        "object": link["target"],
        "sources": sources,
    }
    used = {"source", "target", "evidence", *rebuilt, *sources_used}
    if own_id:
        used.add("id")
    qualifiers = link.get("qualifiers")
    if _is_qualifier_list(qualifiers):
        edge["qualifiers"] = qualifiers
        used.add("qualifiers")
    attributes = _attributes(link, used)
    if link["evidence"]:
        attributes.insert(0, {"attribute_type_id": PUBLICATIONS, "value": link["evidence"]})
    edge["attributes"] = attributes
    return edge


def _attributes(item: dict[str, Any], used: set[str]) -> list[dict[str, Any]]:
    return [
        {"attribute_type_id": (BIOLINK if key in BIOLINK_SLOTS else GRAPHWRIGHT) + key, "value": v}
        for key, v in item.items()
        if key not in used
    ]


def _sources(link: Link) -> tuple[list[dict[str, Any]], set[str]]:
    """TRAPI `sources` for a link, and the link keys they stand for."""
    primary = link.get(PRIMARY)
    aggregators = link.get(AGGREGATOR)
    entries: list[dict[str, Any]] = []
    used: set[str] = set()
    if isinstance(primary, str) and primary:
        entries.append({"resource_id": primary, "resource_role": PRIMARY})
        used.add(PRIMARY)
    if aggregators and _is_string_list(aggregators):
        entries.extend({"resource_id": a, "resource_role": AGGREGATOR} for a in aggregators)
        used.add(AGGREGATOR)
    own = link.get("sources")
    if not entries and _is_source_list(own):
        return own, {"sources"}
    if PRIMARY not in used:
        entries.insert(0, dict(PLACEHOLDER_SOURCE))
    return entries, used


def _is_string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def _is_source_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(source, dict)
            and isinstance(source.get("resource_id"), str)
            and isinstance(source.get("resource_role"), str)
            for source in value
        )
    )


def _is_qualifier_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(q, dict) and "qualifier_type_id" in q and "qualifier_value" in q
            for q in value
        )
    )


# -- reading ---------------------------------------------------------------------------------


def from_document(document: Any) -> dict[str, Any]:
    """A seed graph from a TRAPI knowledge_graph, message or response (its message's graph)."""
    kg = _knowledge_graph(document)
    nodes = kg["nodes"]
    edges = kg.get("edges")
    if edges is None:
        edges = {}
    if not isinstance(edges, dict):
        raise GraphFormatError("TRAPI knowledge_graph 'edges' must be an object keyed by edge id")
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
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), dict):
        raise GraphFormatError(
            "not a TRAPI knowledge_graph: expected 'nodes' as an object keyed by CURIE"
        )
    return document


def _graph_node(key: str, trapi: Any) -> Node:
    if not isinstance(trapi, dict):
        raise GraphFormatError(f"TRAPI node {key!r} must be an object")
    plain, restored, _ = _read_attributes(trapi.get("attributes"), f"node {key!r}", edge=False)
    node: Node = dict(plain)
    node["id"] = key
    if "name" in trapi:
        node["name"] = trapi["name"]
    categories = trapi.get("categories")
    if categories and _is_string_list(categories):
        node["category"] = category_from(categories)
    node.update(restored)
    return node


def _graph_link(key: str, edge: Any, nodes: dict[str, Any]) -> Link:
    if not isinstance(edge, dict):
        raise GraphFormatError(f"TRAPI edge {key!r} must be an object")
    for field in ("subject", "object"):
        ref = edge.get(field)
        if not isinstance(ref, str) or not ref:
            raise GraphFormatError(f"TRAPI edge {key!r} has no {field}")
        if ref not in nodes:
            raise GraphFormatError(f"TRAPI edge {key!r} has {field} {ref!r}, which is not a node")
    predicate = edge.get("predicate")
    if not isinstance(predicate, str) or not predicate:
        raise GraphFormatError(f"TRAPI edge {key!r} has no predicate")
    plain, restored, evidence = _read_attributes(edge.get("attributes"), f"edge {key!r}", edge=True)
    link: Link = dict(plain)
    link.update(source=edge["subject"], target=edge["object"], evidence=evidence)
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
    """(properties, escaped properties, an edge's publications) of a TRAPI attribute list."""
    if attributes is None:
        return {}, {}, []
    if not isinstance(attributes, list):
        raise GraphFormatError(f"TRAPI {where}: 'attributes' must be a list")
    collected: dict[str, list[Any]] = {}
    restored: dict[str, Any] = {}
    publications: list[Any] = []
    for index, attribute in enumerate(attributes):
        type_id = attribute.get("attribute_type_id") if isinstance(attribute, dict) else None
        if not isinstance(type_id, str) or not type_id:
            raise GraphFormatError(f"TRAPI {where}: attribute {index} has no attribute_type_id")
        value = attribute.get("value")
        if edge and type_id == PUBLICATIONS:
            publications.extend(value if isinstance(value, list) else [value])
        elif type_id.startswith(GRAPHWRIGHT):
            restored[type_id[len(GRAPHWRIGHT) :]] = value
        else:
            collected.setdefault(type_id.removeprefix(BIOLINK), []).append(value)
    plain = {key: values[0] if len(values) == 1 else values for key, values in collected.items()}
    return plain, restored, publications


def _source_fields(sources: Any) -> dict[str, Any]:
    """Link fields for TRAPI `sources`: simple ones as KGX-style source fields, others verbatim."""
    if not isinstance(sources, list):
        return {}
    entries = [source for source in sources if source != PLACEHOLDER_SOURCE]
    if not entries:
        return {}
    primaries = [s["resource_id"] for s in entries if _is_simple(s, PRIMARY)]
    aggregators = [s["resource_id"] for s in entries if _is_simple(s, AGGREGATOR)]
    if len(primaries) > 1 or len(primaries) + len(aggregators) != len(entries):
        return {"sources": sources}
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
