"""Reading KGX files into DuckDB tables of rows, one JSON text per property (docs/merge.md).

Every rule `core/formats/kgx.py` applies to a record is decided per column (a TSV cell's kind,
the `graphwright:` escapes) or is a string function, so it becomes one SQL expression per field:
no row ever reaches Python. Node rows land in `node_rows (file_no, ord, raw, <fields>)` and edge
rows in `edge_rows (file_no, ord, subject, object, predicate, label, evidence, <fields>)`, every
field a VARCHAR holding JSON (NULL when the record has no such key). `ord` orders rows as the
accumulator reads them: by file, then line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from graphwright.core.formats.common import AUTO_LINK_PREFIX, GRAPHWRIGHT
from graphwright.core.formats.kgx import EDGE_PARTS
from graphwright.core.formats.kgx_tsv import JSON_COLUMN, column_kind
from graphwright.core.graph import GraphFormatError
from graphwright.core.words import counted


@dataclass(frozen=True)
class BatchInput:
    """One input of a merge: a result id (its provenance) and KGX files in one format.

    `kgx-tsv` takes a nodes and an edges file, either may be None; `kgx-jsonl` also takes one
    stream of both (nodes then edges, told apart by `subject` and `object`) as `stream`.
    """

    result_id: str
    fmt: str
    nodes: Path | None = None
    edges: Path | None = None
    stream: Path | None = None

    def paths(self) -> list[Path]:
        return [path for path in (self.nodes, self.edges, self.stream) if path is not None]


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Fields:
    """Property names and their SQL columns (`p0`, `p1`, ...), in first-seen order."""

    def __init__(self) -> None:
        self.columns: dict[str, str] = {}

    def column(self, name: str) -> str:
        found = self.columns.get(name)
        if found is None:
            found = self.columns[name] = f"p{len(self.columns)}"
        return found


@dataclass(frozen=True)
class Value:
    """A record key's value in SQL: `json` gives its JSON text (NULL when a record lacks it).

    A TSV cell read as a string names that cell in `text`, and one split at `|` in `items`:
    whoever wants the string or the strings reads the cell as it is, instead of parsing back
    the JSON text just made (every link's subject, object, predicate and publications).
    """

    json: str
    text: str | None = None
    items: str | None = None


@dataclass
class Source:
    """A file's record keys as SQL values, and the table it reads."""

    relation: str  # a FROM clause
    keys: list[tuple[str, Value]]  # (record key, its value), in column order
    where: str  # the file's line for errors


# -- reading files -----------------------------------------------------------------------------


def tsv_source(con: duckdb.DuckDBPyConnection, path: Path, name: str) -> Source | None:
    """A TSV file's cells as JSON values, typed as `kgx_tsv._value` types them; None when empty."""
    header = _first_line(path)
    if header is None:
        return None
    columns = header.split("\t")
    relation = (
        f"read_csv({literal(str(path))}, delim='\t', header=true, all_varchar=true, quote='', "
        "escape='', null_padding=true, auto_detect=false, columns={"
        + ", ".join(f"{literal(f'c{i}')}: 'VARCHAR'" for i in range(len(columns)))
        + "})"
    )
    # a line of blanks is skipped, as kgx.py skips it
    cells = [f"c{i}" for i in range(len(columns))]
    blank = " AND ".join(f"coalesce(trim({cell}), '') = ''" for cell in cells)
    relation = f"(SELECT * FROM {relation} WHERE NOT ({blank}))"
    keys = [
        (column.removeprefix(JSON_COLUMN), _cell_value(cell, column))
        for cell, column in zip(cells, columns, strict=True)
    ]
    return Source(relation, keys, name)


def jsonl_keys(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    """Every key of the JSON objects of `relation` (column `json`), first seen first."""
    rows = con.execute(
        f"SELECT key FROM (SELECT unnest(json_keys(json)) AS key, row_number() OVER () AS n "
        f"FROM {relation}) GROUP BY key ORDER BY min(n)"
    ).fetchall()
    return [row[0] for row in rows]


def jsonl_relation(path: Path, name: str, con: duckdb.DuckDBPyConnection) -> str:
    """The JSON objects of a JSON Lines file (column `json`); GraphFormatError for other lines."""
    relation = (
        f"(SELECT json FROM read_json_objects({literal(str(path))}, "
        "format='newline_delimited') WHERE json IS NOT NULL)"
    )
    try:
        bad = con.execute(
            f"SELECT count(*) FROM {relation} WHERE json_type(json) <> 'OBJECT'"
        ).fetchone()
    except duckdb.Error as exc:
        raise GraphFormatError(f"{name}: invalid JSON: {first_error_line(exc)}") from None
    if bad and bad[0]:
        raise GraphFormatError(
            f"{name}: {counted(bad[0], 'line is', 'lines are')} not JSON objects"
        )
    return relation


def jsonl_source(relation: str, keys: list[str], name: str) -> Source:
    values = [(key, Value(f"json_extract(json, {_pointer(key)})::VARCHAR")) for key in keys]
    return Source(relation, values, name)


def _pointer(key: str) -> str:
    return literal("/" + key.replace("~", "~0").replace("/", "~1"))


def _first_line(path: Path) -> str | None:
    with path.open("rb") as stream:
        for line in stream:
            text = line.decode().removesuffix("\n").removesuffix("\r")
            if text.strip():
                return text
            return None  # kgx.py: the first line must be the header
    return None


def first_error_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _cell_value(cell: str, column: str) -> Value:
    """A TSV cell's value, its JSON text as `kgx_tsv._value` reads it (NULL when empty)."""
    kind = column_kind(column)
    if kind == "multivalued":
        return Value(f"to_json(string_split({cell}, '|'))::VARCHAR", items=cell)
    if kind not in (None, "integer", "float", "boolean"):
        return Value(f"to_json({cell})::VARCHAR", text=cell)
    return Value(_typed_cell_json(cell, kind))


def _typed_cell_json(cell: str, kind: str | None) -> str:
    if kind is None:  # escaped columns hold JSON, or text that cannot be mistaken for JSON
        return (
            f"CASE WHEN {cell} IS NULL THEN NULL "
            f"WHEN regexp_matches({cell}, '^[\\[{{\"0-9tfn \\t-]') AND json_valid({cell}) "
            f"THEN json({cell})::VARCHAR ELSE to_json({cell})::VARCHAR END"
        )
    if kind == "integer":
        return (
            f"CASE WHEN regexp_full_match({cell}, '\\s*[+-]?[0-9]+\\s*') "
            f"THEN CAST(CAST(trim({cell}) AS HUGEINT) AS VARCHAR) ELSE to_json({cell})::VARCHAR END"
        )
    if kind == "float":
        return (
            f"CASE WHEN isfinite(TRY_CAST({cell} AS DOUBLE)) "
            f"THEN to_json(CAST({cell} AS DOUBLE))::VARCHAR ELSE to_json({cell})::VARCHAR END"
        )
    return (  # boolean
        f"CASE WHEN lower({cell}) IN ('true', 'false') THEN lower({cell}) "
        f"ELSE to_json({cell})::VARCHAR END"
    )


# -- records -----------------------------------------------------------------------------------


def plain_fields(keys: list[tuple[str, Value]]) -> dict[str, Value]:
    plain: dict[str, list[Value]] = {}
    for key, value in keys:
        if not key.startswith(GRAPHWRIGHT):
            plain.setdefault(key, []).append(value)
    return {key: _coalesce(values) for key, values in plain.items()}


def restored_fields(keys: list[tuple[str, Value]]) -> dict[str, Value]:
    restored: dict[str, list[Value]] = {}
    for key, value in keys:
        if key.startswith(GRAPHWRIGHT):
            restored.setdefault(key[len(GRAPHWRIGHT) :], []).append(value)
    return {key: _coalesce(values) for key, values in restored.items()}


def _coalesce(values: list[Value]) -> Value:
    """A key held by several columns: the last one that holds a value wins, as in kgx.py."""
    if len(values) == 1:
        return values[0]
    return Value(f"coalesce({', '.join(value.json for value in reversed(values))})")


def string_of(value: Value) -> str:
    """The value as VARCHAR when it is a string; NULL otherwise."""
    if value.text is not None:
        return value.text
    return f"CASE WHEN json_type({value.json}) = 'VARCHAR' THEN ({value.json})::JSON->>'$' END"


def evidence_items(publications: Value) -> str:
    """The evidence items (JSON texts, PMIDs normalised) of a `publications` value."""
    cell = publications.items
    if cell is not None:
        return (
            f"CASE WHEN {cell} IS NULL THEN []::VARCHAR[] ELSE list_transform("
            f"string_split({cell}, '|'), lambda x: to_json(gw_pmid(x))::VARCHAR) END"
        )
    return f"gw_evidence({publications.json})"


def node_select(source: Source, file_no: int, fields: Fields) -> str:
    """SELECT of a source's node rows (kgx.node_from_record) as `node_rows` columns."""
    plain, restored = plain_fields(source.keys), restored_fields(source.keys)
    raw = string_of(plain["id"]) if "id" in plain else "NULL"
    values: dict[str, str] = {}
    for key, value in plain.items():
        if key != "id":
            values[key] = f"gw_category({value.json})" if key == "category" else value.json
    _restore(values, restored)
    select = [f"{file_no} AS file_no", f"{raw} AS raw"]
    select += [f"{expression} AS {fields.column(key)}" for key, expression in values.items()]
    return f"SELECT {', '.join(select)} FROM {source.relation}"


def edge_select(source: Source, file_no: int, fields: Fields) -> str:
    """SELECT of a source's edge rows (kgx.link_from_record, before the label is restored)."""
    plain, restored = plain_fields(source.keys), restored_fields(source.keys)
    predicate = plain.get("predicate")
    edge_label = plain.get("edge_label")
    if predicate is None and edge_label is not None:  # KGX before Biolink 2
        predicate, edge_label = edge_label, None
    elif predicate is not None and edge_label is not None:  # renamed where predicate is absent
        plain["edge_label"] = Value(
            f"CASE WHEN {predicate.json} IS NOT NULL THEN {edge_label.json} END"
        )
        predicate = Value(f"coalesce({predicate.json}, {edge_label.json})")
    values = {
        key: value.json for key, value in plain.items() if key not in (*EDGE_PARTS, "edge_label")
    }
    if edge_label is not None:
        values["edge_label"] = plain["edge_label"].json
    edge_id = plain.get("id")
    if edge_id is not None:
        values["id"] = _own_link_id(edge_id)
    _restore(values, restored)
    evidence = values.pop("evidence", None)
    evidence_list = evidence_items(plain.get("publications", Value("NULL")))
    if evidence is not None:
        evidence_list = (
            f"CASE WHEN {evidence} IS NOT NULL THEN gw_evidence({evidence}) "
            f"ELSE {evidence_list} END"
        )
    label = values.pop("label", "NULL")
    predicate_field = values.pop("predicate", "NULL")
    select = [
        f"{file_no} AS file_no",
        f"{string_of(plain['subject']) if 'subject' in plain else 'NULL'} AS subject",
        f"{string_of(plain['object']) if 'object' in plain else 'NULL'} AS object",
        f"{string_of(predicate) if predicate else 'NULL'} AS predicate",
        f"{label} AS label",
        f"{predicate_field} AS own_predicate",
        f"{evidence_list} AS evidence_items",
    ]
    select += [f"{expression} AS {fields.column(key)}" for key, expression in values.items()]
    # the evidence without repeats, in a projection of its own so that its list is built once
    return (
        "SELECT * EXCLUDE (evidence_items), gw_array(CASE WHEN len(evidence_items) > 1 "
        "THEN gw_dedupe(evidence_items) ELSE evidence_items END) AS evidence "
        f"FROM (SELECT {', '.join(select)} FROM {source.relation})"
    )


def _own_link_id(edge_id: Value) -> str:
    """An edge's id unless it is empty or one graphwright made up (`kgx.link_from_record`)."""
    text = string_of(edge_id)
    return (
        f"CASE WHEN {text} <> '' AND NOT regexp_full_match({text}, '{AUTO_LINK_PREFIX}[0-9]+') "
        f"THEN {edge_id.json} END"
    )


def _restore(values: dict[str, str], restored: dict[str, Value]) -> None:
    """A `graphwright:` escaped key restores its field where the record holds it."""
    for key, value in restored.items():
        values[key] = f"coalesce({value.json}, {values[key]})" if key in values else value.json
