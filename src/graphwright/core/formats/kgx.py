"""KGX, Biolink's exchange format: a nodes file and an edges file, as JSON Lines or as TSV.

KGX keeps nodes and edges in two files. For one stream:
- kgx-jsonl is the nodes file followed by the edges file (`cat nodes.jsonl edges.jsonl`); a line
  with `subject` and `object` is an edge, any other line a node (node properties with those
  names are escaped, see common.py, so the rule holds);
- kgx-tsv is a tar archive holding `nodes.tsv` and `edges.tsv`, as KGX itself reads them.

TSV cells hold text. Multivalued KGX fields (`category`, `publications`, `xref`...) are joined
with "|". Any other value that is not plain text (a number, a list, an object, text that would
read as JSON or holds a tab or newline) is written as JSON; a cell that parses as JSON is read
as JSON. So TSV round trips keep value types too.
"""

from __future__ import annotations

import io
import math
import tarfile
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from graphwright.core.biolink import slot_kind
from graphwright.core.formats.common import (
    GRAPHWRIGHT,
    Link,
    Node,
    category_from,
    escaped,
    is_auto_link_key,
    link_keys,
    link_predicate,
    node_categories,
    restore_link_fields,
    split_escaped,
)
from graphwright.core.graph import GraphFormatError, load_graph, parse_json

NODE_COLUMNS = (("id",),)
EDGE_COLUMNS = (("subject",), ("predicate", "edge_label"), ("object",))
NODES_TSV = "nodes.tsv"
EDGES_TSV = "edges.tsv"
NODES_JSONL = "nodes.jsonl"
EDGES_JSONL = "edges.jsonl"

# Node properties with these names are escaped: KGX fields, and the edge discriminator.
NODE_RESERVED = frozenset({"id", "name", "category", "subject", "predicate", "object"})
EDGE_RESERVED = frozenset({"id", "subject", "predicate", "object", "publications", "label"})
# Columns split on "|" besides the Biolink model's multivalued slots (KGX lists these too).
MULTIVALUED = frozenset({"category", "same_as", "in_taxon"})
# A TSV column whose values do not fit its kind is written as `graphwright:json:<column>`,
# holding JSON, and read back under `<column>`.
JSON_COLUMN = GRAPHWRIGHT + "json:"
_JSON_START = frozenset('{["-0123456789tfn \t\r\n')
_CELL_BREAKERS = ("\t", "\n", "\r")

Record = dict[str, Any]


# -- records (shared by JSON Lines and TSV) --------------------------------------------------


def node_records(graph: dict[str, Any]) -> Iterator[Record]:
    for node in graph["nodes"]:
        categories, category_rebuilt = node_categories(node)
        record: Record = {"id": node["id"]}
        if categories:
            record["category"] = categories
        if "name" in node:
            record["name"] = node["name"]
        for key, value in node.items():
            if key in ("id", "name") or (key == "category" and category_rebuilt):
                continue
            record[escaped(key, NODE_RESERVED)] = value
        yield record


def edge_records(graph: dict[str, Any]) -> Iterator[Record]:
    links = graph["links"]
    for link, (key, own_id) in zip(links, link_keys(links), strict=True):
        predicate, rebuilt = link_predicate(link)
        record: Record = {
            "id": key,
            "subject": link["source"],
            "predicate": predicate,
            "object": link["target"],
        }
        if link["evidence"]:
            record["publications"] = link["evidence"]
        used = {"source", "target", "evidence", *rebuilt}
        if own_id:
            used.add("id")
        for name, value in link.items():
            if name not in used:
                record[escaped(name, EDGE_RESERVED)] = value
        yield record


def node_from_record(record: Record, where: str) -> Node:
    node_id = record.get("id")
    if not isinstance(node_id, str) or not node_id:
        raise GraphFormatError(f"{where}: node has no id")
    node, restored = split_escaped(record)
    category = node.get("category")
    if isinstance(category, str):
        category = [category]
    if isinstance(category, list) and category and all(isinstance(c, str) for c in category):
        node["category"] = category_from(category)
    node.update(restored)
    return node


def link_from_record(record: Record, where: str) -> Link:
    if "predicate" not in record and "edge_label" in record:  # KGX before Biolink 2
        record = {("predicate" if k == "edge_label" else k): v for k, v in record.items()}
    edge_id = record.get("id")
    name = f"{where}: edge {edge_id!r}" if isinstance(edge_id, str) else f"{where}: edge"
    for field in ("subject", "predicate", "object"):
        value = record.get(field)
        if not isinstance(value, str) or not value:
            raise GraphFormatError(f"{name} has no {field}")
    plain, restored = split_escaped(record)
    link: Link = {
        key: value
        for key, value in plain.items()
        if key not in ("id", "subject", "predicate", "object", "publications")
    }
    publications = plain.get("publications")
    if publications is None:
        publications = []
    link.update(
        source=record["subject"],
        target=record["object"],
        evidence=publications if isinstance(publications, list) else [publications],
    )
    if isinstance(edge_id, str) and edge_id and not is_auto_link_key(edge_id):
        link["id"] = edge_id
    link.update(restored)
    restore_link_fields(link, record["predicate"])
    return link


