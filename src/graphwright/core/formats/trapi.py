"""TRAPI 1.5 `knowledge_graph`, written: nodes keyed by CURIE, edges keyed by id, properties as
attributes (reading is in trapi_read.py).

Mapping (docs/formats.md has the full table):
- node `name` <-> `name`; node `category` <-> `categories` (Biolink CURIEs, NamedThing when
  nothing better is known);
- link `label` <-> `predicate`; `evidence` <-> the `biolink:publications` attribute;
- `primary_knowledge_source` / `aggregator_knowledge_source` <-> `sources`;
- an `attributes` list of TRAPI attributes <-> those attributes, verbatim;
- any other property <-> an attribute: `biolink:<key>` for Biolink slots, the key itself when it
  is a CURIE, else `graphwright:<key>`, so that it comes back under its own name.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from graphwright.core.biolink import is_slot
from graphwright.core.formats.common import (
    BIOLINK,
    DEFAULT_PREDICATE,
    GRAPHWRIGHT,
    Link,
    Node,
    is_curie,
    link_keys,
    link_predicate,
    node_categories,
)

PUBLICATIONS = "biolink:publications"
ORIGINAL_PREDICATE = "biolink:original_predicate"
PRIMARY = "primary_knowledge_source"
AGGREGATOR = "aggregator_knowledge_source"
ROLES = frozenset({PRIMARY, AGGREGATOR, "supporting_data_source"})
# TRAPI requires one primary source per edge; Translator's stand-in when none is known.
UNKNOWN_SOURCE = {"resource_id": "infores:unknown", "resource_role": PRIMARY}
GRAPHWRIGHT_INFORES = "infores:graphwright"
NAMED_THING = "biolink:NamedThing"
ATTRIBUTES = "attributes"
# TRAPI 1.5's patterns for categories, predicates and qualifier types.
_CATEGORY = re.compile(r"biolink:[A-Z][a-zA-Z_]*")
_PREDICATE = re.compile(r"biolink:[a-z][a-z_]*")
_ATTRIBUTE_KEYS = frozenset(
    {
        "attribute_type_id", "value", "value_type_id", "original_attribute_name", "value_url",
        "attribute_source", "description", "attributes",
    }
)  # fmt: skip
# Properties the reader rebuilds from TRAPI's own fields: never written as Biolink attributes.
_READER_FIELDS = frozenset(
    {
        "id", "name", "category", "categories", "predicate", "subject", "object", "sources",
        "qualifiers", "publications", "attributes", PRIMARY, AGGREGATOR, "original_predicate",
        "label",
    }
)  # fmt: skip
_SOURCE_KEYS = frozenset({"resource_id", "resource_role", "upstream_resource_ids",
                          "source_record_urls"})  # fmt: skip


def write(graph: dict[str, Any]) -> str:
    return orjson.dumps(to_knowledge_graph(graph), option=orjson.OPT_INDENT_2).decode()


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
    if categories and not all(_CATEGORY.fullmatch(category) for category in categories):
        categories, category_rebuilt = None, False
    used = {"id"}
    trapi: dict[str, Any] = {}
    name = node.get("name")
    if "name" in node and (name is None or isinstance(name, str)):
        trapi["name"] = name
        used.add("name")
    trapi["categories"] = categories or [NAMED_THING]
    if category_rebuilt and categories:
        used.add("category")
    trapi["attributes"] = _attributes(node, used)
    return trapi


def _trapi_edge(link: Link, own_id: bool) -> dict[str, Any]:
    predicate, rebuilt = link_predicate(link)
    leading: list[dict[str, Any]] = []
    if not _PREDICATE.fullmatch(predicate):  # TRAPI takes Biolink predicates only
        leading.append({"attribute_type_id": ORIGINAL_PREDICATE, "value": predicate})
        predicate = DEFAULT_PREDICATE
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
    if link["evidence"]:
        leading.append({"attribute_type_id": PUBLICATIONS, "value": link["evidence"]})
    reserved = (
        {"original_predicate"}
        if leading and leading[0]["attribute_type_id"] == (ORIGINAL_PREDICATE)
        else set()
    )
    edge["attributes"] = leading + _attributes(link, used, reserved)
    return edge


def _attributes(
    item: dict[str, Any], used: set[str], reserved: set[str] | frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    attributes = [
        {"attribute_type_id": _attribute_type(key, reserved), "value": value}
        for key, value in item.items()
        if key not in used and not (key == ATTRIBUTES and _is_attribute_list(value))
    ]
    own = item.get(ATTRIBUTES)
    if ATTRIBUTES not in used and _is_attribute_list(own):
        attributes.extend(own)
    return attributes


def _attribute_type(key: str, reserved: set[str] | frozenset[str]) -> str:
    """`biolink:<key>` for a Biolink slot, a CURIE key as it is, else `graphwright:<key>`."""
    if key in reserved:
        return GRAPHWRIGHT + key
    if key not in _READER_FIELDS and is_slot(key):
        return BIOLINK + key
    if is_curie(key) and not key.startswith((BIOLINK, GRAPHWRIGHT)):
        return key
    return GRAPHWRIGHT + key


def _sources(link: Link) -> tuple[list[dict[str, Any]], set[str]]:
    """TRAPI `sources` for a link, and the link keys they stand for: its real sources, Translator's
    `infores:unknown` when it names no primary one, and graphwright as an aggregator when the link
    was merged from several results."""
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
        entries, used = [dict(source) for source in own], {"sources"}
    primaries = [e["resource_id"] for e in entries if e["resource_role"] == PRIMARY]
    if not primaries:
        entries.insert(0, dict(UNKNOWN_SOURCE))
    if _merged(link):
        upstream = primaries or [UNKNOWN_SOURCE["resource_id"]]
        entries.append(
            {
                "resource_id": GRAPHWRIGHT_INFORES,
                "resource_role": AGGREGATOR,
                "upstream_resource_ids": upstream,
            }
        )
    return entries, used


def _merged(link: Link) -> bool:
    """Whether graphwright aggregated the link: a merge gave it several results."""
    provenance = link.get("provenance")
    return isinstance(provenance, list) and len(set(map(str, provenance))) > 1


def _is_string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def _is_source_list(value: Any) -> bool:
    """A TRAPI `sources` list with at most one primary source."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(source, dict)
            and source.keys() <= _SOURCE_KEYS
            and isinstance(source.get("resource_id"), str)
            and source.get("resource_role") in ROLES
            and all(
                source.get(key) is None or _is_string_list(source[key])
                for key in ("upstream_resource_ids", "source_record_urls")
            )
            for source in value
        )
        and sum(source["resource_role"] == PRIMARY for source in value) <= 1
        and not any(source["resource_id"] == GRAPHWRIGHT_INFORES for source in value)
    )


def _is_qualifier_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(q, dict)
            and q.keys() == {"qualifier_type_id", "qualifier_value"}
            and isinstance(q["qualifier_type_id"], str)
            and _PREDICATE.fullmatch(q["qualifier_type_id"]) is not None
            and isinstance(q["qualifier_value"], str)
            for q in value
        )
    )


def _is_attribute_list(value: Any) -> bool:
    """A list of TRAPI attributes (kept verbatim)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(a, dict)
            and a.keys() <= _ATTRIBUTE_KEYS
            and "value" in a
            and isinstance(a.get("attribute_type_id"), str)
            and bool(a["attribute_type_id"])
            for a in value
        )
    )
