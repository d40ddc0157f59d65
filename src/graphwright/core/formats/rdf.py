"""RDF out: N-Triples (serialised by pyoxigraph) and JSON-LD with an @context; write only.

- A node is an IRI (see `iri_for`), typed with its Biolink categories, `name` as rdfs:label.
- A link is the triple (subject, predicate, object) and, so that evidence and properties can
  hang on it, a reified rdf:Statement (a blank node) with rdfs:label, biolink:publications for
  each evidence item, and one triple per other property.
- Other properties use `https://w3id.org/graphwright/vocab/<name>`. Strings, numbers and
  booleans become typed literals, lists one triple per item, objects rdf:JSON literals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any
from urllib.parse import quote

import orjson
import pyoxigraph as ox

from graphwright.core.formats.common import (
    GRAPHWRIGHT,
    is_curie,
    link_predicate,
    node_categories,
)
from graphwright.core.ids import curie_to_uri

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
BIOLINK_VOCAB = "https://w3id.org/biolink/vocab/"
GRAPHWRIGHT_VOCAB = "https://w3id.org/graphwright/vocab/"
GRAPHWRIGHT_NODE = "https://w3id.org/graphwright/node/"
BIOREGISTRY = "https://bioregistry.io/"
CONTEXT = {
    "rdf": RDF,
    "rdfs": RDFS,
    "xsd": XSD,
    "biolink": BIOLINK_VOCAB,
    "gw": GRAPHWRIGHT_VOCAB,
}
_SAFE_LOCAL = "-._~:@!$&'()*+,;=/"

_TYPE = ox.NamedNode(RDF + "type")
_STATEMENT = ox.NamedNode(RDF + "Statement")
_SUBJECT = ox.NamedNode(RDF + "subject")
_PREDICATE = ox.NamedNode(RDF + "predicate")
_OBJECT = ox.NamedNode(RDF + "object")
_LABEL = ox.NamedNode(RDFS + "label")
_PUBLICATIONS = ox.NamedNode(BIOLINK_VOCAB + "publications")
_JSON = ox.NamedNode(RDF + "JSON")
_BOOLEAN = ox.NamedNode(XSD + "boolean")
_INTEGER = ox.NamedNode(XSD + "integer")
_DOUBLE = ox.NamedNode(XSD + "double")
_STRING = ox.NamedNode(XSD + "string")

Term = ox.NamedNode | ox.BlankNode | ox.Literal
# Plain tuples of pyoxigraph terms: building ox.Triple objects costs more than the rest together.
Triple = tuple[ox.NamedNode | ox.BlankNode, ox.NamedNode, Term]


def iri_for(identifier: str) -> str:
    """The IRI of a node id, category, predicate or property name.

    IRIs stay as they are; `biolink:` CURIEs go to the Biolink vocabulary, CURIEs with a known
    prefix to the namespace Biolink's prefix map gives it (OBO PURLs for MONDO, identifiers.org
    for NCBIGene), other CURIEs to the bioregistry.io resolver; anything else becomes a
    graphwright node IRI.
    """
    if "://" in identifier and _is_valid_iri(identifier):
        return identifier
    if is_curie(identifier):
        prefix, _, local = identifier.partition(":")
        if prefix == "biolink":
            return BIOLINK_VOCAB + quote(local, safe=_SAFE_LOCAL)
        if prefix == GRAPHWRIGHT[:-1]:
            return GRAPHWRIGHT_VOCAB + quote(local, safe="")
        known = curie_to_uri(identifier)
        if known is not None and _is_valid_iri(known):
            return known
        return f"{BIOREGISTRY}{prefix}:{quote(local, safe=_SAFE_LOCAL)}"
    return GRAPHWRIGHT_NODE + quote(identifier, safe="")


def _is_valid_iri(text: str) -> bool:
    try:
        ox.NamedNode(text)
    except ValueError:
        return False
    return True


class _Terms:
    """IRIs made once per conversion: a node's IRI is needed for each of its links."""

    def __init__(self) -> None:
        self.iri = cache(lambda identifier: ox.NamedNode(iri_for(identifier)))
        self.property = cache(_property_iri)


def _property_iri(name: str) -> ox.NamedNode:
    return ox.NamedNode(
        iri_for(name) if is_curie(name) else GRAPHWRIGHT_VOCAB + quote(name, safe="")
    )


# -- triples ---------------------------------------------------------------------------------


