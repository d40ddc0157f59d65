"""Neo4j: the CSV files `neo4j-admin database import full` reads, and a Cypher script for
cypher-shell that builds the same database in a running server.

Nodes get their Biolink categories as labels (`Gene`, `SmallMolecule`; other CURIEs as they are)
and `NamedThing`, which every node has, so one uniqueness constraint covers `id`. Links become
relationships typed by their Biolink predicate (`treats`, `RO:0002434`). Properties keep their
JSON types where Neo4j has them (string, long, double, boolean and arrays of one of these;
longs mixed with doubles become doubles); a property whose values are not all of one such type
is a string property, its non-string values written as JSON text. Neo4j stores no null and no
map, hence the rule.

CSV follows neo4j-admin's rules: `,` between fields, `"` quotes with `""` inside, array elements
split by the array delimiter (`;`, or a character no value holds when one holds `;`), an empty
unquoted field for a property a node lacks, ids in the id space `Node`, every property column
typed (`name:string[]`), since the header's type is what follows its last `:`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from graphwright.core.formats.common import BIOLINK, link_predicate, node_categories
from graphwright.core.formats.typed import ANY_LIST, LIST_PREFIX, value_type
from graphwright.core.ids import normalize_curie

NODES_CSV = "nodes.csv"
RELATIONSHIPS_CSV = "relationships.csv"
IMPORT_SH = "import.sh"
IMPORT_CYPHER = "import.cypher"
ID_SPACE = "Node"
BASE_LABEL = "NamedThing"
BATCH_SIZE = 500
ENDS = ("source", "target")
# Tried in order; neo4j-admin takes `U+XXXX` for characters awkward on a command line.
ARRAY_DELIMITERS = (";", "|", "\x1f", "\x1e", "\x1d", "\x1c")
NEO4J_TYPES = {
    "string": "string",
    "long": "long",
    "double": "double",
    "boolean": "boolean",
}
_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\v\f\x1c\x1d\x1e\x85\u2028\u2029"}
_UNSAFE_NAME = re.compile(r"[{}\r\n]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Graph = dict[str, Any]
Record = dict[str, Any]


def files(graph: Graph) -> dict[str, str]:
    """{file name: text}: nodes.csv, relationships.csv, import.sh and import.cypher."""
    nodes, links = graph["nodes"], graph["links"]
    ids = {node["id"]: node["id"] for node in nodes}
    normalized = {normalize_curie(node["id"]): node["id"] for node in nodes}

    def node_id(ref: str) -> str:
        return ids[ref] if ref in ids else normalized[normalize_curie(ref)]

    labels = [_labels(node) for node in nodes]
    node_props = [{k: v for k, v in node.items() if k != "id"} for node in nodes]
    ends = [(node_id(link["source"]), node_id(link["target"])) for link in links]
    types = [_relationship_type(link) for link in links]
    link_props = [
        {k: v for k, v in link.items() if k not in ("source", "target")} for link in links
    ]
    node_columns, node_rows = _typed(node_props)
    link_columns, link_rows = _typed(link_props)
    delimiter = _array_delimiter(
        [*(label for group in labels for label in group)],
        [*_array_items(node_rows), *_array_items(link_rows)],
    )
    nodes_csv = _csv(
        [f"id:ID({ID_SPACE})", ":LABEL", *_headers(node_columns)],
        [
            [
                _quoted(node["id"]),
                _quoted(delimiter.join(group)),
                *_fields(row, node_columns, delimiter),
            ]
            for node, group, row in zip(nodes, labels, node_rows, strict=True)
        ],
    )
    relationships_csv = _csv(
        [f":START_ID({ID_SPACE})", f":END_ID({ID_SPACE})", ":TYPE", *_headers(link_columns)],
        [
            [_quoted(start), _quoted(end), _quoted(kind), *_fields(row, link_columns, delimiter)]
            for (start, end), kind, row in zip(ends, types, link_rows, strict=True)
        ],
    )
    return {
        NODES_CSV: nodes_csv,
        RELATIONSHIPS_CSV: relationships_csv,
        IMPORT_SH: _import_sh(delimiter),
        IMPORT_CYPHER: _cypher(nodes, labels, node_rows, ends, types, link_rows),
    }


# -- labels, types, properties ---------------------------------------------------------------


def _labels(node: Record) -> list[str]:
    categories, _ = node_categories(node)
    labels = [category.removeprefix(BIOLINK) for category in categories or []]
    labels = [label for label in dict.fromkeys(labels) if label]
    return labels if BASE_LABEL in labels else [*labels, BASE_LABEL]


def _relationship_type(link: Record) -> str:
    predicate, _ = link_predicate(link)
    return predicate.removeprefix(BIOLINK) or "related_to"


def _column_type(values: list[Any]) -> str:
    """The Neo4j type of a property: one all its values have, else string (with JSON text)."""
    kinds = {_neo4j_value_type(value) for value in values}
    empty = ANY_LIST in kinds
    kinds.discard(ANY_LIST)
    if not kinds:
        return "string[]"
    if kinds in ({"long", "double"}, {"long[]", "double[]"}):
        kinds = {"double[]" if empty or "double[]" in kinds else "double"}
    if len(kinds) == 1:
        (kind,) = kinds
        if kind is not None and (not empty or kind.endswith("[]")):
            return kind
    return "string"


def _neo4j_value_type(value: Any) -> str | None:
    kind = value_type(value)
    if kind is None or kind == ANY_LIST:
        return kind
    if kind.startswith(LIST_PREFIX):
        # An empty string in an array reads back as no element: not an array value, then.
        if "" in value:
            return None
        return NEO4J_TYPES[kind.removeprefix(LIST_PREFIX)] + "[]"
    return NEO4J_TYPES[kind]


def _typed(records: list[Record]) -> tuple[dict[str, str], list[Record]]:
    """({property: Neo4j type}, each record's properties as Neo4j stores them), by the names
    both files use (`_property_names`)."""
    columns: dict[str, list[Any]] = {}
    for record in records:
        for key, value in record.items():
            columns.setdefault(key, []).append(value)
    names = _property_names(list(columns))
    types = {names[key]: _column_type(values) for key, values in columns.items()}
    rows = []
    for record in records:
        row = {}
        for key, value in record.items():
            kind = types[names[key]]
            if kind == "string" and not isinstance(value, str):
                value = orjson.dumps(value).decode()
            elif kind == "double":
                value = float(value)
            elif kind == "double[]":
                value = [float(item) for item in value]
            row[names[key]] = value
        rows.append(row)
    return types, rows


def _property_names(keys: list[str]) -> dict[str, str]:
    """A name for each key: `{` and `}` would read as a CSV header's options, and a line break
    would split a cypher-shell command, so they become `_` (with a number when that name is
    taken); an empty key becomes `_`."""
    clean = [key for key in keys if key and not _UNSAFE_NAME.search(key)]
    names = {key: key for key in clean}
    taken = set(clean)
    for key in keys:
        if key in names:
            continue
        safe = _UNSAFE_NAME.sub("_", key) or "_"
        candidate, number = safe, 2
        while candidate in taken:
            candidate, number = f"{safe}_{number}", number + 1
        taken.add(candidate)
        names[key] = candidate
    return names


def _array_items(rows: list[Record]) -> Iterable[str]:
    for row in rows:
        for value in row.values():
            if isinstance(value, list):
                yield from (item for item in value if isinstance(item, str))


def _array_delimiter(labels: list[str], items: list[str]) -> str:
    for delimiter in ARRAY_DELIMITERS:
        if not any(delimiter in text for text in (*labels, *items)):
            return delimiter
    used = {char for text in (*labels, *items) for char in text}
    return next(chr(code) for code in range(0xE000, 0xF900) if chr(code) not in used)


# -- CSV -------------------------------------------------------------------------------------


def _headers(columns: dict[str, str]) -> list[str]:
    return [_quoted(f"{column}:{kind}") for column, kind in columns.items()]


def _fields(row: Record, columns: dict[str, str], delimiter: str) -> list[str]:
    return [
        _field(row[name], delimiter) if name in row else ""  # empty unquoted: no property
        for name in columns
    ]


def _field(value: Any, delimiter: str) -> str:
    if isinstance(value, list):
        return _quoted(delimiter.join(_scalar_text(item) for item in value))
    if isinstance(value, str):
        return _quoted(value)
    return _scalar_text(value)


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return literal(value)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _csv(header: list[str], rows: list[list[str]]) -> str:
    return "".join(",".join(fields) + "\n" for fields in [header, *rows])


def _import_sh(delimiter: str) -> str:
    shown = delimiter if delimiter in ";|" else f"U+{ord(delimiter):04X}"
    return f"""#!/bin/sh
# Builds a new Neo4j 5 database from nodes.csv and relationships.csv (written by graphwright).
# Usage: ./import.sh [DATABASE]  (default neo4j; the database must be stopped or absent).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
neo4j-admin database import full \\
  --nodes="$here/{NODES_CSV}" \\
  --relationships="$here/{RELATIONSHIPS_CSV}" \\
  --delimiter=',' \\
  --array-delimiter='{shown}' \\
  --quote='"' \\
  --multiline-fields=true \\
  --id-type=string \\
  "${{1:-neo4j}}"
"""


# -- Cypher ----------------------------------------------------------------------------------


def name(identifier: str) -> str:
    """A label, type or property key for Cypher: backtick-quoted unless a plain identifier."""
    if _IDENTIFIER.fullmatch(identifier):
        return identifier
    return "`" + identifier.replace("`", "``") + "`"


def literal(value: Any) -> str:
    """A Cypher literal for a JSON value (map keys as names, numbers without `e+`)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{name(k)}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, float):
        return orjson.dumps(value).decode().replace("e+", "e")
    if isinstance(value, str):
        # JSON string escapes are Cypher's; line breaks JSON leaves raw are escaped too, so
        # each statement stays on one line for cypher-shell.
        return orjson.dumps(value).decode().translate(_LINE_BREAKS)
    return orjson.dumps(value).decode()


