"""Counts in plain words ("1 graph", "3 graphs"), never an "s" in brackets."""

from __future__ import annotations


def plural(count: int) -> str:
    """The ending of a regular noun for `count`: "" for one, "s" otherwise."""
    return "" if count == 1 else "s"


def counted(count: int, noun: str, many: str | None = None) -> str:
    """`count` and the noun in its form for that count: `many` is the plural when it is not
    the noun with an "s" ("1 entry", "2 entries")."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {many or noun + 's'}"