def triples(graph: dict[str, Any]) -> list[Triple]:
    """The graph as RDF triples, each once, in the order nodes and links come."""
    terms = _Terms()
    found: dict[Triple, None] = {}
    for node in graph["nodes"]:
        found.update(dict.fromkeys(_node_triples(node, terms)))
    for position, link in enumerate(graph["links"]):
        found.update(dict.fromkeys(_link_triples(link, position, terms)))
    return list(found)


def _node_triples(node: dict[str, Any], terms: _Terms) -> Iterator[Triple]:
    subject = terms.iri(node["id"])
    categories, _ = node_categories(node)
    for category in categories or ():
        yield (subject, _TYPE, terms.iri(category))
    if isinstance(node.get("name"), str):
        yield (subject, _LABEL, ox.Literal(node["name"]))
    for key, value in node.items():
        if key not in ("id", "name", "category"):
            yield from _property_triples(subject, terms.property(key), value)


def _link_triples(link: dict[str, Any], position: int, terms: _Terms) -> Iterator[Triple]:
    subject = terms.iri(link["source"])
    target = terms.iri(link["target"])
    predicate = terms.iri(link_predicate(link)[0])
    statement = ox.BlankNode(f"link{position}")
    yield (subject, predicate, target)
    yield (statement, _TYPE, _STATEMENT)
    yield (statement, _SUBJECT, subject)
    yield (statement, _PREDICATE, predicate)
    yield (statement, _OBJECT, target)
    if isinstance(link.get("label"), str):
        yield (statement, _LABEL, ox.Literal(link["label"]))
    for item in link["evidence"]:
        yield (statement, _PUBLICATIONS, _reference(item, terms))
    for key, value in link.items():
        if key not in ("source", "target", "label", "evidence"):
            yield from _property_triples(statement, terms.property(key), value)


def _property_triples(
    subject: ox.NamedNode | ox.BlankNode, predicate: ox.NamedNode, value: Any
) -> Iterator[Triple]:
    for item in value if isinstance(value, list) else [value]:
        if item is not None:
            yield (subject, predicate, _literal(item))


def _reference(item: Any, terms: _Terms) -> Term:
    """An evidence item: a CURIE or URL as an IRI, other text or values as literals."""
    if isinstance(item, str):
        text = item.strip()
        if is_curie(text) or ("://" in text and _is_valid_iri(text)):
            return terms.iri(text)
    return _literal(item)


def _literal(value: Any) -> ox.Literal:
    if isinstance(value, bool):
        return ox.Literal("true" if value else "false", datatype=_BOOLEAN)
    if isinstance(value, int):
        return ox.Literal(str(value), datatype=_INTEGER)
    if isinstance(value, float):
        return ox.Literal(repr(value), datatype=_DOUBLE)
    if isinstance(value, str):
        return ox.Literal(value)
    return ox.Literal(orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode(), datatype=_JSON)


# -- serialisations --------------------------------------------------------------------------


def write_ntriples(graph: dict[str, Any]) -> str:
    # pyoxigraph terms print in their N-Triples form, as its serializer writes them.
    return "".join(f"{s} {p} {o} .\n" for s, p, o in triples(graph))


def write_jsonld(graph: dict[str, Any]) -> str:
    """Compact JSON-LD: one object per subject under @graph, IRIs shortened by CONTEXT."""
    compact = cache(_compact)
    subjects: dict[str, dict[str, list[Any]]] = {}
    for subject, predicate, value_term in triples(graph):
        entry = subjects.setdefault(_term_id(subject, compact), {})
        if predicate == _TYPE:
            key, value = "@type", compact(value_term.value)
        else:
            key, value = compact(predicate.value), _jsonld_value(value_term, compact)
        entry.setdefault(key, []).append(value)
    objects = [
        {"@id": subject, **{key: v[0] if len(v) == 1 else v for key, v in entry.items()}}
        for subject, entry in subjects.items()
    ]
    document = {"@context": CONTEXT, "@graph": objects}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def _term_id(term: Term, compact: Callable[[str], str]) -> str:
    return f"_:{term.value}" if isinstance(term, ox.BlankNode) else compact(term.value)


def _compact(iri: str) -> str:
    for prefix, namespace in CONTEXT.items():
        if iri.startswith(namespace) and not iri[len(namespace) :].startswith("//"):
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def _jsonld_value(term: Term, compact: Callable[[str], str]) -> Any:
    if isinstance(term, ox.Literal):
        if term.datatype == _STRING:
            return term.value
        return {"@value": term.value, "@type": compact(term.datatype.value)}
    return {"@id": _term_id(term, compact)}
