"""The links' evidence, stored as columns (docs/merge.md, rule 5).

Almost all evidence is PubMed ids written canonically, `PMID:<digits>`. Each such item of a
link is a row of two columns, its link index and its PMID as a number, in first-seen order, and
a `RowIndex` finds a row by that pair. Uniting a result's evidence then takes a few numpy
passes, and a million items leave nothing for Python's cyclic garbage collector to walk. A link
whose evidence holds any other item (a DOI, a dict, a PMID spelled otherwise) keeps all of its
evidence as a tuple instead, united by `union_evidence`, the rule in full.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, compress, pairwise
from typing import Any

import numpy as np

from graphwright.core.merge_values import union_evidence
from graphwright.core.row_index import KeyedRows

# 18 digits at most, so that the number fits in an int64
_CANONICAL_PMID = re.compile(r"PMID:[1-9][0-9]{0,17}")
_PREFIX = np.frombuffer(b"PMID:", dtype=np.uint8)
_MOST_DIGITS = 18
_NEWLINE, _ZERO, _NINE = ord("\n"), ord("0"), ord("9")
_POWERS = 10 ** np.arange(_MOST_DIGITS, dtype=np.int64)
DROPPED = -1  # the link of a row whose item moved: to a tuple, or to the link it folded into
_TAIL = 1 << 16  # rows appended since `_rows_of` sorted the rows by link, searched in full


@dataclass(frozen=True, slots=True)
class Pmids:
    """A result's evidence when every evidence is a list of canonical PMIDs: how many items
    each list has, and their numbers, one list after another."""

    counts: np.ndarray
    numbers: np.ndarray


def read_pmids(evidence: Sequence[Any]) -> Pmids | None:
    """The evidence as `Pmids`, if every evidence is a list of `PMID:<digits>` strings.

    The items are joined into one byte string, checked and turned into numbers by numpy
    passes over its bytes, not by Python code per item."""
    try:
        counts = np.fromiter(map(list.__len__, evidence), dtype=np.int64, count=len(evidence))
        text = "\n".join(chain.from_iterable(evidence)).encode("ascii")
    except (TypeError, UnicodeEncodeError):  # not a list, not a string, not ASCII
        return None
    items = int(counts.sum())
    data = np.frombuffer(text, dtype=np.uint8)
    ends = np.flatnonzero(data == _NEWLINE)
    if len(ends) != max(items - 1, 0):  # an item holds a line break
        return None
    ends = np.append(ends, len(data)) if items else ends
    starts = np.concatenate(([0], ends[:-1] + 1)) if items else ends
    digits = ends - starts - len(_PREFIX)
    is_digit = (data >= _ZERO) & (data <= _NINE)
    canonical = (
        ((digits >= 1) & (digits <= _MOST_DIGITS)).all()
        and all((data[starts + at] == byte).all() for at, byte in enumerate(_PREFIX.tolist()))
        and (data[starts + len(_PREFIX)] != _ZERO).all()
        and int(is_digit.sum()) == int(digits.sum())  # every other byte is a digit
    )
    if not canonical:
        return None
    return Pmids(counts, _numbers(data, is_digit, ends, digits))


def _numbers(
    data: np.ndarray, is_digit: np.ndarray, ends: np.ndarray, digits: np.ndarray
) -> np.ndarray:
    """Each item's digits as a number: each digit times its place's power of ten, summed."""
    if not len(ends):
        return np.empty(0, dtype=np.int64)
    at = np.flatnonzero(is_digit)
    place = np.repeat(ends, digits) - at - 1
    values = (data[at].astype(np.int64) - _ZERO) * _POWERS[place]
    firsts = np.zeros(len(digits), dtype=np.int64)
    np.cumsum(digits[:-1], out=firsts[1:])
    return np.add.reduceat(values, firsts)


class LinkEvidence:
    """Each link's evidence items in first-seen order (see the module's docstring)."""

    def __init__(self) -> None:
        self._rows = KeyedRows(np.int32, np.int64)  # (link, PMID) of each item
        self.loose: dict[int, tuple[Any, ...]] = {}  # link -> all its evidence, not as rows
        self._by_link: tuple[np.ndarray, np.ndarray] | None = None  # rows sorted by link

    def merge(self, links: np.ndarray, evidence: Sequence[Any], read: Pmids | None) -> None:
        """Unite the evidence given to each link (`links[i]` got `evidence[i]`) into what it
        has, in order; `read`: the evidence as `Pmids`, if it is canonical PMIDs only."""
        if read is None:
            self._merge_any(links, evidence)
            return
        counts, pmids = read.counts, read.numbers
        owners = np.repeat(links, counts)
        if self.loose:
            loose = np.fromiter(self.loose, dtype=np.int64, count=len(self.loose))
            given = np.isin(links, loose) & (counts > 0)
            if given.any():
                self._unite_loosely(links, evidence, np.flatnonzero(given).tolist())
                rowed = np.repeat(~given, counts)
                owners, pmids = owners[rowed], pmids[rowed]
        self._add(owners, pmids)

    def fold(self, kept: list[int], others: list[int]) -> None:
        """The items of each of `others` join those of the link at the same place in `kept`,
        as if one fold after another; `others` are distinct, and none of them is kept."""
        involved = set(kept) | set(others)
        if involved & self.loose.keys():
            self._loosen(sorted(involved - self.loose.keys()))
            for kept_link, other in zip(kept, others, strict=True):
                self.loose[kept_link] = union_evidence(self.loose[kept_link], self.loose.pop(other))
            return
        rows, owners = self._rows_of(np.array(others, dtype=np.int64))
        if not len(rows):
            return
        rank = dict(zip(others, range(len(others)), strict=True))
        ranks = np.fromiter(map(rank.__getitem__, owners.tolist()), np.int64, len(owners))
        order = np.argsort(ranks, kind="stable")  # each other's rows in turn, in first-seen order
        rows, new_owners = rows[order], np.array(kept, dtype=np.int64)[ranks[order]]
        pmids = self._rows.columns[1][rows]
        self._drop(rows)
        self._add(new_owners, pmids)

    def grouped(self, links: int) -> GroupedEvidence:
        """Every link's evidence, grouped by link for output (a snapshot); `links`: how many
        links the table holds."""
        column, pmids = self._rows.columns
        order = np.argsort(column, kind="stable")
        owners = column[order]
        live = int(np.searchsorted(owners, 0))  # dropped rows sort first
        offsets = np.zeros(links + 1, dtype=np.int64)
        np.cumsum(np.bincount(owners[live:], minlength=links), out=offsets[1:])
        return GroupedEvidence(pmids[order[live:]], offsets, self.loose)

    def _merge_any(self, links: np.ndarray, evidence: Sequence[Any]) -> None:
        """Evidence of any shape: links given anything but canonical PMIDs keep tuples."""
        given = list(compress(range(len(evidence)), evidence))
        items = {position: _evidence_items(evidence[position]) for position in given}
        at = links.tolist()
        loosening = {at[position] for position in given if not _canonical(items[position])}
        self._loosen(sorted(loosening - self.loose.keys()))
        rowed = [position for position in given if at[position] not in self.loose]
        self._unite_loosely(links, evidence, [pos for pos in given if at[pos] in self.loose])
        owners = [at[position] for position in rowed for _ in items[position]]
        numbers = [int(item[5:]) for position in rowed for item in items[position]]
        self._add(np.array(owners, dtype=np.int64), np.array(numbers, dtype=np.int64))

    def _unite_loosely(self, links: np.ndarray, evidence: Sequence[Any], given: list[int]) -> None:
        for position in given:
            link = int(links[position])
            self.loose[link] = union_evidence(self.loose[link], _evidence_items(evidence[position]))

    def _add(self, owners: np.ndarray, pmids: np.ndarray) -> None:
        """Rows for the items (`owners[i]` has PMID `pmids[i]`) not held yet, in order."""
        if len(owners):
            self._rows.upsert((owners, pmids))

    def _loosen(self, links: list[int]) -> None:
        """These links keep their evidence as tuples from now on."""
        if not links:
            return
        rows, owners = self._rows_of(np.array(links, dtype=np.int64))
        texts = list(map(_pmid_text, self._rows.columns[1][rows].tolist()))
        items: dict[int, list[str]] = {link: [] for link in links}
        for owner, text in zip(owners.tolist(), texts, strict=True):
            items[owner].append(text)
        self.loose.update((link, tuple(found)) for link, found in items.items())
        self._drop(rows)

    def _rows_of(self, links: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of these links' items, in first-seen order, and each row's link."""
        column = self._rows.columns[0]
        order, owners = self._sorted_by_link()
        lows = np.searchsorted(owners, links).tolist()
        highs = np.searchsorted(owners, links, "right").tolist()
        sorted_rows = [order[low:high] for low, high in zip(lows, highs, strict=True)]
        tail = np.isin(column[len(order) :], links)  # rows appended since the sort
        rows = np.sort(np.concatenate([*sorted_rows, len(order) + np.flatnonzero(tail)]))
        owners = column[rows]
        live = owners != DROPPED  # rows dropped since the sort
        return rows[live], owners[live]

    def _sorted_by_link(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows in order of their links, and those links, sorted again once the rows
        appended since the last sort are many (`_rows_of` searches those in full)."""
        column = self._rows.columns[0]
        sorted_rows = 0 if self._by_link is None else len(self._by_link[0])
        if self._by_link is None or len(column) - sorted_rows > max(_TAIL, len(column) // 4):
            order = np.argsort(column, kind="stable")
            self._by_link = order, column[order]
        return self._by_link

    def _drop(self, rows: np.ndarray) -> None:
        self._rows.unindex(rows)
        self._rows.columns[0][rows] = DROPPED


@dataclass(frozen=True, slots=True)
class GroupedEvidence:
    """Every link's evidence, grouped by link: link i's PMIDs are
    `pmids[offsets[i]:offsets[i + 1]]` unless it is one of the `loose` links."""

    pmids: np.ndarray
    offsets: np.ndarray
    loose: dict[int, tuple[Any, ...]]

    def of(self, link: int) -> tuple[Any, ...]:
        """One link's evidence items."""
        loose = self.loose.get(link)
        if loose is not None:
            return loose
        start, stop = self.offsets[link : link + 2].tolist()
        return tuple(map(_pmid_text, self.pmids[start:stop].tolist()))

    def lists(self, start: int, stop: int) -> list[list[str]]:
        """The evidence lists of links `start:stop` (a loose link's list is empty here)."""
        bounds = self.offsets[start : stop + 1]
        texts = list(map(_pmid_text, self.pmids[bounds[0] : bounds[-1]].tolist()))
        return [texts[low:high] for low, high in pairwise((bounds - bounds[0]).tolist())]


def _pmid_text(number: int) -> str:
    return f"PMID:{number}"


def _canonical(items: Sequence[Any]) -> bool:
    return all(type(item) is str and _CANONICAL_PMID.fullmatch(item) for item in items)


def _evidence_items(evidence: Any) -> Any:
    return evidence if type(evidence) is list or type(evidence) is tuple else (evidence,)
