"""KGX TSV: a tar archive holding `nodes.tsv` and `edges.tsv`, as KGX itself reads them.

TSV cells hold text. Multivalued KGX fields (`category`, `publications`, `xref`...) are joined
with "|". Any other value that is not plain text (a number, a list, an object, text that would
read as JSON or holds a tab or newline) is written as JSON; a cell that parses as JSON is read
as JSON. So TSV round trips keep value types too.
"""

from __future__ import annotations

import io
import math
import tarfile
from collections.abc import Iterator
from typing import Any

import orjson

from graphwright.core.biolink import slot_kind
from graphwright.core.formats.common import GRAPHWRIGHT
from graphwright.core.formats.kgx import (
    EDGE_COLUMNS,
    NODE_COLUMNS,
    Record,
    edge_records,
    link_from_record,
    node_from_record,
    node_records,
    partial_graph,
    split_lines,
)
from graphwright.core.graph import GraphFormatError

NODES_TSV = "nodes.tsv"
EDGES_TSV = "edges.tsv"
# Columns split on "|" besides the Biolink model's multivalued slots (KGX lists these too).
MULTIVALUED = frozenset(
    {"category", "same_as", "exact_match", "in_taxon", "equivalent_identifiers", "equivalent_ids"}
)
# A TSV column whose values do not fit its kind is written as `graphwright:json:<column>`,
# holding JSON, and read back under `<column>`.
JSON_COLUMN = GRAPHWRIGHT + "json:"
_JSON_START = frozenset('{["-0123456789tfn \t\r\n')
_CELL_BREAKERS = ("\t", "\n", "\r")


# -- TSV -------------------------------------------------------------------------------------


def write_tsv(graph: dict[str, Any]) -> bytes:
    """A tar archive holding nodes.tsv and edges.tsv."""
    nodes, edges = write_tsv_pair(graph)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, text in ((NODES_TSV, nodes), (EDGES_TSV, edges)):
            content = text.encode()
            member = tarfile.TarInfo(name)
            member.size = len(content)
            member.mode = 0o644
            archive.addfile(member, io.BytesIO(content))
    return buffer.getvalue()


def write_tsv_pair(graph: dict[str, Any]) -> tuple[str, str]:
    return (
        _tsv(list(node_records(graph)), ("id", "category", "name")),
        _tsv(list(edge_records(graph)), ("id", "subject", "predicate", "object")),
    )


def _tsv(records: list[Record], first_columns: tuple[str, ...]) -> str:
    rows = [_tsv_row(record) for record in records]
    columns = list(dict.fromkeys([*first_columns, *(key for row in rows for key in row)]))
    for column in columns:
        if any(breaker in column for breaker in _CELL_BREAKERS):
            raise GraphFormatError(f"property name {column!r} holds a tab or line break")
    lines = ["\t".join(columns)]
    lines.extend("\t".join(row.get(column, "") for column in columns) for row in rows)
    return "\n".join(lines) + "\n"


def _tsv_row(record: Record) -> dict[str, str]:
    """Cells by column: a value that fits its column's kind as it is, any other as JSON under
    `graphwright:json:<column>`."""
    row: dict[str, str] = {}
    for column, value in record.items():
        kind = column_kind(column)
        cell = _cell(value, kind) if kind is not None else _escaped_cell(value)
        if cell is None:
            row[JSON_COLUMN + column] = orjson.dumps(value).decode()
        else:
            row[column] = cell
    return row


def column_kind(column: str) -> str | None:
    """The kind of a KGX column's cells, None for escaped (`graphwright:`) columns."""
    if column.startswith(GRAPHWRIGHT):
        return None
    return "multivalued" if column in MULTIVALUED else slot_kind(column)


def _cell(value: Any, kind: str) -> str | None:
    """The cell that reads back as `value` in a column of `kind`, or None if there is none."""
    if kind == "multivalued":
        if isinstance(value, list) and value and all(_fits_item(item) for item in value):
            return "|".join(value)
        return None
    if kind == "integer":
        return str(value) if type(value) is int else None
    if kind == "float":
        return repr(value) if type(value) is float and math.isfinite(value) else None
    if kind == "boolean":
        return ("true" if value else "false") if type(value) is bool else None
    return value if _fits_text(value) else None