def _graph(nodes: Iterable[Node], links: Iterable[Link]) -> dict[str, Any]:
    """A graph that may name nodes held by another file (see `complete_graph`)."""
    return load_graph({"nodes": list(nodes), "links": list(links)}, partial=True)


# -- KGX JSON --------------------------------------------------------------------------------


def write_json(graph: dict[str, Any]) -> str:
    document = {"nodes": list(node_records(graph)), "edges": list(edge_records(graph))}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def read_json(data: str | bytes) -> dict[str, Any]:
    return from_json_document(parse_json(data))


def from_json_document(document: Any) -> dict[str, Any]:
    """A graph from KGX JSON: `{"nodes": [...], "edges": [...]}` of KGX records."""
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise GraphFormatError("not KGX JSON: expected a 'nodes' list")
    edges = document.get("edges") or []
    if not isinstance(edges, list):
        raise GraphFormatError("KGX JSON 'edges' must be a list")
    for name, items in (("node", document["nodes"]), ("edge", edges)):
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise GraphFormatError(f"KGX JSON {name} {index} must be an object")
    return _graph(
        (node_from_record(r, f"kgx-json node {i}") for i, r in enumerate(document["nodes"])),
        (link_from_record(r, f"kgx-json edge {i}") for i, r in enumerate(edges)),
    )


def looks_like_kgx_json(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("nodes"), list)
        and isinstance(document.get("edges"), list)
        and "links" not in document
    )


# -- JSON Lines ------------------------------------------------------------------------------


def write_jsonl(graph: dict[str, Any]) -> str:
    nodes, edges = write_jsonl_pair(graph)
    return nodes + edges


def write_jsonl_pair(graph: dict[str, Any]) -> tuple[str, str]:
    return _jsonl(node_records(graph)), _jsonl(edge_records(graph))


def _jsonl(records: Iterable[Record]) -> str:
    return "".join(orjson.dumps(record).decode() + "\n" for record in records)


def read_jsonl(data: str | bytes) -> dict[str, Any]:
    nodes: list[Node] = []
    links: list[Link] = []
    for where, record in _json_lines(data, "kgx-jsonl"):
        if "subject" in record and "object" in record:
            links.append(link_from_record(record, where))
        else:
            nodes.append(node_from_record(record, where))
    return _graph(nodes, links)


def read_jsonl_pair(nodes: str | bytes, edges: str | bytes) -> dict[str, Any]:
    return _graph(
        (node_from_record(record, where) for where, record in _json_lines(nodes, NODES_JSONL)),
        (link_from_record(record, where) for where, record in _json_lines(edges, EDGES_JSONL)),
    )


def _json_lines(data: str | bytes, name: str) -> Iterator[tuple[str, Record]]:
    for number, line in enumerate(_lines(data), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise GraphFormatError(f"{where}: invalid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise GraphFormatError(f"{where}: expected a JSON object")
        yield where, record


def _lines(data: str | bytes) -> list[str]:
    """Lines split at "\n" only: str.splitlines would also split at characters such as U+2028,
    which JSON and TSV values may hold."""
    text = data.decode() if isinstance(data, bytes) else data
    return [line.removesuffix("\r") for line in text.split("\n")]


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
        kind = _column_kind(column)
        cell = _cell(value, kind) if kind is not None else _escaped_cell(value)
        if cell is None:
            row[JSON_COLUMN + column] = orjson.dumps(value).decode()
        else:
            row[column] = cell
    return row


def _column_kind(column: str) -> str | None:
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
    return _graph(
        (node_from_record(r, where) for where, r in _tsv_rows(nodes, NODES_TSV, NODE_COLUMNS)),
        (link_from_record(r, where) for where, r in _tsv_rows(edges, EDGES_TSV, EDGE_COLUMNS)),
    )


def _tsv_rows(
    data: str | bytes, name: str, required: tuple[tuple[str, ...], ...]
) -> Iterator[tuple[str, Record]]:
    """Records of a KGX TSV file. Rows may leave off trailing empty cells (KGX reads those);
    a row with more cells than the header is an error."""
    lines = _lines(data)
    if not any(line.strip() for line in lines):
        return  # an empty file: the other file of the pair holds everything
    if not lines[0].strip():
        raise GraphFormatError(f"{name} has no header line")
    columns = lines[0].split("\t")
    for names in required:
        if not any(column in columns or JSON_COLUMN + column in columns for column in names):
            raise GraphFormatError(f"{name} has no '{names[0]}' column")
    targets = [column.removeprefix(JSON_COLUMN) for column in columns]
    kinds = [None if column.startswith(JSON_COLUMN) else _column_kind(column) for column in columns]
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
