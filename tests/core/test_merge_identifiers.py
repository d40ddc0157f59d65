"""Issue 32: the merge meets an entity under every spelling and every stated equivalence KG
builders publish, on both merge paths and in every input format, on real prefixes sampled over
Bioregistry's namespaces; and it still merges nothing that is not one entity."""

from __future__ import annotations

import itertools
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import bioregistry
import orjson
import pyoxigraph
import pytest

from graphwright.core.batch_merge import BatchInput, BatchMerge
from graphwright.core.formats import FORMATS, read_graph, write_graph, write_graph_pair
from graphwright.core.ids import normalize_curie
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_files import merge_files
from graphwright.core.prefix_map import namespaces

Graph = dict[str, Any]
MARK = "gw_mark"  # each input node's raw id: merging unions it, so it tells where a node went
# every 23rd of Bioregistry's namespaces with an example id (about 125), and every 4th of those
# whose ids have a banana (about 25)
SAMPLE_STEP = 23


@cache
def sample() -> list[bioregistry.Resource]:
    registry = bioregistry.read_registry()
    usable = [
        registry[key]
        for key in sorted(registry)
        if registry[key].get_example() and not registry[key].has_canonical
    ]
    with_banana = [resource for resource in usable if resource.get_banana()]
    picked = {r.prefix: r for r in [*usable[::SAMPLE_STEP], *with_banana[::4]]}
    return [picked[key] for key in sorted(picked)]


def _standard(text: str) -> str | None:
    """Bioregistry's own reading of a CURIE or URI: the oracle, independent of our code."""
    if text.startswith(("http://", "https://")):
        parsed = bioregistry.parse_iri(text)
        return None if parsed is None else bioregistry.normalize_curie(f"{parsed[0]}:{parsed[1]}")
    return bioregistry.normalize_curie(text)


def _display(resource: bioregistry.Resource) -> str:
    return f"{resource.get_preferred_prefix() or resource.prefix}:{resource.get_example()}"


def _node(raw: str, **fields: Any) -> dict[str, Any]:
    return {"id": raw, MARK: [raw], **fields}


# -- the two merge paths ------------------------------------------------------------------------


def accumulated(graphs: list[Graph]) -> dict[str, str]:
    accumulator = GraphAccumulator()
    merge_files(accumulator, [(f"result-{n}", graph) for n, graph in enumerate(graphs)])
    return _node_of(accumulator.to_graph()["nodes"])


def batch_merged(graphs: list[Graph], fmt: str) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as folder:
        inputs = []
        for number, graph in enumerate(graphs):
            nodes_text, edges_text = write_graph_pair(graph, fmt)
            nodes, edges = Path(folder) / f"{number}-nodes", Path(folder) / f"{number}-edges"
            nodes.write_text(nodes_text)
            edges.write_text(edges_text)
            inputs.append(BatchInput(f"result-{number}", fmt, nodes=nodes, edges=edges))
        with BatchMerge(inputs) as merge:
            merge.run()
            return _node_of(merge.to_graph()["nodes"])


def _node_of(nodes: list[Graph]) -> dict[str, str]:
    """Raw input id -> the merged node it ended in."""
    found = {}
    for node in nodes:
        marks = node.get(MARK, [])
        marks = [marks] if isinstance(marks, str) else marks
        for raw in [*marks, *node.get("conflicts", {}).get(MARK, [])]:
            found[raw] = node["id"]
    return found


PATHS = ["accumulator", "kgx-jsonl", "kgx-tsv"]


def merged(graphs: list[Graph], path: str) -> dict[str, str]:
    return accumulated(graphs) if path == "accumulator" else batch_merged(graphs, path)


def _apart(node_of: dict[str, str], pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(left, right) for left, right in pairs if node_of[left] != node_of[right]]


def _together(node_of: dict[str, str], pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(left, right) for left, right in pairs if node_of[left] == node_of[right]]


# -- class 1: every equivalence field ----------------------------------------------------------


def _declared_pairs() -> list[tuple[str, str]]:
    """Pairs of ids of two different sampled namespaces, declared equivalent by a source."""
    ids = [_display(resource) for resource in sample()]
    return list(zip(ids[0::2], ids[1::2], strict=False))


KGX_FIELDS = {
    "equivalent_identifiers": lambda right: [right],
    "same_as": lambda right: [right],
    "equivalent_ids": lambda right: [right],
}


def _declaring(field: str, value: Any) -> list[Graph]:
    pairs = _declared_pairs()
    left = {"nodes": [_node(a, **{field: value(b)}) for a, b in pairs], "links": []}
    right = {"nodes": [_node(b) for _, b in pairs], "links": []}
    return [left, right]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("field", sorted(KGX_FIELDS))
