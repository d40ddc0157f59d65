"""The DKG v8 triple-store layout as SPARQL: the update that publishes a collection and the
queries that read metadata back. Any SPARQL 1.1 store (embedded Oxigraph, a server) runs them.

A publish is one SPARQL update, so one transaction. It inserts only if no collection holds its
number yet, so two servers sharing one store can never both take the same number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import pyoxigraph as ox

from graphwright.knowledge import vocab as v
from graphwright.knowledge.jsonld import AssetDraft, Triple
from graphwright.knowledge.ual import Ual

PREFIXES = f"PREFIX dkg: <{v.DKG}>\nPREFIX gw: <{v.GRAPHWRIGHT}>\nPREFIX prov: <{v.PROV}>\n"


@dataclass(frozen=True)
class CollectionRecord:
    """Who published a collection, when, and on whose approval: its metadata-graph facts."""

    ual: Ual
    publisher_address: str
    block: int
    tx: str
    time: datetime
    approved_by: str | None
    request_id: str | None
    revision_of: Ual | None
    synthetic: bool


def _nt(triple: Triple) -> str:
    subject, predicate, obj = triple
    return f"{subject} {predicate} {obj} ."


def _iri(text: str | Ual) -> str:
    return str(ox.NamedNode(str(text)))


def _lit(value: str | int | bool | datetime) -> str:
    if isinstance(value, datetime):
        text = value.isoformat().replace("+00:00", "Z")
        return str(ox.Literal(text, datatype=ox.NamedNode(v.XSD + "dateTime")))
    if isinstance(value, bool):
        return str(ox.Literal(str(value).lower(), datatype=ox.NamedNode(v.XSD + "boolean")))
    if isinstance(value, int):
        return str(ox.Literal(str(value), datatype=ox.NamedNode(v.XSD + "integer")))
    return str(ox.Literal(value))


def metadata_lines(record: CollectionRecord, assets: Sequence[Ual]) -> list[str]:
    kc = _iri(record.ual)
    lines = [f"{kc} <{v.COLLECTION_NUMBER}> {_lit(record.ual.kc_id)} ."]
    for asset in assets:
        lines += [
            f"{kc} <{v.HAS_KNOWLEDGE_ASSET}> {_iri(asset)} .",
            f"{kc} <{v.HAS_NAMED_GRAPH}> {_iri(asset.public_graph)} .",
            f"{_iri(asset)} <{v.STATES}> {_lit(f'{asset}:0')} .",
        ]
    lines += [
        f"{kc} <{v.PUBLISHED_BY}> {_iri(v.PUBLISHER_KEY + record.publisher_address.lower())} .",
        # A DKG node writes block and transaction as plain literals.
        f"{kc} <{v.PUBLISHED_AT_BLOCK}> {_lit(str(record.block))} .",
        f"{kc} <{v.PUBLISH_TX}> {_lit(record.tx)} .",
        f"{kc} <{v.PUBLISH_TIME}> {_lit(record.time)} .",
        f"{kc} <{v.BLOCK_TIME}> {_lit(record.time)} .",
    ]
    if record.approved_by:
        lines.append(f"{kc} <{v.APPROVED_BY}> {_lit(record.approved_by)} .")
    if record.request_id:
        lines.append(f"{kc} <{v.PUBLICATION_REQUEST}> {_lit(record.request_id)} .")
    if record.revision_of:
        lines.append(f"{kc} <{v.WAS_REVISION_OF}> {_iri(record.revision_of)} .")
    if record.synthetic:
        lines.append(f"{kc} <{v.SYNTHETIC}> {_lit(True)} .")
    return lines


def publish_update(record: CollectionRecord, drafts: Sequence[AssetDraft]) -> str:
    """One SPARQL update that writes the collection, or nothing if its number is taken."""
    assets = [record.ual.asset(number) for number in range(1, len(drafts) + 1)]
    blocks = []
    for asset, draft in zip(assets, drafts, strict=True):
        body = "\n".join(_nt(triple) for triple in draft.public)
        blocks.append(f"GRAPH {_iri(asset.public_graph)} {{\n{body}\n}}")
    current = "\n".join(
        f"<{v.CURRENT_GRAPH}> <{v.HAS_NAMED_GRAPH}> {_iri(a.public_graph)} ." for a in assets
    )
    metadata = "\n".join(metadata_lines(record, assets))
    return (
        f"INSERT {{\n{chr(10).join(blocks)}\nGRAPH <{v.CURRENT_GRAPH}> {{\n{current}\n}}\n"
        f"GRAPH <{v.METADATA_GRAPH}> {{\n{metadata}\n}}\n}}\n"
        f"WHERE {{ FILTER NOT EXISTS {{ GRAPH <{v.METADATA_GRAPH}> "
        f"{{ {_iri(record.ual)} <{v.PUBLISH_TX}> ?taken }} }} }}"
    )


def remove_update(collections: Sequence[Ual]) -> str:
    """One SPARQL update (so one transaction) that removes whole collections: their assets'
    public graphs, their entries in the current graph, and their metadata. Removing a
    collection that is not there removes nothing, so the update can be run again."""
    values = f"VALUES ?kc {{ {' '.join(_iri(c) for c in collections)} }}"
    meta = f"GRAPH <{v.METADATA_GRAPH}>"
    graphs = f"{values} {meta} {{ ?kc <{v.HAS_NAMED_GRAPH}> ?g }}"
    current = f"GRAPH <{v.CURRENT_GRAPH}> {{ ?c <{v.HAS_NAMED_GRAPH}> ?g }}"
    assets = f"{meta} {{ ?kc <{v.HAS_KNOWLEDGE_ASSET}> ?ka . ?ka ?p ?o }}"
    # In this order: the first two find the graphs through the metadata the last two remove.
    return ";\n".join(
        [
            f"DELETE {{ GRAPH ?g {{ ?s ?p ?o }} }} WHERE {{ {graphs} GRAPH ?g {{ ?s ?p ?o }} }}",
            f"DELETE {{ {current} }} WHERE {{ {graphs} {current} }}",
            f"DELETE {{ {meta} {{ ?ka ?p ?o }} }} WHERE {{ {values} {assets} }}",
            f"DELETE {{ {meta} {{ ?kc ?p ?o }} }} WHERE {{ {values} {meta} {{ ?kc ?p ?o }} }}",
        ]
    )


def published_query(ual: Ual, tx: str) -> str:
    return f"ASK {{ GRAPH <{v.METADATA_GRAPH}> {{ {_iri(ual)} <{v.PUBLISH_TX}> {_lit(tx)} }} }}"


def request_query(request_id: str) -> str:
    """The collection a publication request produced, if any."""
    return (
        f"SELECT ?kc WHERE {{ GRAPH <{v.METADATA_GRAPH}> "
        f"{{ ?kc <{v.PUBLICATION_REQUEST}> {_lit(request_id)} }} }}"
    )


LAST_NUMBER = (
    f"SELECT (MAX(?n) AS ?last) WHERE {{ GRAPH <{v.METADATA_GRAPH}> "
    f"{{ ?kc <{v.COLLECTION_NUMBER}> ?n }} }}"
)


def metadata_query(collection: Ual) -> str:
    return f"SELECT ?p ?o WHERE {{ GRAPH <{v.METADATA_GRAPH}> {{ {_iri(collection)} ?p ?o }} }}"


def _later_states(collection: Ual) -> str:
    """The collections (?later) that revise `collection`, directly or through other revisions."""
    return f"GRAPH <{v.METADATA_GRAPH}> {{ ?later <{v.WAS_REVISION_OF}>+ {_iri(collection)} }}"


def later_states_query(collection: Ual) -> str:
    return f"SELECT (COUNT(DISTINCT ?later) AS ?n) WHERE {{ {_later_states(collection)} }}"


def later_states_list_query(collection: Ual) -> str:
    return f"SELECT DISTINCT ?later WHERE {{ {_later_states(collection)} }}"


def content_query(graphs: Iterable[str]) -> str:
    values = " ".join(_iri(graph) for graph in graphs)
    return f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ VALUES ?g {{ {values} }} GRAPH ?g {{ ?s ?p ?o }} }}"


def collections_query(*, search: str | None, offset: int, limit: int) -> str:
    """Collections, newest first, with a name and types from their first asset's subject."""
    text_filter = ""
    if search:
        needle = _lit(search.lower())
        text_filter = (
            f"FILTER EXISTS {{ GRAPH ?anyGraph {{ ?anyS ?anyP ?text }} "
            f"GRAPH <{v.METADATA_GRAPH}> {{ ?kc <{v.HAS_NAMED_GRAPH}> ?anyGraph }} "
            f"FILTER(isLiteral(?text) && CONTAINS(LCASE(STR(?text)), {needle})) }}"
        )
    return f"""{PREFIXES}
SELECT ?kc ?number ?time ?synthetic (COUNT(DISTINCT ?ka) AS ?assets) WHERE {{
  GRAPH <{v.METADATA_GRAPH}> {{
    ?kc gw:collectionNumber ?number ; dkg:hasKnowledgeAsset ?ka .
    OPTIONAL {{ ?kc dkg:publishTime ?time }}
    OPTIONAL {{ ?kc gw:synthetic ?synthetic }}
  }}
  {text_filter}
}} GROUP BY ?kc ?number ?time ?synthetic ORDER BY DESC(?number) OFFSET {offset} LIMIT {limit}"""


def labels_query(graphs: Sequence[str]) -> str:
    values = " ".join(_iri(graph) for graph in graphs)
    return f"""SELECT ?g ?name ?type WHERE {{
  VALUES ?g {{ {values} }}
  GRAPH ?g {{
    OPTIONAL {{ ?s <{v.SCHEMA}name>|<{v.RDFS}label> ?name }}
    OPTIONAL {{ ?s a ?type }}
  }}
}}"""
