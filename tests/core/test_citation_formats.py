"""Bibliography export: BibTeX, RIS and CSV from citation dicts."""

from __future__ import annotations

import csv
import io

import pytest

from graphwright.core.citation_formats import to_bibtex, to_csv, to_ris, write_citations
from graphwright.errors import InvalidInput

CITATIONS = [
    {
        "pmid": "1000001",
        "title": "p53 & metabolic {disease}",
        "authors": ["Smith J", "Doe A"],
        "journal": "J Synth",
        "year": "2021",
        "doi": "https://doi.org/10.1000/XYZ",
    },
    {"title": "=HYPERLINK(1)", "authors": "Lee K; Park S", "year": 2020},
    {"title": "Same key", "authors": "Lee K", "year": 2020},
]


def test_bibtex_escapes_and_keys_are_unique() -> None:
    text = to_bibtex(CITATIONS)
    assert text.count("@article{") == 3
    assert "@article{pmid1000001," in text
    assert r"title = {p53 \& metabolic \{disease\}}" in text
    assert "author = {Smith J and Doe A}" in text
    assert "doi = {10.1000/xyz}" in text
    assert "@article{lee2020," in text and "@article{lee2020_2," in text


def test_ris_has_one_record_per_citation_with_authors() -> None:
    text = to_ris(CITATIONS)
    assert text.count("TY  - JOUR") == 3 and text.count("ER  - ") == 3
    assert "AU  - Smith J\r\nAU  - Doe A" in text
    assert "AU  - Lee K\r\nAU  - Park S" in text
    assert "UR  - https://pubmed.ncbi.nlm.nih.gov/1000001/" in text


def test_csv_round_trips_and_defuses_formulas() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(CITATIONS))))
    assert rows[0]["pmid"] == "1000001" and rows[0]["authors"] == "Smith J; Doe A"
    assert rows[1]["title"] == "'=HYPERLINK(1)"


def test_unknown_format_is_named() -> None:
    with pytest.raises(InvalidInput, match="bibtex, ris, csv"):
        write_citations(CITATIONS, "endnote")
