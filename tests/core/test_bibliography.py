"""CitationSet: de-duplication by PMID, then DOI, then title + year, and field merging."""

from __future__ import annotations

import copy

import pytest

from graphwright.core.bibliography import CitationSet, normalize_doi, title_key
from graphwright.errors import InvalidInput

SURFING = {
    "pmid": "11099028",
    "title": "Surfing the p53 network.",
    "authors": ["Vogelstein B", "Lane D", "Levine AJ"],
    "journal": "Nature",
    "year": "2000",
    "doi": "10.1038/35042675",
}


def test_same_pmid_in_any_spelling_is_one_citation_with_fields_merged() -> None:
    citations = CitationSet()
    assert citations.add([{"pmid": "11099028", "title": "Surfing the p53 network."}], "c1") == 1
    assert citations.add([{**SURFING, "pmid": "PMID:11099028", "title": "other"}], "c2") == 0
    assert citations.add([{"pmid": 11099028, "abstract": "text"}], "c3") == 0
    [entry] = citations.to_list()
    assert entry["title"] == "Surfing the p53 network."
    assert entry["journal"] == "Nature"
    assert entry["authors"] == ["Vogelstein B", "Lane D", "Levine AJ"]
    assert entry["abstract"] == "text"
    assert entry["provenance"] == ["c1", "c2", "c3"]


def test_doi_matches_without_resolver_prefix_or_case() -> None:
    citations = CitationSet()
    citations.add([{"title": "A", "doi": "10.5555/Sample.1", "synthetic": True}])
    citations.add([{"title": "A, again", "doi": "https://doi.org/10.5555/SAMPLE.1", "year": 2024}])
    [entry] = citations.to_list()
    assert entry["title"] == "A"
    assert entry["year"] == 2024
    assert entry["provenance"] == ["result-1", "result-2"]


def test_title_and_year_match_after_case_and_punctuation_are_collapsed() -> None:
    citations = CitationSet()
    citations.add([{"title": "MDM2 and p53 -- a feedback loop", "year": 2023, "synthetic": True}])
    citations.add([{"title": "mdm2 AND p53: a  feedback loop.", "year": "2023"}])
    citations.add([{"title": "MDM2 and p53 -- a feedback loop", "year": 2021}])
    assert len(citations) == 2


def test_different_pmids_stay_apart_even_with_the_same_title() -> None:
    citations = CitationSet()
    citations.add([{"pmid": "1", "title": "Erratum", "year": 2020}])
    citations.add([{"pmid": "2", "title": "Erratum", "year": 2020}])
    citations.add([{"doi": "10.5555/a", "title": "Same"}, {"doi": "10.5555/b", "title": "Same"}])
    assert len(citations) == 4


def test_authors_are_kept_from_the_first_non_empty_value() -> None:
    citations = CitationSet()
    citations.add([{"pmid": "5", "authors": ""}, {"pmid": "5", "authors": "Lane DP"}])
    citations.add([{"pmid": "5", "authors": ["Someone Else"]}])
    assert citations.to_list()[0]["authors"] == "Lane DP"


def test_inputs_are_not_modified_and_to_list_is_a_copy() -> None:
    given = [copy.deepcopy(SURFING)]
    citations = CitationSet()
    citations.add(given)
    citations.add([{**SURFING, "url": "https://pubmed.ncbi.nlm.nih.gov/11099028/"}])
    assert given == [SURFING]
    listed = citations.to_list()
    listed[0]["authors"].append("X")
    assert citations.to_list()[0]["authors"] == SURFING["authors"]


def test_a_citation_that_is_not_an_object_is_rejected_before_anything_is_added() -> None:
    citations = CitationSet()
    with pytest.raises(InvalidInput, match="citation 1 must be an object"):
        citations.add([SURFING, "11099028"])
    assert len(citations) == 0


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("10.1038/35042675", "10.1038/35042675"),
        ("https://doi.org/10.1038/35042675", "10.1038/35042675"),
        ("http://dx.doi.org/10.1016/J.CELL.2011.02.013", "10.1016/j.cell.2011.02.013"),
        ("doi: 10.1038/X", "10.1038/x"),
        ("", None),
        (None, None),
    ],
)
def test_normalize_doi(raw: object, expected: str | None) -> None:
    assert normalize_doi(raw) == expected


def test_title_key() -> None:
    assert title_key({"title": "Cancer. p53, guardian of the genome.", "year": "1992 Jul"}) == (
        "cancer p53 guardian of the genome",
        "1992",
    )
    assert title_key({"title": " -- "}) is None


def test_a_carried_bibliography_keeps_its_provenance() -> None:
    earlier = CitationSet()
    earlier.add([SURFING], "call-1")
    carried = CitationSet()
    carried.add(earlier.to_list(), "previous-turn")
    carried.add([{"pmid": "11099028"}], "call-9")
    assert carried.to_list()[0]["provenance"] == ["call-1", "previous-turn", "call-9"]