def _fits_text(value: Any) -> bool:
    return isinstance(value, str) and value != "" and not any(b in value for b in _CELL_BREAKERS)


def _fits_item(value: Any) -> bool:
    return _fits_text(value) and "|" not in value


def _escaped_cell(value: Any) -> str:
    """A `graphwright:` column's cell: plain text when it cannot be mistaken for JSON."""
    if _fits_text(value) and _json_value(value) is _NOT_JSON:
        return value
    return orjson.dumps(value).decode()


_NOT_JSON = object()


def _json_value(text: str) -> Any:
    if text[:1] not in _JSON_START:
        return _NOT_JSON
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _NOT_JSON


def _value(cell: str, kind: str | None) -> Any:
    """A cell's value: split on "|" in multivalued columns, a number or boolean in the Biolink
    slots of those types, JSON in escaped columns, text everywhere else (as KGX reads it)."""
    if kind is None:
        value = _json_value(cell)
        return cell if value is _NOT_JSON else value
    if kind == "multivalued":
        return cell.split("|")
    try:
        if kind == "integer":
            return int(cell)
        if kind == "float":
            return float(cell)
    except ValueError:
        return cell
    if kind == "boolean" and cell.lower() in ("true", "false"):
        return cell.lower() == "true"
    return cell


def read_tsv(data: str | bytes) -> dict[str, Any]:
    """Read a tar archive (plain or compressed) holding nodes.tsv and edges.tsv."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as archive:
            files = {
                member.name.rsplit("/", 1)[-1]: archive.extractfile(member)
                for member in archive.getmembers()
                if member.isfile()
            }
            nodes = _member(files, NODES_TSV)
            edges = _member(files, EDGES_TSV)
            if not nodes and not edges:
                raise GraphFormatError("the kgx-tsv archive holds no *nodes.tsv or *edges.tsv")
    except tarfile.TarError:
        raise GraphFormatError(
            "kgx-tsv must be a tar archive holding nodes.tsv and edges.tsv (or give the two files)"
        ) from None
    return read_tsv_pair(nodes, edges)


def _member(files: dict[str, Any], suffix: str) -> bytes:
    """The archive's *<suffix> file, or nothing when it has none (a nodes- or edges-only KG)."""
    names = [name for name in files if name.endswith(suffix)]
    if len(names) > 1:
        found = ", ".join(sorted(names))
        raise GraphFormatError(f"the kgx-tsv archive holds several *{suffix} files: {found}")
    return files[names[0]].read() if names else b""


def read_tsv_pair(nodes: str | bytes, edges: str | bytes) -> dict[str, Any]:
    """Read nodes.tsv and edges.tsv; either may be empty text (an edges-only or nodes-only
    file), and the edges may name nodes of another file."""
    return partial_graph(
        (node_from_record(r, where) for where, r in _tsv_rows(nodes, NODES_TSV, NODE_COLUMNS)),
        (link_from_record(r, where) for where, r in _tsv_rows(edges, EDGES_TSV, EDGE_COLUMNS)),
    )


def _tsv_rows(
    data: str | bytes, name: str, required: tuple[tuple[str, ...], ...]
) -> Iterator[tuple[str, Record]]:
    """Records of a KGX TSV file. Rows may leave off trailing empty cells (KGX reads those);
    a row with more cells than the header is an error."""
    lines = split_lines(data)
    if not any(line.strip() for line in lines):
        return  # an empty file: the other file of the pair holds everything
    if not lines[0].strip():
        raise GraphFormatError(f"{name} has no header line")
    columns = lines[0].split("\t")
    for names in required:
        if not any(column in columns or JSON_COLUMN + column in columns for column in names):
            raise GraphFormatError(f"{name} has no '{names[0]}' column")
    targets = [column.removeprefix(JSON_COLUMN) for column in columns]
    kinds = [column_kind(column) for column in columns]
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        where = f"{name} line {number}"
        if len(cells) > len(columns):
            raise GraphFormatError(
                f"{where}: {len(cells)} cells, but the header has {len(columns)} columns"
            )
        yield (
            where,
            {
                target: _value(cell, kind)
                for target, cell, kind in zip(targets, cells, kinds, strict=False)
                if cell != ""
            },
        )