def _cypher(
    nodes: list[Record],
    labels: list[list[str]],
    node_rows: list[Record],
    ends: list[tuple[str, str]],
    types: list[str],
    link_rows: list[Record],
) -> str:
    base = name(BASE_LABEL)
    lines = [
        "// Built by graphwright. Run: cypher-shell -f import.cypher",
        "CREATE CONSTRAINT graphwright_node_id IF NOT EXISTS "
        f"FOR (n:{base}) REQUIRE n.id IS UNIQUE;",
    ]
    node_batches = _batches(
        zip(labels, nodes, node_rows, strict=True),
        key=lambda item: tuple(item[0]),
        row=lambda item: {"id": item[1]["id"], "props": item[2]},
    )
    for group, batch in node_batches:
        extra = "".join(f":{name(label)}" for label in group if label != BASE_LABEL)
        set_labels = f", n{extra}" if extra else ""
        lines.append(f":param {{batch: {literal(batch)}}}")
        lines.append(
            f"UNWIND $batch AS row MERGE (n:{base} {{id: row.id}}) SET n += row.props{set_labels};"
        )
    link_batches = _batches(
        zip(types, ends, link_rows, strict=True),
        key=lambda item: item[0],
        row=lambda item: {"start": item[1][0], "end": item[1][1], "props": item[2]},
    )
    for kind, batch in link_batches:
        lines.append(f":param {{batch: {literal(batch)}}}")
        lines.append(
            f"UNWIND $batch AS row MATCH (a:{base} {{id: row.start}}) "
            f"MATCH (b:{base} {{id: row.end}}) CREATE (a)-[r:{name(kind)}]->(b) SET r = row.props;"
        )
    return "\n".join(lines) + "\n"


def _batches(
    items: Iterable[Any], *, key: Callable[[Any], Any], row: Callable[[Any], Record]
) -> list[tuple[Any, list[Record]]]:
    """Rows grouped by `key` (labels and types are fixed in a statement), at most BATCH_SIZE."""
    groups: dict[Any, list[Record]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(row(item))
    return [
        (group, rows[start : start + BATCH_SIZE])
        for group, rows in groups.items()
        for start in range(0, len(rows), BATCH_SIZE)
    ]