def test_each_kgx_equivalence_field_merges_on_both_paths(field: str, path: str) -> None:
    node_of = merged(_declaring(field, KGX_FIELDS[field]), path)
    assert _apart(node_of, _declared_pairs()) == []


@pytest.mark.parametrize("path", ["accumulator", "kgx-jsonl"])
def test_the_node_normalizers_identifier_objects_declare_equivalence(path: str) -> None:
    graphs = _declaring(
        "equivalent_identifiers", lambda right: [{"identifier": right, "label": "a name"}]
    )
    assert _apart(merged(graphs, path), _declared_pairs()) == []


@pytest.mark.parametrize("path", PATHS)
def test_xref_stays_a_link(path: str) -> None:
    node_of = merged(_declaring("xref", lambda right: [right]), path)
    assert _together(node_of, _declared_pairs()) == []


@pytest.mark.parametrize("fmt", sorted(name for name, f in FORMATS.items() if f.read))
def test_every_format_carries_the_equivalences_to_the_merge(fmt: str) -> None:
    left, right = _declaring("equivalent_identifiers", lambda other: [other])
    text = write_graph(left, fmt)
    read = read_graph(text, fmt)
    assert _apart(accumulated([read, right]), _declared_pairs()) == []


def _trapi(attributes: list[dict[str, Any]], node: str) -> dict[str, Any]:
    return {"name": node, "attributes": [{"attribute_type_id": MARK, "value": [node]}, *attributes]}


@pytest.mark.parametrize("whole", [True, False])
def test_a_trapi_same_as_attribute_declares_equivalence(whole: bool) -> None:
    pairs = _declared_pairs()
    nodes = {}
    for left, right in pairs:
        attribute: dict[str, Any] = {"attribute_type_id": "biolink:same_as", "value": [right]}
        if whole:  # as the Node Normalizer's annotation writes it
            attribute |= {"original_attribute_name": "equivalent_identifiers",
                          "value_type_id": "metatype:uriorcurie"}  # fmt: skip
        nodes[left] = _trapi([attribute], left)
    document = {"message": {"knowledge_graph": {"nodes": nodes, "edges": {}}}}
    graph = read_graph(orjson.dumps(document), "trapi")
    right = {"nodes": [_node(b) for _, b in pairs], "links": []}
    assert _apart(accumulated([graph, right]), pairs) == []


OWL, SKOS = "http://www.w3.org/2002/07/owl#", "http://www.w3.org/2004/02/skos/core#"


def _rdf_pairs() -> list[tuple[str, str]]:
    """Declared pairs as the IRIs RDF publishes (Bioregistry's, OBO PURLs first)."""
    found = []
    for left, right in _declared_pairs():
        iris = [bioregistry.get_iri(_standard(x), priority=["obofoundry", "rdf", "default"])
                for x in (left, right)]  # fmt: skip
        if all(iris) and all(map(_valid_iri, iris)):
            found.append((iris[0], iris[1]))
    return found


def _valid_iri(text: str) -> bool:
    try:
        pyoxigraph.NamedNode(text)
    except ValueError:
        return False
    return True


def _jsonld(predicate: str, pairs: list[tuple[str, str]]) -> bytes:
    items = [
        {"@id": left, "https://w3id.org/graphwright/vocab/" + MARK: left,
         predicate: {"@id": right}}
        for left, right in pairs
    ]  # fmt: skip
    return orjson.dumps({"@graph": items})


@pytest.mark.parametrize("predicate", [OWL + "sameAs", SKOS + "exactMatch"])
def test_owl_same_as_and_skos_exact_match_declare_equivalence(predicate: str) -> None:
    pairs = _rdf_pairs()
    assert len(pairs) > 30
    graph = read_graph(_jsonld(predicate, pairs), "jsonld")
    right = {"nodes": [_node(b) for _, b in pairs], "links": []}
    assert _apart(accumulated([graph, right]), pairs) == []


@pytest.mark.parametrize("match", ["broadMatch", "narrowMatch", "closeMatch", "relatedMatch"])
def test_broad_narrow_close_and_related_matches_stay_links(match: str) -> None:
    pairs = _rdf_pairs()
    graph = read_graph(_jsonld(SKOS + match, pairs), "jsonld")
    assert len(graph["links"]) == len(pairs)
    right = {"nodes": [_node(b) for _, b in pairs], "links": []}
    assert _together(accumulated([graph, right]), pairs) == []


def test_categories_that_cannot_be_one_entity_still_refuse_a_stated_equivalence() -> None:
    left = _node("NCBIGene:7157", category="Gene", equivalent_identifiers=["GO:0008150"])
    right = _node("GO:0008150", category="BiologicalProcess")
    for path in PATHS:
        node_of = merged([{"nodes": [left], "links": []}, {"nodes": [right], "links": []}], path)
        assert node_of["NCBIGene:7157"] != node_of["GO:0008150"], path


