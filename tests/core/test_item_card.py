"""Graph items as a person reads them: resolver links from Bioregistry, PubMed evidence links,
provenance in words."""

from __future__ import annotations

from graphwright.core.item_card import (
    Link,
    ToolOrigin,
    all_provenance_ids,
    edge_card,
    node_card,
    provenance_words,
    resolver_link,
)


def test_identifiers_link_to_bioregistry_and_unknown_prefixes_stay_text() -> None:
    assert resolver_link("NCBIGene:7157") == Link(
        "NCBIGene:7157", "https://bioregistry.io/ncbigene:7157"
    )
    assert resolver_link("MONDO:0007254").url == "https://bioregistry.io/mondo:0007254"
    assert resolver_link("NOTAPREFIX:1") == Link("NOTAPREFIX:1", None)
    assert resolver_link("no-curie") == Link("no-curie", None)
    assert resolver_link("https://example.org/x") == Link("https://example.org/x", None)


def test_provenance_in_words_names_the_tool_and_the_turn() -> None:
    origins = {"cmd-381fd75b-1": ToolOrigin("kg.queryNeighbors", 2, "/kg.queryNeighbors  TP53")}
    words = provenance_words(
        ["cmd-381fd75b-1", "import-72f22084", "__existing__", "call_gone", "import-1"], origins
    )
    assert words == [
        "found by kg.queryNeighbors in turn 2 (“/kg.queryNeighbors TP53”)",
        "imported into this graph",
        "from tool result call_gone (no longer in this conversation)",
    ]
    long = {"c": ToolOrigin("literature.searchPubMed", 1, "x" * 200)}
    (sentence,) = provenance_words(["c"], long)
    assert sentence.endswith("x…”)") and len(sentence) < 120


def test_a_node_card_reads_ids_evidence_and_provenance_from_the_data() -> None:
    node = {
        "id": "NCBIGene:7157",
        "label": "TP53",
        "type": "Gene",
        "data": {
            "equivalent_ids": ["NCBIGene:7157", "HGNC:11998"],
            "same_as": "UniProtKB:P04637",
            "description": "tumor protein p53",
            "synonyms": ["p53"],
            "evidence": ["PMID:1978757", "pmid:1978757", "https://example.org/paper"],
            "provenance": ["cmd-1-1"],
        },
    }
    card = node_card(node, {"cmd-1-1": ToolOrigin("kg.queryNeighbors", 1, "TP53")})
    assert card.identifier.url == "https://bioregistry.io/ncbigene:7157"
    assert [link.text for link in card.equivalents] == ["HGNC:11998", "UniProtKB:P04637"]
    assert card.equivalents[0].url == "https://bioregistry.io/hgnc:11998"
    assert card.description == "tumor protein p53" and card.synonyms == ["p53"]
    assert card.evidence == [
        Link("PMID:1978757", "https://pubmed.ncbi.nlm.nih.gov/1978757/"),
        Link("https://example.org/paper", "https://example.org/paper"),
    ]
    assert card.provenance == ["found by kg.queryNeighbors in turn 1 (“TP53”)"]
    bare = node_card({"id": "X:1", "label": "x", "type": "Gene", "data": None}, {})
    assert bare.equivalents == [] and bare.evidence == [] and bare.provenance == []


def test_an_edge_card_links_a_curie_predicate_and_its_evidence() -> None:
    edge = {"label": "RO:0002436", "data": {"evidence": ["PMID:12345"], "provenance": ["x"]}}
    card = edge_card(edge, {})
    assert card.identifier.url == "https://bioregistry.io/ro:0002436"
    assert card.evidence[0].url == "https://pubmed.ncbi.nlm.nih.gov/12345/"
    assert edge_card({"label": "interacts with", "data": {}}, {}).identifier == Link(
        "interacts with", None
    )
    items = [{"data": {"provenance": ["a", "b"]}}, {"data": {"provenance": ["b", "c"]}}, {}]
    assert all_provenance_ids(items) == ["a", "b", "c"]
