"""CURIE normalisation and the prefix priority that picks a merged node's id."""

from __future__ import annotations

import pytest

from graphwright.core.ids import (
    PREFIX_PRIORITY,
    normalize_curie,
    normalize_pmid,
    pick_leader,
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
        ("doi:10.1038/35042675", "DOI:10.1038/35042675"),
        ("DOI:10.1016/J.CELL.2011.02.013", "DOI:10.1016/j.cell.2011.02.013"),
    ],
)
def test_known_prefixes_get_their_canonical_case(raw: str, expected: str) -> None:
    assert normalize_curie(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("myLab:Thing-1", "myLab:Thing-1"),
        (" TP53 ", "TP53"),
        ("https://example.org/x", "https://example.org/x"),
        ("MONDO:0007254", "MONDO:0007254"),
    ],
)
def test_unknown_prefixes_and_plain_ids_are_only_trimmed(raw: str, expected: str) -> None:
    assert normalize_curie(raw) == expected


def test_leader_follows_the_documented_priority_then_lexicographic_order() -> None:
    assert pick_leader(["UniProtKB:P04637", "ENSEMBL:ENSG00000141510", "HGNC:11998"]) == (
        "HGNC:11998"
    )
    assert pick_leader(["HGNC:11998", "NCBIGene:7157"]) == "NCBIGene:7157"
    assert pick_leader(["DRUGBANK:DB00997", "CHEBI:28748"]) == "CHEBI:28748"
    assert pick_leader(["UMLS:C0006142", "MESH:D001943", "MONDO:0007254"]) == "MONDO:0007254"
    assert pick_leader(["zz:1", "MESH:D001943"]) == "MESH:D001943"
    assert pick_leader(["lab:b", "lab:a"]) == "lab:a"
    assert PREFIX_PRIORITY.index("NCBIGene") < PREFIX_PRIORITY.index("HGNC")


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
