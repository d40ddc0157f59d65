"""Reading the batch merge's inputs into the tables `node_rows` and `edge_rows`.

Each file's records become one SQL SELECT (inputs.py); here the files are found, checked for
what the SQL rules cover (else `Unbatchable`: the accumulator merges them), and inserted in
input order, so that a row's `rowid` is its place in the input.
"""

from __future__ import annotations

import duckdb

from graphwright.core.batch_merge.grouping import MAX_FILES
from graphwright.core.batch_merge.inputs import (
    BatchInput,
    Fields,
    Source,
    edge_select,
    jsonl_keys,
    jsonl_relation,
    jsonl_source,
    node_select,
    tsv_source,
)
from graphwright.core.formats.common import GRAPHWRIGHT
from graphwright.core.formats.kgx import EDGE_COLUMNS, NODE_COLUMNS
from graphwright.core.graph import GraphFormatError
from graphwright.core.merge_values import CONFLICTS, PMID_FIELDS, PROVENANCE

_CARRIED = frozenset({PROVENANCE, CONFLICTS})


class Unbatchable(Exception):
    """The inputs hold something only the accumulator merges by the rules."""


def read_inputs(
    con: duckdb.DuckDBPyConnection,
    inputs: list[BatchInput],
    node_fields: Fields,
    edge_fields: Fields,
    *,
    key_by_source: bool,
) -> None:
    """Create `node_rows` and `edge_rows` from the files of `inputs`, in input order; the
    fields met are added to `node_fields` and `edge_fields`."""
    if len(inputs) > MAX_FILES:
        raise Unbatchable(f"more than {MAX_FILES} inputs")
    nodes: list[tuple[int, Source]] = []
    edges: list[tuple[int, Source]] = []
    for file_no, item in enumerate(inputs):
        found_nodes, found_edges = _sources(con, item)
        nodes += [(file_no, source) for source in found_nodes]
        edges += [(file_no, source) for source in found_edges]
    _check_batchable([s for _, s in nodes], [s for _, s in edges], key_by_source=key_by_source)
    node_sql = [node_select(source, n, node_fields) for n, source in nodes]
    edge_sql = [edge_select(source, n, edge_fields) for n, source in edges]
    node_columns = "".join(f", {c} VARCHAR" for c in node_fields.columns.values())
    edge_columns = "".join(f", {c} VARCHAR" for c in edge_fields.columns.values())
    con.execute(f"CREATE TABLE node_rows (file_no INTEGER, raw VARCHAR{node_columns})")
    con.execute(
        "CREATE TABLE edge_rows (file_no INTEGER, subject VARCHAR, object VARCHAR, "
        f"predicate VARCHAR, label VARCHAR, own_predicate VARCHAR, evidence VARCHAR"
        f"{edge_columns})"
    )
    for sql in node_sql:
        con.execute(f"INSERT INTO node_rows BY NAME {sql}")
    for sql in edge_sql:
        con.execute(f"INSERT INTO edge_rows BY NAME {sql}")
    _check_rows(con, [item.result_id for item in inputs])


def _sources(con: duckdb.DuckDBPyConnection, item: BatchInput) -> tuple[list[Source], list[Source]]:
    if item.fmt == "kgx-tsv":
        nodes = [tsv_source(con, item.nodes, item.nodes.name)] if item.nodes else []
        edges = [tsv_source(con, item.edges, item.edges.name)] if item.edges else []
        nodes, edges = [s for s in nodes if s], [s for s in edges if s]
        for source in nodes:
            _require(source, NODE_COLUMNS)
        for source in edges:
            _require(source, EDGE_COLUMNS)
        return nodes, edges
    found_nodes, found_edges = [], []
    for path, kind in ((item.nodes, "nodes"), (item.edges, "edges"), (item.stream, "both")):
        if path is None:
            continue
        relation = jsonl_relation(path, path.name, con)
        is_edge = "(json_exists(json, '$.subject') AND json_exists(json, '$.object'))"
        if kind in ("nodes", "both"):
            part = f"(SELECT json FROM {relation} WHERE NOT {is_edge})"
            found_nodes.append(jsonl_source(part, jsonl_keys(con, part), path.name))
        if kind in ("edges", "both"):
            part = f"(SELECT json FROM {relation} WHERE {is_edge})"
            found_edges.append(jsonl_source(part, jsonl_keys(con, part), path.name))
    return found_nodes, found_edges


def _check_batchable(nodes: list[Source], edges: list[Source], *, key_by_source: bool) -> None:
    """Refuse what the SQL rules do not cover (the accumulator merges it instead): a merged
    graph added again (carried provenance and conflicts), PMID properties (normalised item
    by item), and, keyed by source, Translator `sources` lists."""
    node_keys = {_unescaped(key) for source in nodes for key, _ in source.keys}
    # an edge's plain `publications` is its evidence
    edge_keys = {_unescaped(key) for source in edges for key, _ in source.keys
                 if key != "publications"}  # fmt: skip
    for keys, kind in ((node_keys, "node"), (edge_keys, "edge")):
        found = sorted(keys & (_CARRIED | PMID_FIELDS))
        if found:
            raise Unbatchable(f"a {kind} field {found[0]!r} needs the accumulator")
    if key_by_source and "sources" in edge_keys:
        raise Unbatchable("an edge 'sources' list needs the accumulator")


def _check_rows(con: duckdb.DuckDBPyConnection, names: list[str]) -> None:
    bad = con.execute(
        "SELECT file_no FROM node_rows WHERE raw IS NULL OR trim(raw) = '' LIMIT 1"
    ).fetchone()
    if bad:
        raise GraphFormatError(f"{names[bad[0]]}: a node has no id")
    for part in ("subject", "predicate", "object"):
        bad = con.execute(
            f"SELECT file_no FROM edge_rows WHERE {part} IS NULL OR {part} = '' LIMIT 1"
        ).fetchone()
        if bad:
            raise GraphFormatError(f"{names[bad[0]]}: an edge has no {part}")


def _unescaped(key: str) -> str:
    return key.removeprefix(GRAPHWRIGHT)


def _require(source: Source, required: tuple[tuple[str, ...], ...]) -> None:
    keys = {key for key, _ in source.keys}
    for names in required:
        if not any(name in keys for name in names):
            raise GraphFormatError(f"{source.where} has no '{names[0]}' column")
