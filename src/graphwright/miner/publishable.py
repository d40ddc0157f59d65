"""The document a candidate publishes, and what stays beside it.

A candidate is seed 001's object: JSON-LD plus bookkeeping (`linkedAssets`, `trustSignals`,
`provenance`, `domainTags`, ...). The bookkeeping is not knowledge to publish: it goes into the
publication request's details and so into the asset's metadata. The provenance's sources are
published, as PROV-O: each source that names a resource (a UAL, a CURIE such as PMID:123, a
DOI, a URL) becomes `prov:wasDerivedFrom <its IRI>` on each top-level object. Its time and the
model's confidence stay in the details (the knowledge base records when it published).

This document is what validation checks, what a person approves and what is published: the
same bytes after canonicalisation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyoxigraph as ox

from graphwright.core.ids import curie_to_uri
from graphwright.errors import InvalidInput
from graphwright.knowledge.ual import Ual

# Seed 001's candidate wraps the JSON-LD with bookkeeping that is not knowledge to publish.
BOOKKEEPING = (
    "linkedAssets",
    "trustSignals",
    "provenance",
    "domainTags",
    "validation",
    "properties",
    "publication",
)
PROV_DERIVED_FROM = "http://www.w3.org/ns/prov#wasDerivedFrom"


def publishable_document(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-LD a candidate publishes: its bookkeeping dropped, its `properties` lifted to
    the top level, and its provenance's sources as `prov:wasDerivedFrom`."""
    document = {key: value for key, value in candidate.items() if key not in BOOKKEEPING}
    properties = candidate.get("properties")
    if isinstance(properties, Mapping):
        document = {**properties, **document}
    sources = source_iris(candidate)
    if not sources:
        return document
    graph = document.get("@graph")
    if isinstance(graph, list):
        return {**document, "@graph": [_derived(node, sources) for node in graph]}
    return _derived(document, sources)


def bookkeeping(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """What the candidate keeps beside its document: the request's details."""
    return {key: candidate[key] for key in BOOKKEEPING if key in candidate}


def _derived(node: Any, sources: list[str]) -> Any:
    if not isinstance(node, dict):
        return node
    given = node.get(PROV_DERIVED_FROM)
    listed = given if isinstance(given, list) else [given] if given is not None else []
    known = {item.get("@id") if isinstance(item, Mapping) else item for item in listed}
    extra = [{"@id": iri} for iri in sources if iri not in known]
    return {**node, PROV_DERIVED_FROM: [*listed, *extra]} if extra else node


def source_iris(candidate: Mapping[str, Any]) -> list[str]:
    """The IRIs of the resources the candidate's `provenance.sources` name, in order, without
    repeats; a source that names no resource (a note) stays in the details only."""
    provenance = candidate.get("provenance")
    listed = provenance.get("sources") if isinstance(provenance, Mapping) else None
    iris: list[str] = []
    for item in listed if isinstance(listed, list) else []:
        ref = item.get("ref") or item.get("url") if isinstance(item, Mapping) else item
        iri = source_iri(ref) if isinstance(ref, str) else None
        if iri is not None and iri not in iris:
            iris.append(iri)
    return iris


def source_iri(reference: str) -> str | None:
    """The IRI a source reference names: a UAL, an absolute http(s) IRI, a DOI, or a CURIE with
    a known prefix (PMID:123 through Biolink's prefix map); None for anything else."""
    text = reference.strip()
    lowered = text.lower()
    if lowered.startswith("did:dkg:"):
        try:
            return str(Ual.parse(text))
        except InvalidInput:
            return None
    if lowered.startswith(("http://", "https://")):
        return _iri(text)
    if lowered.startswith("10.") and "/" in text:
        text = f"doi:{text}"
    if ":" not in text or " " in text:
        return None
    try:
        expanded = curie_to_uri(text)
    except ValueError:
        return None
    return _iri(expanded) if expanded else None


def _iri(text: str) -> str | None:
    try:
        return ox.NamedNode(text).value
    except ValueError:
        return None
