"""CURIE normalisation and the prefix priority that picks a merged node's id."""

from __future__ import annotations

import pytest

from graphwright.core.ids import (
    curie_to_uri,
    normalize_curie,
    normalize_pmid,
    pick_leader,
    prefix_priority,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ncbigene:7157", "NCBIGene:7157"),
        ("  NCBIGene:7157 ", "NCBIGene:7157"),
        ("NCBIGENE:7157", "NCBIGene:7157"),
        ("hgnc:11998", "HGNC:11998"),
        ("uniprotkb:P04637", "UniProtKB:P04637"),
        ("chembl.compound:CHEMBL25", "CHEMBL.COMPOUND:CHEMBL25"),
        ("Mondo:0007254", "MONDO:0007254"),
        ("ncbitaxon:9606", "NCBITaxon:9606"),
        ("pubchem.compound:2244", "PUBCHEM.COMPOUND:2244"),
        ("react:R-HSA-69488", "REACT:R-HSA-69488"),
        ("pmid: 11099028", "PMID:11099028"),
        ("doi:10.1038/35042675", "doi:10.1038/35042675"),
        ("DOI:10.1016/J.CELL.2011.02.013", "doi:10.1016/j.cell.2011.02.013"),
        # synonyms from the Bioregistry
        ("EntrezGene:7157", "NCBIGene:7157"),
        ("MIM:191170", "OMIM:191170"),
        ("DrugBank:DB00331", "DRUGBANK:DB00331"),
        # URIs become CURIEs
        ("http://identifiers.org/ncbigene/7157", "NCBIGene:7157"),
        ("https://identifiers.org/NCBIGene:7157", "NCBIGene:7157"),
        # identifiers.org's older namespace/id form, where the id repeats its prefix
        ("http://identifiers.org/mondo/MONDO:0005148", "MONDO:0005148"),
        ("http://identifiers.org/efo/EFO:0000001", "EFO:0000001"),
        ("http://identifiers.org/chebi/CHEBI:15365", "CHEBI:15365"),
        ("http://purl.obolibrary.org/obo/MONDO_0005148", "MONDO:0005148"),
        ("https://www.ncbi.nlm.nih.gov/gene/7157", "NCBIGene:7157"),
        ("http://purl.uniprot.org/uniprot/P04637", "UniProtKB:P04637"),
    ],
)
def test_known_prefixes_get_their_canonical_case(raw: str, expected: str) -> None:
    assert normalize_curie(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("myLab:Thing-1", "myLab:Thing-1"),
        ("urn:uuid:5d3e", "urn:uuid:5d3e"),
        (" TP53 ", "TP53"),
        ("https://example.org/x", "https://example.org/x"),
        ("MONDO:0007254", "MONDO:0007254"),
    ],
)
def test_unknown_prefixes_and_plain_ids_are_only_trimmed(raw: str, expected: str) -> None:
    assert normalize_curie(raw) == expected


def test_curies_expand_to_biolink_namespaces() -> None:
    assert curie_to_uri("NCBIGene:7157") == "http://identifiers.org/ncbigene/7157"
    assert curie_to_uri("mondo:0005148") == "http://purl.obolibrary.org/obo/MONDO_0005148"
    assert curie_to_uri("myLab:1") is None
    for curie in ("NCBIGene:7157", "MONDO:0005148", "CHEBI:6801", "HGNC:11998"):
        assert normalize_curie(curie_to_uri(curie) or "") == curie


def test_leader_follows_biolink_per_category_prefix_order() -> None:
    # Biolink's Gene id_prefixes: NCBIGene, ENSEMBL, HGNC, ...
    assert pick_leader(["UniProtKB:P04637", "ENSEMBL:ENSG00000141510", "HGNC:11998"]) == (
        "ENSEMBL:ENSG00000141510"
    )
    assert pick_leader(["UniProtKB:P04637", "PR:P04637"], category="Protein") == (
        "UniProtKB:P04637"
    )
    assert pick_leader(["MESH:D001943", "OMIM:114480", "MONDO:0007254", "HP:0003002"]) == (
        "MONDO:0007254"
    )
    assert pick_leader(["PUBCHEM.COMPOUND:4091", "DRUGBANK:DB00331", "CHEBI:6801"]) == (
        "CHEBI:6801"
    )
    assert pick_leader(["HGNC:11998", "NCBIGene:7157"]) == "NCBIGene:7157"
    assert pick_leader(["DRUGBANK:DB00997", "CHEBI:28748"]) == "CHEBI:28748"
    assert pick_leader(["UMLS:C0006142", "MESH:D001943", "MONDO:0007254"]) == "MONDO:0007254"
    assert pick_leader(["zz:1", "MESH:D001943"]) == "MESH:D001943"
    assert pick_leader(["lab:b", "lab:a"]) == "lab:a"
    assert prefix_priority().index("NCBIGene") < prefix_priority().index("HGNC")


def test_leader_does_not_depend_on_input_order() -> None:
    ids = ["HGNC:11998", "ENSEMBL:ENSG00000141510", "NCBIGene:7157", "UniProtKB:P04637"]
    assert {pick_leader(ids), pick_leader(list(reversed(ids)))} == {"NCBIGene:7157"}


@pytest.mark.parametrize(
    ("value", "bare_digits", "expected"),
    [
        ("PMID:123", False, "PMID:123"),
        ("pmid:123", False, "PMID:123"),
        ("PMID: 123", False, "PMID:123"),
        ("https://pubmed.ncbi.nlm.nih.gov/123/", False, "PMID:123"),
        ("123", False, None),
        ("123", True, "PMID:123"),
        (123, True, "PMID:123"),
        (123, False, None),
        ("DOI:10.1/x", True, None),
        (True, True, None),
    ],
)
def test_pmid_forms(value: object, bare_digits: bool, expected: str | None) -> None:
    assert normalize_pmid(value, bare_digits=bare_digits) == expected
