"""A bibliography accumulated across tool calls, de-duplicated by PMID, then DOI, then title + year.

Citations arrive as the PubMed MCP gives them: `pmid`, `title`, `authors` (a list or a string),
`journal`, `year`, `doi`, `abstract`, `url`, and any other fields, which are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from graphwright.core.ids import normalize_pmid
from graphwright.errors import InvalidInput

PROVENANCE = "provenance"

_DOI_PREFIX = re.compile(r"^\s*(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+")
_YEAR = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")


def citation_pmid(citation: dict[str, Any]) -> str | None:
    """The citation's PMID as `PMID:<digits>`, from `pmid` (or `PMID`), if it has one."""
    value = citation.get("pmid", citation.get("PMID"))
    return normalize_pmid(value, bare_digits=True) if value not in (None, "") else None


def normalize_doi(value: Any) -> str | None:
    """A DOI lower-cased, without `https://doi.org/` or `doi:` in front."""
    if not isinstance(value, str):
        return None
    doi = _DOI_PREFIX.sub("", value).strip().lower()
    return doi or None


def title_key(citation: dict[str, Any]) -> tuple[str, str | None] | None:
    """Case-folded title with punctuation and spaces collapsed, and the four-digit year."""
    title = citation.get("title")
    if not isinstance(title, str):
        return None
    words = _NON_WORD.sub(" ", title.casefold()).strip()
    if not words:
        return None
    year = _YEAR.search(str(citation.get("year", "")))
    return (words, year.group(1) if year else None)


class CitationSet:
    """De-duplicates citations and merges their fields (first non-empty value wins)."""

    def __init__(self) -> None:
        self._entries: list[dict[str, Any]] = []
        self._by_pmid: dict[str, dict[str, Any]] = {}
        self._by_doi: dict[str, dict[str, Any]] = {}
        self._by_title: dict[tuple[str, str | None], dict[str, Any]] = {}
        self._result_count = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.to_list())

    def add(self, citations: Iterable[dict[str, Any]], result_id: str | None = None) -> int:
        """Add one tool result's citations; returns how many were new (not duplicates)."""
        items = list(citations)
        for index, citation in enumerate(items):
            if not isinstance(citation, dict):
                kind = type(citation).__name__
                raise InvalidInput(f"citation {index} must be an object, got {kind}")
        self._result_count += 1
        rid = result_id if result_id is not None else f"result-{self._result_count}"
        added = 0
        for citation in items:
            entry = self._match(citation)
            if entry is None:
                entry = {key: _copied(value) for key, value in citation.items()}
                entry[PROVENANCE] = []
                _merge_provenance(entry, citation.get(PROVENANCE))
                self._entries.append(entry)
                added += 1
            else:
                _merge_fields(entry, citation)
            _merge_provenance(entry, [rid])
            self._index(entry)
        return added

    def to_list(self) -> list[dict[str, Any]]:
        """The citations in first-seen order, as new dicts."""
        return [{key: _copied(value) for key, value in entry.items()} for entry in self._entries]

    def _match(self, citation: dict[str, Any]) -> dict[str, Any] | None:
        pmid = citation_pmid(citation)
        if pmid is not None and pmid in self._by_pmid:
            return self._by_pmid[pmid]
        doi = normalize_doi(citation.get("doi"))
        key = title_key(citation)
        for candidate in (
            self._by_doi.get(doi) if doi else None,
            self._by_title.get(key) if key else None,
        ):
            if candidate is not None and not _contradicts(candidate, citation):
                return candidate
        return None

    def _index(self, entry: dict[str, Any]) -> None:
        pmid = citation_pmid(entry)
        if pmid is not None:
            self._by_pmid.setdefault(pmid, entry)
        doi = normalize_doi(entry.get("doi"))
        if doi is not None:
            self._by_doi.setdefault(doi, entry)
        key = title_key(entry)
        if key is not None:
            self._by_title.setdefault(key, entry)


def _contradicts(entry: dict[str, Any], citation: dict[str, Any]) -> bool:
    """Two different PMIDs, or two different DOIs, are two different papers."""
    for identifier in (citation_pmid, lambda item: normalize_doi(item.get("doi"))):
        known, given = identifier(entry), identifier(citation)
        if known is not None and given is not None and known != given:
            return True
    return False


def _copied(value: Any) -> Any:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


def _merge_fields(entry: dict[str, Any], citation: dict[str, Any]) -> None:
    for field, value in citation.items():
        if field == PROVENANCE:
            _merge_provenance(entry, value)
        elif entry.get(field) in (None, "", [], {}) and value not in (None, "", [], {}):
            entry[field] = _copied(value)


def _merge_provenance(entry: dict[str, Any], incoming: Any) -> None:
    """Add result ids (an earlier set's `provenance`, or this result's id) to the entry's."""
    provenance = entry[PROVENANCE]
    for rid in incoming if isinstance(incoming, list) else [incoming]:
        if isinstance(rid, str) and rid not in provenance:
            provenance.append(rid)
