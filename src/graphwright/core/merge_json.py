"""The merged graph as seed graph JSON, written straight from the accumulator's columns.

Building a dict per link only to serialise it costs more than serialising it. Instead, each
link's JSON is joined from pieces serialised once: per node `{"source":<id>,"target":` and
`<id>`, per label `,"label":<label>,"evidence":[`, per distinct provenance
`],"provenance":[...]},`; the evidence of many links is serialised in one call. The few links
of another shape (no label or not a string, fields besides the four) go through a dict.
"""

from __future__ import annotations

import io
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import Any

from orjson import dumps

from graphwright.core.link_table import LinkTable
from graphwright.core.merge_provenance import Provenance

_SLICE = 10_000  # links joined at a time, so that the pieces held at once stay few


def graph_json(nodes: list[dict[str, Any]], links: Iterable[bytes], xrefs: list[Any]) -> bytes:
    """`{"nodes": [...], "links": [...]}` from the nodes, the links' JSON (`links_json`) and
    the xref links. Chunks are written as they come, so the output is held about once."""
    buffer = io.BytesIO()
    buffer.write(b'{"nodes":%b,"links":[' % dumps(nodes))
    start = buffer.tell()
    for chunk in links:
        buffer.write(chunk)
    if xrefs:
        buffer.write(dumps(xrefs)[1:-1])
    elif buffer.tell() > start:  # the last link's comma goes
        buffer.seek(-1, io.SEEK_END)
    buffer.write(b"]}")
    return buffer.getvalue()


def links_json(table: LinkTable, names: list[str], provenance: Provenance) -> Iterator[bytes]:
    """The live links as JSON objects, each followed by a comma, in first-seen order (in
    chunks); `names` are the node ids by node index."""
    starts = [b'{"source":%b,"target":' % dumps(name) for name in names]
    ends = list(map(dumps, names))
    labels = list(map(_label_part, table.kind_labels))
    tails = [b'],"provenance":%b},' % dumps(ids) for ids in provenance.distinct]
    special = sorted(table.special)
    for start in range(0, len(table), _SLICE):
        stop = min(start + _SLICE, len(table))
        sources, targets, kinds, evidence = table.columns(start, stop)
        of_link = provenance.of_item[start:stop].tolist()
        pieces = zip(
            map(starts.__getitem__, sources),
            map(ends.__getitem__, targets),
            map(labels.__getitem__, kinds),
            _evidence_items(evidence),
            map(tails.__getitem__, of_link),
            strict=True,
        )
        parts = list(map(b"".join, pieces))
        for index in special[bisect_left(special, start) : bisect_left(special, stop)]:
            if index in table.folded:
                parts[index - start] = b""
            else:
                ids = provenance.distinct[of_link[index - start]]
                parts[index - start] = dumps(table.record(index, ids, names, fresh=False)) + b","
        yield b"".join(parts)


def _label_part(label: Any) -> bytes:
    # a label that is not a non-empty string is stored per link (a special link)
    if type(label) is not str or not label:
        return b""
    return b',"label":%b,"evidence":[' % dumps(label)


def _evidence_items(evidence: list[tuple[Any, ...]]) -> list[bytes]:
    """Each link's evidence as JSON without its brackets, from one `dumps` of them all.

    The lists are split at `],[`. Any item whose JSON holds `],[` itself (a nested list, a
    string with those characters) adds a split, so a count that differs from the number of
    links shows one, and each list is serialised on its own instead."""
    items = dumps(evidence)[2:-2].split(b"],[")
    if len(items) == len(evidence):
        return items
    return [dumps(one)[1:-1] for one in evidence]
