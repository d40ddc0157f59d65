"""Write a bibliography (the citation dicts of `core.bibliography`) as BibTeX, RIS or CSV.

Citations carry `pmid`, `title`, `authors` (a list or a string), `journal`, `year`, `doi`,
`abstract` and `url`, any of which may be missing.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from graphwright.core.bibliography import citation_pmid, normalize_doi
from graphwright.core.ids import normalize_pmid
from graphwright.errors import InvalidInput

Citation = dict[str, Any]
CSV_COLUMNS = ("pmid", "doi", "title", "authors", "journal", "year", "url")
_BIBTEX_SPECIAL = re.compile(r"([&%$#_{}])")
_KEY_CHARS = re.compile(r"[^A-Za-z0-9]+")


def authors(citation: Citation) -> list[str]:
    value = citation.get("authors")
    if isinstance(value, list):
        return [str(a).strip() for a in value if str(a).strip()]
    if isinstance(value, str) and value.strip():
        return [a.strip() for a in re.split(r";|,(?=\s*[A-Z][a-z]+\s+[A-Z])", value) if a.strip()]
    return []


def pubmed_url(citation: Citation) -> str | None:
    pmid = citation_pmid(citation)
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid.split(':', 1)[1]}/" if pmid else None


def doi_url(citation: Citation) -> str | None:
    doi = normalize_doi(citation.get("doi"))
    return f"https://doi.org/{doi}" if doi else None


def read_citations(text: str) -> list[Citation] | None:
    """The citations of a bibliography artifact's JSON text (its objects); None when the text is
    not JSON."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def citation_row(citation: Citation) -> dict[str, Any]:
    """The citation as a row of a bibliography table: short authors, bare PMID, links."""
    names = authors(citation)
    pmid = normalize_pmid(citation.get("pmid"), bare_digits=True)
    return {
        "title": str(citation.get("title") or ""),
        "authors": ", ".join(names[:3]) + (" et al." if len(names) > 3 else ""),
        "journal": str(citation.get("journal") or ""),
        "year": str(citation.get("year") or ""),
        "pmid": pmid.removeprefix("PMID:") if pmid else "",
        "pubmed": pubmed_url(citation) or "",
        "doi": doi_url(citation) or "",
        "synthetic": bool(citation.get("synthetic")),
    }


def pmid_links(values: Any) -> list[tuple[str, str]]:
    """(text, url) for each piece of evidence: PMIDs link to PubMed, URLs to themselves."""
    found = []
    for value in values if isinstance(values, list) else [values]:
        pmid = normalize_pmid(value, bare_digits=True)
        if pmid:
            number = pmid.split(":", 1)[1]
            found.append((pmid, f"https://pubmed.ncbi.nlm.nih.gov/{number}/"))
        elif isinstance(value, str) and value.startswith(("https://", "http://")):
            found.append((value, value))
    return found


def _text(citation: Citation, key: str) -> str:
    value = citation.get(key)
    return "" if value is None else " ".join(str(value).split())


def _bibtex_value(value: str) -> str:
    return _BIBTEX_SPECIAL.sub(r"\\\1", value)


def _bibtex_key(citation: Citation, index: int, used: set[str]) -> str:
    pmid = citation_pmid(citation)
    if pmid:
        base = "pmid" + pmid.split(":", 1)[1]
    else:
        first = authors(citation)[:1]
        surname = _KEY_CHARS.sub("", first[0].split()[0]) if first else "ref"
        base = f"{surname.lower() or 'ref'}{_text(citation, 'year') or index + 1}"
    key, suffix = base, 1
    while key in used:
        suffix += 1
        key = f"{base}_{suffix}"
    used.add(key)
    return key


def to_bibtex(citations: Sequence[Citation]) -> str:
    used: set[str] = set()
    entries = []
    for index, citation in enumerate(citations):
        fields = {
            "title": _text(citation, "title"),
            "author": " and ".join(authors(citation)),
            "journal": _text(citation, "journal"),
            "year": _text(citation, "year"),
            "doi": normalize_doi(citation.get("doi")) or "",
            "pmid": (citation_pmid(citation) or "").removeprefix("PMID:"),
            "url": _text(citation, "url") or pubmed_url(citation) or "",
        }
        body = ",\n".join(
            f"  {name} = {{{_bibtex_value(value)}}}" for name, value in fields.items() if value
        )
        entries.append(f"@article{{{_bibtex_key(citation, index, used)},\n{body}\n}}\n")
    return "\n".join(entries)


def to_ris(citations: Sequence[Citation]) -> str:
    lines: list[str] = []
    for citation in citations:
        lines.append("TY  - JOUR")
        lines += [f"AU  - {name}" for name in authors(citation)]
        for tag, value in (
            ("TI", _text(citation, "title")),
            ("JO", _text(citation, "journal")),
            ("PY", _text(citation, "year")),
            ("DO", normalize_doi(citation.get("doi")) or ""),
            ("AN", (citation_pmid(citation) or "").removeprefix("PMID:")),
            ("UR", _text(citation, "url") or pubmed_url(citation) or ""),
            ("AB", _text(citation, "abstract")),
        ):
            if value:
                lines.append(f"{tag}  - {value}")
        lines.append("ER  - ")
        lines.append("")
    return "\r\n".join(lines)


def to_csv(citations: Sequence[Citation]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for citation in citations:
        writer.writerow(
            _cell(value)
            for value in [
                (citation_pmid(citation) or "").removeprefix("PMID:"),
                normalize_doi(citation.get("doi")) or "",
                _text(citation, "title"),
                "; ".join(authors(citation)),
                _text(citation, "journal"),
                _text(citation, "year"),
                _text(citation, "url") or pubmed_url(citation) or "",
            ]
        )
    return out.getvalue()


def _cell(value: str) -> str:
    """A spreadsheet must not run a title that starts like a formula."""
    return "'" + value if value[:1] in ("=", "+", "-", "@") else value


WRITERS: dict[str, tuple[Callable[[Sequence[Citation]], str], str, str]] = {
    "bibtex": (to_bibtex, "bib", "application/x-bibtex"),
    "ris": (to_ris, "ris", "application/x-research-info-systems"),
    "csv": (to_csv, "csv", "text/csv"),
}


def write_citations(citations: Sequence[Citation], fmt: str) -> str:
    try:
        writer = WRITERS[fmt][0]
    except KeyError:
        raise InvalidInput(
            f"Unknown bibliography format '{fmt}'; choose one of: {', '.join(WRITERS)}"
        ) from None
    return writer(citations)
