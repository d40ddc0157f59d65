"""Domain tags (seed 001): what a tag may look like, and the thread a set of tags runs on."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from graphwright.errors import InvalidInput

TAG_PATTERN = re.compile(r"^[a-z0-9_]{1,64}$")
GLOBAL_THREAD = "global"
MAX_TAGS = 10


def checked_tags(tags: Iterable[str] | None) -> list[str]:
    """The tags, sorted and without repeats; a tag that is not lower-case letters, digits and
    underscores (1-64 characters) is refused with an error that names it."""
    unique = sorted(set(tags or ()))
    bad = [tag for tag in unique if not TAG_PATTERN.match(tag)]
    if bad:
        raise InvalidInput(
            f"Invalid domain {'tag' if len(bad) == 1 else 'tags'} "
            f"{', '.join(repr(tag) for tag in bad)}: a tag is 1-64 "
            "lower-case letters, digits and underscores, e.g. 'supply_chain'"
        )
    if len(unique) > MAX_TAGS:
        raise InvalidInput(f"At most {MAX_TAGS} domain tags per run; got {len(unique)}")
    if GLOBAL_THREAD in unique:
        raise InvalidInput(
            f"'{GLOBAL_THREAD}' is the thread of runs without tags; it cannot be a tag itself"
        )
    return unique


def thread_id(tags: Iterable[str]) -> str:
    """Sorted tags joined by `__`, or `global` without tags: runs with the same tags share it."""
    return "__".join(sorted(tags)) or GLOBAL_THREAD


def memory_tags(tags: Iterable[str]) -> list[str]:
    """The tags whose notes a run reads and writes: its own, or `global` when it has none."""
    return sorted(tags) or [GLOBAL_THREAD]


def checked_tag(tag: str) -> str:
    """One tag as the memory API names it (`global` included)."""
    if not TAG_PATTERN.match(tag):
        raise InvalidInput(
            f"Invalid domain tag {tag!r}: a tag is 1-64 lower-case letters, digits and "
            "underscores, e.g. 'supply_chain'"
        )
    return tag


def tagged_message(text: str, tags: Sequence[str]) -> str:
    """Seed 001's message injection: `#tag #tag`, a blank line, then the text."""
    prefix = " ".join(f"#{tag}" for tag in tags)
    return f"{prefix}\n\n{text}" if prefix else text
