"""The merged graph as seed graph JSON, written straight from the accumulator's columns.

Building a dict per link only to serialise it costs more than serialising it. Instead, each
link's JSON is joined from pieces serialised once: per node `{"source":"<id>","target":` and
`"<id>",`, per label `"label":<label>,"evidence":`, per distinct provenance
`"provenance":[...]},`. The node ids are serialised in one call and cut where the values meet;
each link's evidence list is joined from its PMIDs, written as text by Arrow. Arrow's kernels
pick each link's pieces (take) and join them, so no Python code runs per link. The few links
of another shape (no label or not a string, fields besides the four, evidence besides
canonical PMIDs) go through a dict.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from itertools import compress
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from orjson import dumps

from graphwright.core.arrow_columns import (
    POOL,
    binaries,
    ints,
    offsets_of,
    sliced_binaries,
    take,
)
from graphwright.core.link_evidence import GroupedEvidence
from graphwright.core.link_table import LinkTable
from graphwright.core.merge_provenance import Provenance
from graphwright.core.merge_values import PROVENANCE, Record

_SLICE = 50_000  # links joined at a time: Arrow's memory for one slice is reused by the next
_NOTHING = binaries([b""])[0]  # the separator of joined pieces
# the pieces of evidence lists, `["PMID:1","PMID:2"],` and `[],`: the opening and closing
# of an empty list (0) and of one that is not (1), and what goes between two PMIDs
_OPENINGS, _CLOSINGS = binaries([b"[", b'["PMID:']), binaries([b"],", b'"],'])
_NEXT_PMID = binaries([b'","PMID:'])[0]


def graph_json(nodes: bytes, links: Iterable[bytes | pa.Buffer], xrefs: list[Any]) -> bytes:
    """`{"nodes": [...], "links": [...]}` from the nodes' JSON (`nodes_json`), the links' JSON
    (`links_json`) and the xref links. Chunks are written as they come, so the output is held
    about once."""
    buffer = io.BytesIO()
    buffer.write(b'{"nodes":%b,"links":[' % nodes)
    start = buffer.tell()
    for chunk in links:
        buffer.write(chunk)
    if xrefs:
        buffer.write(dumps(xrefs)[1:-1])
    elif buffer.tell() > start:  # the last link's comma goes
        buffer.seek(-1, io.SEEK_END)
    buffer.write(b"]}")
    POOL.release_unused()  # what the kernels freed goes back to the system, not to Python
    return buffer.getvalue()


def nodes_json(records: list[Record], provenance: Provenance, indexes: np.ndarray) -> bytes:
    """The records as a JSON list, each with its `provenance` last; `indexes` are the records'
    node indexes.

    `dumps` of the records and an empty one is `[{...},{...},...,{}]`. It is cut before each
    `},{`, and each piece followed by `,"provenance":[...]`. A record's JSON may hold `},{`
    too (a list of objects, a string ending in `}`): then there are more cuts than records and
    each record is copied with its provenance instead."""
    if not records:
        return b"[]"
    text = dumps([*records, {}])
    cuts = _meetings(text, b"}", b"{")
    if len(cuts) != len(records):
        rows = zip(records, indexes.tolist(), strict=True)
        return dumps([{**record, PROVENANCE: provenance.of(index)} for record, index in rows])
    offsets = np.empty(len(records) + 1, dtype=np.int64)
    offsets[0] = 1
    offsets[1:] = cuts
    tails = _provenance_lists(provenance, b',"provenance":', b"")
    joined = pc.binary_join_element_wise(
        sliced_binaries(text, offsets),
        take(tails, provenance.of_item[indexes]),
        _NOTHING,
        memory_pool=POOL,
    )
    data_buffer, joined_offsets = joined.buffers()[2], offsets_of(joined)
    return b"[%b}]" % data_buffer[int(joined_offsets[0]) : int(joined_offsets[-1])]


def links_json(
    table: LinkTable, names: list[str], provenance: Provenance
) -> Iterator[bytes | pa.Buffer]:
    """The live links as JSON objects, each followed by a comma, in first-seen order (in
    chunks); `names` are the node ids by node index."""
    ends = _strings_json(names)
    source_key, target_key = binaries([b'{"source":', b'"target":'])
    starts = pc.binary_join_element_wise(source_key, ends, target_key, _NOTHING)
    labels = binaries(list(map(_label_part, table.kind_labels)))
    tails = _provenance_lists(provenance, b'"provenance":', b"},")
    special = np.array(sorted(table.special), dtype=np.int64)
    evidence = table.grouped_evidence()
    for start in range(0, len(table), _SLICE):
        stop = min(start + _SLICE, len(table))
        sources, targets, kinds = table.arrays(start, stop)
        bounds = evidence.offsets[start : stop + 1]
        listed = (bounds[1:] > bounds[:-1]).astype(np.int64)
        joined = pc.binary_join_element_wise(
            take(starts, sources),
            take(ends, targets),
            take(labels, kinds),
            take(_OPENINGS, listed),
            _joined_pmids(evidence, bounds),
            take(_CLOSINGS, listed),
            take(tails, provenance.of_item[start:stop]),
            _NOTHING,
            memory_pool=POOL,
        )
        inside = special[np.searchsorted(special, start) : np.searchsorted(special, stop)]
        yield from _with_special_links(joined, inside - start, table, names, provenance,
                                       evidence, start)  # fmt: skip


def _joined_pmids(evidence: GroupedEvidence, bounds: np.ndarray) -> pa.Array:
    """The numbers of each link's PMIDs (rows `bounds[i]:bounds[i + 1]`) written as text and
    joined by `","PMID:` (a loose link's are none here: it is a special link)."""
    numbers = pc.cast(ints(evidence.pmids[bounds[0] : bounds[-1]]), pa.large_string())
    lists = pa.LargeListArray.from_arrays(ints(bounds - bounds[0]), numbers.cast(pa.large_binary()))
    return pc.binary_join(lists, _NEXT_PMID, memory_pool=POOL)


def _with_special_links(
    joined: pa.Array,
    positions: np.ndarray,
    table: LinkTable,
    names: list[str],
    provenance: Provenance,
    evidence: GroupedEvidence,
    start: int,
) -> Iterator[bytes | pa.Buffer]:
    """The joined links' bytes, each special link's JSON put in place of its joined one (a
    folded link's left out)."""
    data, offsets = joined.buffers()[2], offsets_of(joined)
    cut = int(offsets[0])
    for position in positions.tolist():
        yield data[cut : int(offsets[position])]
        cut = int(offsets[position + 1])
        index = start + position
        if index not in table.folded:
            record = table.record(index, provenance.of(index), names, evidence, fresh=False)
            yield dumps(record) + b","
    yield data[cut : int(offsets[-1])]


def _label_part(label: Any) -> bytes:
    # a label that is not a non-empty string is stored per link (a special link)
    if type(label) is not str or not label:
        return b""
    return b'"label":%b,"evidence":' % dumps(label)


def _strings_json(values: list[str]) -> pa.Array:
    """Each string's JSON followed by a comma, cut from one `dumps` of them all.

    `dumps` of the strings and one more, empty, is `["v0","v1",...,""]`, where value i runs
    from its first byte to the first byte of value i + 1, found after the `","` between them.
    A string may hold these bytes too (one ending in `",`), which makes more cuts than values:
    then each string is serialised on its own instead."""
    text = dumps([*values, ""])
    cuts = _meetings(text, b'"', b'"')
    if len(cuts) != len(values):
        return binaries([dumps(value) + b"," for value in values])
    offsets = np.empty(len(values) + 1, dtype=np.int64)
    offsets[0] = 1
    offsets[1:] = cuts + 2
    return sliced_binaries(text, offsets)


def _meetings(text: bytes, close: bytes, opening: bytes) -> np.ndarray:
    """Positions of each `close` byte followed by `,` and `opening` in `text`: where two values
    of a JSON list meet, or where a value holds those bytes itself."""
    data = np.frombuffer(text, dtype=np.uint8)
    commas = np.flatnonzero(data == ord(","))
    meet = (data[commas - 1] == ord(close)) & (data[commas + 1] == ord(opening))
    return commas[meet] - 1


def _provenance_lists(provenance: Provenance, before: bytes, after: bytes) -> pa.Array:
    """Each provenance entry's result ids as a JSON list, between `before` and `after`."""
    if provenance.unique and all(type(entry) is bytes for entry in provenance.entries):
        return _flagged_provenance_lists(provenance, before, after)
    quoted = list(map(dumps, provenance.result_ids))
    lists = []
    for entry in provenance.entries:
        if type(entry) is tuple:
            listed = dumps(entry)
        else:
            ids = compress(quoted, entry)
            listed = b"[%b]" % b",".join(ids if provenance.unique else dict.fromkeys(ids))
        lists.append(before + listed + after)
    return binaries(lists)


def _flagged_provenance_lists(provenance: Provenance, before: bytes, after: bytes) -> pa.Array:
    """`_provenance_lists` when every entry is flags and no id repeats: each entry's flagged
    positions pick the quoted ids, and Arrow joins them (the nodes' 47k and the links' 23k
    entries of the merge benchmark: 39 and 11 ms, against 118 and 52 ms entry by entry)."""
    adds, entries = len(provenance.result_ids), provenance.entries
    flags = np.frombuffer(b"".join(entries), dtype=np.uint8).reshape(-1, max(adds, 1))
    entry_of, add_of = np.nonzero(flags[:, :adds])  # by entry, then add: first-seen order
    bounds = np.zeros(len(entries) + 1, dtype=np.int64)
    np.cumsum(np.bincount(entry_of, minlength=len(entries)), out=bounds[1:])
    quoted = take(binaries(list(map(dumps, provenance.result_ids))), add_of)
    lists = pa.LargeListArray.from_arrays(ints(bounds), quoted)
    opening, comma, closing = binaries([before + b"[", b",", b"]" + after])
    joined = pc.binary_join(lists, comma, memory_pool=POOL)
    return pc.binary_join_element_wise(opening, joined, closing, _NOTHING, memory_pool=POOL)
