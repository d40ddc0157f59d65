"""The merge rules for property values and evidence (docs/merge.md, rules 3 and 5).

Shared by the node records and the link table of `GraphAccumulator`.
"""

from __future__ import annotations

from typing import Any

import orjson

from graphwright.core.ids import normalize_pmid

PROVENANCE = "provenance"
CONFLICTS = "conflicts"
# Fields whose values are PMIDs, so that a bare `123` there means `PMID:123`.
PMID_FIELDS = frozenset({"pmid", "pmids", "PMID", "PMIDs", "publications", "publication"})
_SCALARS = frozenset({str, int, float, bool, type(None)})
# Up to this many incoming values, a scalar is looked up in the kept list itself (in C) rather
# than in a set of keys built for the purpose.
_FEW = 16

Record = dict[str, Any]


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {} or value == ()


def canonical_json(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def hash_key(value: Any) -> Any:
    """A key under which equal JSON values compare equal (dicts and lists by canonical JSON)."""
    if isinstance(value, dict | list | tuple):
        return canonical_json(value)
    return value


def _pmid_item(value: Any) -> Any:
    return normalize_pmid(value, bare_digits=True) or value


def union_evidence(current: tuple[Any, ...], items: Any) -> tuple[Any, ...]:
    """`current` followed by the items not in it yet; PMIDs as `PMID:<digits>`, other strings
    trimmed, dicts compared by canonical JSON."""
    added: dict[str, None] = {}  # the common case: canonical PMIDs only, compared as they are
    for item in items:
        if not (type(item) is str and item[:5] == "PMID:" and item[5:].isdigit()):
            return _union_evidence_slowly(current, items)
        if item not in current:
            added[item] = None
    return (*current, *added) if added else current


def _union_evidence_slowly(current: tuple[Any, ...], items: Any) -> tuple[Any, ...]:
    seen = {item if type(item) is str else hash_key(item) for item in current}
    added = []
    for item in items:
        if type(item) is str:
            if not (item[:5] == "PMID:" and item[5:].isdigit()):
                item = normalize_pmid(item) or item.strip()
            key = item
        else:
            key = hash_key(item)
        if key not in seen:
            seen.add(key)
            added.append(item)
    return (*current, *added) if added else current


def _union_lists(current: list[Any], incoming: list[Any], field: str) -> list[Any]:
    normalize = _pmid_item if field in PMID_FIELDS else None
    result = list(current)
    # The keys of what is kept, worked out only when they are needed: a merge of n nodes into
    # one unions a list n times, and keys for every kept value each time cost n² Python steps.
    seen: set[Any] | None = None
    few = len(incoming) <= _FEW
    for item in incoming:
        if normalize is not None:
            item = normalize(item)
        if few and type(item) in _SCALARS:
            _add_new(result, item)
            continue
        if seen is None:
            seen = {hash_key(kept) for kept in result}
        key = hash_key(item)
        if key not in seen:
            seen.add(key)
            result.append(item)
    return result


def owned(field: str, value: Any) -> Any:
    """A value as the accumulator stores it: lists copied (PMID fields normalised), dicts copied."""
    if type(value) is list or type(value) is tuple:
        return _union_lists([], value, field) if field in PMID_FIELDS else list(value)
    if type(value) is dict:
        return {key: owned("", item) for key, item in value.items()}
    if field in PMID_FIELDS:
        return _pmid_item(value)
    return value


def fresh_copy(record: Record, provenance: tuple[str, ...]) -> Record:
    """`record` with lists and dicts of its own, and `provenance` as a list."""
    fresh = {key: owned("", value) for key, value in record.items()}
    fresh[PROVENANCE] = list(provenance)
    return fresh


def node_snapshot(node: Record) -> Record | None:
    """A copy of `node` that later changes to it cannot reach, if its values are JSON scalars
    or lists of them (else None: not worth a deep copy)."""
    copy = {}
    for field, value in node.items():
        if type(value) is list or type(value) is tuple:
            if not all(type(item) in _SCALARS for item in value):
                return None
            value = list(value) if type(value) is list else value
        elif type(value) not in _SCALARS:
            return None
        copy[field] = value
    return copy


def merge_properties(record: Record, other: Record, fixed: frozenset) -> None:
    for field, value in other.items():
        if field not in fixed and record.get(field) != value:
            _merge_property(record, field, value)


def merge_conflicts(record: Record, other: Record) -> None:
    conflicts = other.get(CONFLICTS)
    if isinstance(conflicts, dict):
        for field, values in conflicts.items():
            for value in values if isinstance(values, list) else [values]:
                _record_conflict(record, field, value)


def _merge_property(record: Record, field: str, value: Any) -> None:
    """First non-empty scalar wins, lists are unioned, a differing scalar goes to `conflicts`."""
    if field not in record or _is_empty(record[field]):
        if field not in record or not _is_empty(value):
            record[field] = owned(field, value)
        return
    current = record[field]
    if _is_empty(value):
        return
    if field in PMID_FIELDS and type(current) is not list and type(value) is not list:
        value = _pmid_item(value)
        if current == value:
            return
    if type(current) is list or type(value) is list:
        record[field] = _union_lists(
            current if type(current) is list else [current],
            value if type(value) is list else [value],
            field,
        )
    else:
        _record_conflict(record, field, value)


def _record_conflict(record: Record, field: str, value: Any) -> None:
    conflicts = record.get(CONFLICTS)
    if not isinstance(conflicts, dict):  # none yet, or an input's text: not a record of them
        conflicts = record[CONFLICTS] = {}
    values = conflicts.get(field)
    if not isinstance(values, list):
        # none yet, or one value an input gave (read as merge_conflicts reads an incoming
        # one): the kept value comes first
        given = values
        values = conflicts[field] = [record.get(field)]
        if given is not None:
            _add_new(values, given)
    _add_new(values, value)


def _add_new(values: list[Any], value: Any) -> None:
    if type(value) in _SCALARS:
        # A scalar is its own key and never equals a dict's or list's: the list's own search
        # (in C) decides, where a key per value made a merge of n nodes cost n² Python steps.
        if value not in values:
            values.append(value)
        return
    key = hash_key(value)
    if all(hash_key(seen) != key for seen in values):
        values.append(value)