# -- class 2: one preferred prefix per namespace -----------------------------------------------


def test_no_two_preferred_prefixes_name_one_bioregistry_namespace() -> None:
    registry = bioregistry.read_registry()
    owner: dict[str, str] = {}
    clashes = []
    for space in namespaces():
        key = bioregistry.normalize_prefix(space.prefix)
        while key is not None and registry[key].has_canonical:
            key = bioregistry.normalize_prefix(registry[key].has_canonical)
        if key is None:
            continue  # a vocabulary of Translator's own, unknown to Bioregistry
        if key in owner:
            clashes.append((owner[key], space.prefix, key))
        owner[key] = space.prefix
    assert clashes == []


@pytest.mark.parametrize(
    ("spellings", "preferred"),
    [
        (["WB:WBGene00000001", "WormBase:WBGene00000001"], "WB:WBGene00000001"),
        (["RXCUI:1191", "RXNORM:1191"], "RXCUI:1191"),
        (["SNOMEDCT:22298006", "SNOMED:22298006"], "SNOMEDCT:22298006"),
        (["ORDO:558", "ORPHANET:558", "Orphanet:558", "ORDO:Orphanet_558"], "ORDO:558"),
    ],
)
def test_the_namespaces_the_issue_names_have_one_prefix(
    spellings: list[str], preferred: str
) -> None:
    assert {normalize_curie(text) for text in spellings} == {preferred}


# -- classes 2, 3 and 4: every spelling Bioregistry knows, on both paths ------------------------


def _spellings() -> list[tuple[str, str]]:
    return [(left, right) for left, right, _ in _spellings_by_kind()]


@cache
def _spellings_by_kind() -> list[tuple[str, str, str]]:
    """(id, another spelling of it, its kind) for every prefix synonym, URI prefix and banana
    of the sampled namespaces that Bioregistry's own parser reads back as that id."""
    found = []
    for resource in sample():
        left = _display(resource)
        local, standard = resource.get_example(), _standard(left)
        variants = [(f"{synonym}:{local}", "synonym") for synonym in resource.get_synonyms()]
        variants += [(uri + local, "URI") for uri in resource.get_uri_prefixes()]
        if resource.get_banana():
            peel = f"{resource.get_banana()}{resource.get_banana_peel()}"
            for prefix in (resource.prefix, left.partition(":")[0]):
                variants.append((f"{prefix}:{peel}{local}", "banana"))
        found += [
            (left, text, kind)
            for text, kind in sorted(dict(variants).items())
            if text != left and _standard(text) == standard
        ]
    return found


def test_the_sample_spans_many_namespaces_and_every_kind_of_spelling() -> None:
    found = _spellings_by_kind()
    assert len({left for left, _, _ in found}) > 100
    rights = [right for _, right, _ in found]
    for host in ("identifiers.org/", "n2t.net/", "purl.obolibrary.org/obo/", "bioregistry.io/"):
        assert sum(host in right for right in rights) >= 10, host
    assert sum(kind == "banana" for _, _, kind in found) >= 5
    assert sum(kind == "synonym" for _, _, kind in found) >= 20


@pytest.mark.parametrize("path", PATHS)
def test_every_spelling_of_an_id_meets_it_on_both_paths(path: str) -> None:
    pairs = _spellings()
    lefts = [_node(left) for left in dict.fromkeys(left for left, _ in pairs)]
    rights = [_node(right) for _, right in pairs]
    node_of = merged([{"nodes": lefts, "links": []}, {"nodes": rights, "links": []}], path)
    assert _apart(node_of, pairs) == []


@pytest.mark.parametrize("path", PATHS)
def test_one_local_id_in_two_namespaces_stays_two_entities(path: str) -> None:
    resources = sample()
    pairs = []
    for first, second in itertools.pairwise(resources):
        local = first.get_example()
        if second.is_valid_identifier(local) and first.get_uri_prefix() != second.get_uri_prefix():
            pairs.append((_display(first), f"{second.prefix}:{local}"))
    graphs = [
        {"nodes": [_node(a) for a, _ in pairs], "links": []},
        {"nodes": [_node(b) for _, b in pairs], "links": []},
    ]
    assert _together(merged(graphs, path), pairs) == []


def test_legacy_identifiers_org_uris_lose_the_doubled_prefix() -> None:
    assert normalize_curie("http://identifiers.org/obi/OBI_0400109") == "OBI:0400109"
    assert normalize_curie("http://identifiers.org/go/GO:0008150") == "GO:0008150"
    assert normalize_curie("GO:GO:0008150") == normalize_curie("go:0008150") == "GO:0008150"
