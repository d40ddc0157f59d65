"""detectCommunities a page at a time.

Louvain is seeded, so every page of one walk sees the same communities in the same order; a
page takes communities from its offset on, up to the caller's limit and a byte budget, so no
answer grows with the graph (a client refuses answers of about 1 MB, and a model's context is
smaller still). The cursor carries what the walk depends on: the seed, the resolution, the
graph version it was computed on, and where the next page starts.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from graphwright.errors import Conflict, InvalidInput
from graphwright.graphmode.limits import INT64_MAX
from graphwright.graphmode.tool_support import CommunitiesResult

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
# Structured content per page. One community is at most 20 members of 500-character ids and
# 10,000-character labels (about 210 kB), so a page stays under about 400 kB in the worst case.
PAGE_BYTES = 200_000
MAX_RESOLUTION = 10


@dataclass(frozen=True)
class CommunityCursor:
    """The next page of the walk computed with `seed` and `resolution` at graph `version`."""

    offset: int
    version: int
    seed: int
    resolution: float

    def encode(self) -> str:
        raw = json.dumps([self.offset, self.version, self.seed, self.resolution]).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> CommunityCursor:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            offset, version, seed, resolution = json.loads(raw)
            cursor = cls(int(offset), int(version), int(seed), float(resolution))
        except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
            cursor = None
        if cursor is None or not (
            cursor.offset >= 0
            and cursor.version >= 0
            and 0 <= cursor.seed <= INT64_MAX
            and 0 < cursor.resolution <= MAX_RESOLUTION
        ):
            raise InvalidInput(
                f"Cursor '{token[:80]}' is not one that detectCommunities returned; omit it to "
                "start over"
            )
        return cursor

    def check_version(self, version: int) -> None:
        """Refuse to continue a walk over a graph that changed: its communities may differ."""
        if version != self.version:
            raise Conflict(
                f"The graph changed since this cursor was issued (version {self.version} -> "
                f"{version}), so its communities may have changed too; call detectCommunities "
                "again without a cursor",
                current_version=version,
            )


def page(
    communities: Sequence[Mapping[str, Any]], offset: int, limit: int
) -> tuple[list[Mapping[str, Any]], int | None]:
    """The communities from `offset` on, at most `limit` of them and (beyond the first) no
    more than PAGE_BYTES as JSON; and the offset of the next page, or None after the last."""
    taken: list[Mapping[str, Any]] = []
    size = 0
    for community in communities[offset : offset + limit]:
        size += len(orjson.dumps(community))
        if taken and size > PAGE_BYTES:
            break
        taken.append(community)
    after = offset + len(taken)
    return taken, after if after < len(communities) else None


def result_page(
    found: Mapping[str, Any],
    *,
    version: int,
    seed: int,
    resolution: float,
    offset: int,
    limit: int,
) -> CommunitiesResult:
    """One page of `analysis.communities`' answer for the graph at `version`, with the cursor
    of the next page (which keeps the seed and resolution), or none after the last."""
    shown, after = page(found["communities"], offset, limit)
    next_cursor = (
        CommunityCursor(after, version, seed, resolution).encode() if after is not None else None
    )
    return CommunitiesResult(
        algorithm=found["algorithm"],
        count=found["count"],
        modularity=found["modularity"],
        offset=offset,
        communities=list(shown),
        nextCursor=next_cursor,
    )


TEXT_LINES = 20  # communities listed in the text; structuredContent has the whole page
TEXT_LABEL = 60  # characters of a member's label in the text


def communities_text(found: CommunitiesResult) -> str:
    """One page of communities in words: the count and quality, a line per community (up to
    TEXT_LINES, five members each) and how to get the next page."""
    quality = f", modularity {found.modularity}" if found.modularity is not None else ", no edges"
    count = f"{found.count} communit{'y' if found.count == 1 else 'ies'}"
    lines = [f"{count} (Louvain{quality}):"]
    for community in found.communities[:TEXT_LINES]:
        types = ", ".join(f"{kind} {n}" for kind, n in community["types"].items())
        members = ", ".join(
            (member["label"] or member["id"])[:TEXT_LABEL] for member in community["members"][:5]
        )
        lines.append(
            f"- community {community['index'] + 1}: {community['size']} nodes ({types}); "
            f"e.g. {members}"
        )
    if found.communities:
        first = found.offset + 1
        last = found.offset + len(found.communities)
        if (first, last) != (1, found.count):
            lines.append(f"This page: communities {first}-{last}.")
    if found.nextCursor:
        lines.append(f'More: call detectCommunities with cursor "{found.nextCursor}".')
    return "\n".join(lines)
