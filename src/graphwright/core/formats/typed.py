"""Typed columns for formats whose attributes have one declared type each (CX2, Neo4j CSV).

A graph property may hold any JSON value, and the same key may hold values of different JSON
types on different nodes. These formats declare one type per attribute: a scalar (`string`,
`boolean`, `long`, `double`) or a list of one scalar type. `value_type` names the type a value
fits, `column_type` the type a column of values is declared with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
SCALARS = {bool: "boolean", int: "long", float: "double", str: "string"}
LIST_PREFIX = "list_of_"
# An empty list fits a list column of any type.
ANY_LIST = "list"


def value_type(value: Any) -> str | None:
    """The typed-column type `value` fits, `ANY_LIST` for [], None when it fits none (null, an
    object, a list of mixed or nested values, an integer past 64 bits)."""
    kind = type(value)
    if kind is int and not INT64_MIN <= value <= INT64_MAX:
        return None
    if kind in SCALARS:
        return SCALARS[kind]
    if kind is list:
        if not value:
            return ANY_LIST
        items = {value_type(item) for item in value}
        item = items.pop() if len(items) == 1 else None
        return LIST_PREFIX + item if item in SCALARS.values() else None
    return None


def fits(value: Any, column: str) -> bool:
    found = value_type(value)
    return found == column or (found == ANY_LIST and column.startswith(LIST_PREFIX))


def column_type(values: Iterable[Any]) -> str | None:
    """The type most values fit (the first seen on a tie), None when none fits any type."""
    counts: Counter[str] = Counter()
    lists = 0
    for value in values:
        found = value_type(value)
        if found == ANY_LIST:
            lists += 1
        elif found is not None:
            counts[found] += 1
    if counts:
        best = max(counts.values())
        chosen = next(name for name, count in counts.items() if count == best)
        # Empty lists count towards the best list type.
        listed = [name for name in counts if name.startswith(LIST_PREFIX)]
        if lists and listed:
            top_list = max(listed, key=lambda name: counts[name])
            if counts[top_list] + lists > best:
                chosen = top_list
        return chosen
    return LIST_PREFIX + "string" if lists else None
