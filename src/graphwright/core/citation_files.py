"""Bibliographies as files: BibTeX, RIS, CSV or JSON, chosen by the file's extension.

A citation is the seeds' dict: `title`, `authors` (a list), `journal`, `year`, `volume`,
`issue`, `pages`, `doi`, `pmid`, `url`, `abstract`; any may be missing.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from graphwright.core.graph import GraphFormatError

Citation = dict[str, Any]
CSV_COLUMNS = ("title", "authors", "journal", "year", "volume", "issue", "pages", "doi", "pmid",
               "url")  # fmt: skip
RIS_TAGS = (("TI", "title"), ("JO", "journal"), ("PY", "year"), ("VL", "volume"), ("IS", "issue"),
            ("SP", "pages"), ("DO", "doi"), ("UR", "url"), ("AB", "abstract"))  # fmt: skip
BIBTEX_FIELDS = ("title", "journal", "year", "volume", "number", "pages", "doi", "url")


def _text(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split())


def _authors(citation: Citation) -> list[str]:
    authors = citation.get("authors") or []
    return [_text(a) for a in authors] if isinstance(authors, list) else [_text(authors)]


def to_json(citations: Sequence[Citation]) -> str:
    return orjson.dumps(list(citations), option=orjson.OPT_INDENT_2).decode() + "\n"


def to_csv(citations: Sequence[Citation]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for citation in citations:
        row = {name: _text(citation.get(name)) for name in CSV_COLUMNS}
        row["authors"] = "; ".join(_authors(citation))
        writer.writerow(row)
    return out.getvalue()


def to_ris(citations: Sequence[Citation]) -> str:
    lines: list[str] = []
    for citation in citations:
        lines.append("TY  - JOUR")
        lines += [f"AU  - {author}" for author in _authors(citation)]
        for tag, name in RIS_TAGS:
            if citation.get(name):
                lines.append(f"{tag}  - {_text(citation[name])}")
        if citation.get("pmid"):
            lines.append(f"AN  - PMID:{_text(citation['pmid'])}")
        lines.append("ER  - ")
        lines.append("")
    return "\n".join(lines)


def _bibtex_value(value: str) -> str:
    # Braces would unbalance the entry; a backslash would start a command.
    return value.replace("\\", "").replace("{", "(").replace("}", ")")


def _bibtex_key(citation: Citation, taken: set[str]) -> str:
    authors = _authors(citation)
    surname = re.sub(r"[^A-Za-z]", "", authors[0].split()[0]) if authors else ""
    base = f"{surname or 'ref'}{_text(citation.get('year'))}"
    if citation.get("pmid"):
        base = f"pmid{_text(citation['pmid'])}"
    key, suffix = base, 1
    while key in taken:
        suffix += 1
        key = f"{base}{chr(ord('a') + suffix - 2)}" if suffix <= 27 else f"{base}_{suffix}"
    taken.add(key)
    return key


def to_bibtex(citations: Sequence[Citation]) -> str:
    entries, taken = [], set[str]()
    for citation in citations:
        fields = {**citation, "number": citation.get("issue")}
        lines = [f"@article{{{_bibtex_key(citation, taken)},"]
        if _authors(citation):
            lines.append(f"  author = {{{_bibtex_value(' and '.join(_authors(citation)))}}},")
        for name in BIBTEX_FIELDS:
            if fields.get(name):
                lines.append(f"  {name} = {{{_bibtex_value(_text(fields[name]))}}},")
        if citation.get("pmid"):
            lines.append(f"  pmid = {{{_text(citation['pmid'])}}},")
        lines.append("}")
        entries.append("\n".join(lines))
    return "\n\n".join(entries) + "\n"


WRITERS: dict[str, Callable[[Sequence[Citation]], str]] = {
    ".bib": to_bibtex,
    ".bibtex": to_bibtex,
    ".ris": to_ris,
    ".csv": to_csv,
    ".json": to_json,
}


def write_citations(citations: Sequence[Citation], file_name: str) -> str:
    """The bibliography in the format `file_name`'s extension names."""
    suffix = "." + file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""
    writer = WRITERS.get(suffix)
    if writer is None:
        raise GraphFormatError(
            f"cannot tell the bibliography format from {file_name!r}; "
            f"use one of {', '.join(WRITERS)}"
        )
    return writer(citations)
