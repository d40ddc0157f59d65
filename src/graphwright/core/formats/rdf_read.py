"""RDF in: Turtle (so N-Triples) and JSON-LD (parsed by pyoxigraph) back to the seed graph.

It reads what `rdf.py` writes: a node is a subject with types or a label; a link is an
rdf:Statement (a blank node) with its subject, predicate and object, its rdfs:label, its
biolink:publications as evidence and its other properties. A triple between two IRIs that no
statement describes is a link too (RDF from elsewhere), labelled by its predicate. IRIs go back to
the ids they came from: CURIEs for known namespaces, graphwright node IRIs to their text. A
property with one value reads as that value, with several as a list.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from urllib.parse import unquote

import orjson
import pyoxigraph as ox

from graphwright.core.formats.common import category_from, restore_link_fields
from graphwright.core.formats.rdf import (
    BIOLINK_VOCAB,
    BIOREGISTRY,
    GRAPHWRIGHT_NODE,
    GRAPHWRIGHT_VOCAB,
    RDF,
    RDFS,
    XSD,
)
from graphwright.core.graph import GraphFormatError
from graphwright.core.ids import uri_to_curie

_TYPE = RDF + "type"
_LABEL = RDFS + "label"
_STATEMENT = RDF + "Statement"
_PUBLICATIONS = BIOLINK_VOCAB + "publications"
_REIFIED = {RDF + "subject", RDF + "predicate", RDF + "object"}
# Predicates that say "the same entity": their objects become the node's `same_as`
# (docs/merge.md); broad, narrow, close and related matches stay links.
_SAME_AS = frozenset(
    {
        "http://www.w3.org/2002/07/owl#sameAs",
        "http://www.w3.org/2004/02/skos/core#exactMatch",
        BIOLINK_VOCAB + "same_as",
        BIOLINK_VOCAB + "exact_match",
    }
)

Subject = ox.NamedNode | ox.BlankNode


def read_turtle(data: str | bytes) -> dict[str, Any]:
    """Turtle, and so N-Triples, a subset of it (graphwright's `.nt` and `.ttl` files)."""
    return _read(data, ox.RdfFormat.TURTLE)


def read_jsonld(data: str | bytes) -> dict[str, Any]:
    return _read(data, ox.RdfFormat.JSON_LD)


def _read(data: str | bytes, fmt: ox.RdfFormat) -> dict[str, Any]:
    raw = data.encode() if isinstance(data, str) else data
    try:
        quads = list(ox.parse(raw, format=fmt))
    except (SyntaxError, ValueError) as exc:
        raise GraphFormatError(f"not valid {fmt.name}: {exc}") from None
    about: dict[Subject, dict[str, list[ox.NamedNode | ox.BlankNode | ox.Literal]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for quad in quads:
        about[quad.subject][quad.predicate.value].append(quad.object)
    statements = {s: None for s, props in about.items() if _is_statement(props)}  # in order
    nodes: dict[str, dict[str, Any]] = {}
    links: list[dict[str, Any]] = []
    described: set[tuple[str, str, str]] = set()
    for subject in statements:
        props = about[subject]
        ends = [props[RDF + name][0] for name in ("subject", "predicate", "object")]
        described.add(tuple(term.value for term in ends))  # type: ignore[arg-type]
        links.append(_link(ends, props))
    for subject, props in about.items():
        if subject in statements or not isinstance(subject, ox.NamedNode):
            continue
        node = nodes.setdefault(subject.value, {"id": _id(subject.value)})
        for predicate, values in props.items():
            if predicate == _TYPE:
                types = [_id(v.value) for v in values if isinstance(v, ox.NamedNode)]
                node["category"] = category_from(types)
            elif predicate == _LABEL and len(values) == 1:
                node["name"] = values[0].value
            elif predicate in _SAME_AS:
                same = [
                    _evidence(v)
                    for v in values
                    if (subject.value, predicate, v.value) not in described
                ]
                node.setdefault("same_as", []).extend(s for s in same if isinstance(s, str))
            elif all(isinstance(v, ox.NamedNode) for v in values):
                for value in values:
                    if (subject.value, predicate, value.value) not in described:
                        links.append(_plain_link(subject, predicate, value))
            else:
                name = _property(predicate)
                node[name] = _values(values, listed=name == "evidence")
    for link in links:
        for end in ("source", "target"):
            nodes.setdefault(link.pop(f"_{end}_iri"), {"id": link[end]})
    return {"nodes": list(nodes.values()), "links": links}


def _is_statement(props: dict[str, list[Any]]) -> bool:
    types = {t.value for t in props.get(_TYPE, ())}
    return _STATEMENT in types and all(len(props.get(p, ())) == 1 for p in _REIFIED)


def _link(ends: list[Any], props: dict[str, list[Any]]) -> dict[str, Any]:
    subject, predicate, target = ends
    link: dict[str, Any] = {
        "source": _id(subject.value),
        "target": _id(target.value),
        "_source_iri": subject.value,
        "_target_iri": target.value,
        "evidence": [_evidence(term) for term in props.get(_PUBLICATIONS, ())],
    }
    if len(props.get(_LABEL, ())) == 1:
        link["label"] = props[_LABEL][0].value
    for name, values in props.items():
        if name not in (_TYPE, _LABEL, _PUBLICATIONS, *_REIFIED):
            link[_property(name)] = _values(values)
    restore_link_fields(link, _id(predicate.value))
    return link


def _plain_link(subject: ox.NamedNode, predicate: str, target: ox.NamedNode) -> dict[str, Any]:
    link = {
        "source": _id(subject.value),
        "target": _id(target.value),
        "_source_iri": subject.value,
        "_target_iri": target.value,
        "evidence": [],
    }
    restore_link_fields(link, _id(predicate))
    return link


def _id(iri: str) -> str:
    """The id, category or predicate an IRI was made from (see `rdf.iri_for`)."""
    for namespace, prefix in ((BIOLINK_VOCAB, "biolink:"), (GRAPHWRIGHT_VOCAB, "graphwright:")):
        if iri.startswith(namespace):
            return prefix + unquote(iri[len(namespace) :])
    if iri.startswith(GRAPHWRIGHT_NODE):
        return unquote(iri[len(GRAPHWRIGHT_NODE) :])
    if iri.startswith(BIOREGISTRY):
        return unquote(iri[len(BIOREGISTRY) :])
    return uri_to_curie(iri) or iri


def _property(iri: str) -> str:
    if iri.startswith(GRAPHWRIGHT_VOCAB):
        return unquote(iri[len(GRAPHWRIGHT_VOCAB) :])
    return _id(iri)


def _values(terms: list[Any], *, listed: bool = False) -> Any:
    values = [_evidence(term) for term in terms]
    return values[0] if len(values) == 1 and not listed else values


def _evidence(term: Any) -> Any:
    if isinstance(term, ox.NamedNode):
        return _id(term.value)
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    return _literal(term)


def _literal(term: ox.Literal) -> Any:
    datatype = term.datatype.value
    text = term.value
    try:
        if datatype == XSD + "boolean":
            return text in ("true", "1")
        if datatype in (XSD + "integer", XSD + "long", XSD + "int"):
            return int(text)
        if datatype in (XSD + "double", XSD + "decimal", XSD + "float"):
            return float(text)
        if datatype == RDF + "JSON":
            return orjson.loads(text)
    except (ValueError, orjson.JSONDecodeError):
        return text
    return text
