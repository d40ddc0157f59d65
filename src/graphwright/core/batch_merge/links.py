"""The links of the batch merge: labels restored once per distinct (predicate, label) pair,
links grouped by (source, label, target) and merged by the rules for values (grouping.py), and
the xref links between merged nodes (docs/merge.md, rules 2, 4 and 5).
"""

from __future__ import annotations

import duckdb
import orjson
import pyarrow as pa

from graphwright.core.batch_merge.grouping import merge_groups
from graphwright.core.batch_merge.inputs import Fields
from graphwright.core.batch_merge.rules import json_object
from graphwright.core.formats.common import label_from, predicate_for
from graphwright.core.merge_values import PROVENANCE


def merge_links(
    con: duckdb.DuckDBPyConnection,
    edge_fields: Fields,
    result_ids: list[str],
    *,
    key_by_source: bool,
    xref_equivalence: bool,
) -> int:
    """Create the view `links_out (ord, json)` with the merged links and the table `xref_out
    (ord, json)` with the xref links (from `nodes_out`); return how many links they hold
    together. `edge_rows` is dropped once the links' rows are copied from it."""
    _restore_labels(con)
    _link_ends(con)
    columns = dict(edge_fields.columns)
    columns["predicate"] = "own_predicate"
    source_key = ""
    pks = edge_fields.columns.get("primary_knowledge_source")
    if key_by_source and pks:
        source_key = (
            f", CASE WHEN {pks} IS NULL OR gw_empty({pks}) OR {pks} IN ('0', '0.0', 'false') "
            f"THEN NULL ELSE {pks} END AS source_key"
        )
    rows = (
        "SELECT e.rowid AS o, e.file_no, s.node_no AS source_no, t.node_no AS target_no, "
        "r.label_no, s.node_json AS source, t.node_json AS target, r.label_out AS label, "
        "e.evidence, coalesce(e.own_predicate, r.predicate_out) AS own_predicate"
        + "".join(f", e.{c}" for c in edge_fields.columns.values())
        + source_key
        + " FROM edge_rows e JOIN link_ends s ON s.raw = e.subject "
        "JOIN link_ends t ON t.raw = e.object JOIN restored r ON r.predicate = e.predicate "
        "AND coalesce(r.label_in, '') = coalesce(e.label, '')"
    )
    group = ["source_no", "target_no", "label_no"] + (["source_key"] if source_key else [])
    key = [("source", "source"), ("target", "target"), ("label", "label")]
    # a merged group looks its ends and label up by number: carrying their texts through the
    # aggregate costs more (1M/5M: 4.9 s against 2.7 s)
    lookups = (
        "JOIN (SELECT node_no AS source_no, node_json AS source FROM link_nodes) USING (source_no) "
        "JOIN (SELECT node_no AS target_no, node_json AS target FROM link_nodes) USING (target_no) "
        "JOIN (SELECT DISTINCT label_no, label_out AS label FROM restored) USING (label_no)"
    )
    merged = merge_groups(
        con, "links_out", rows, group, key, columns, result_ids,
        evidence=True, lookups=lookups, consumed=("edge_rows", "link_ends"),
    )  # fmt: skip
    _xref_links(con, xref_equivalence=xref_equivalence)
    return merged + con.execute("SELECT count(*) FROM xref_out").fetchone()[0]


def _restore_labels(con: duckdb.DuckDBPyConnection) -> None:
    """`restore_link_fields` for each distinct (predicate, label) pair: the label a link
    without one reads with, and a `predicate` field when the label would not give it."""
    pairs = con.execute("SELECT DISTINCT predicate, label FROM edge_rows").fetchall()
    labels, fields = [], []
    for predicate, label in pairs:
        value = orjson.loads(label) if label is not None else label_from(predicate)
        labels.append(orjson.dumps(value).decode())
        fields.append(
            None if predicate == predicate_for(value) else orjson.dumps(predicate).decode()
        )
    table = pa.table(
        {
            "predicate": [pair[0] for pair in pairs],
            "label_in": [pair[1] for pair in pairs],
            "label_out": labels,
            "predicate_out": fields,
        },
        schema=pa.schema([(name, pa.string()) for name in
                          ("predicate", "label_in", "label_out", "predicate_out")]),
    )  # fmt: skip
    con.register("restore_batch", table)
    # a link's key holds its label as a number, the same for pairs restored to the same label
    con.execute(
        "CREATE TABLE restored AS SELECT *, dense_rank() OVER (ORDER BY label_out) AS label_no "
        "FROM restore_batch"
    )
    con.unregister("restore_batch")


def _link_ends(con: duckdb.DuckDBPyConnection) -> None:
    """`link_nodes (node_no, node_json)`: each node (class leader) a link may end at, as a
    number, which link keys hold, and as JSON text, which merged links hold; `link_ends (raw,
    node_no, node_json)`: the same for each id spelling."""
    con.execute(
        "CREATE TABLE link_nodes AS SELECT row_number() OVER () AS node_no, "
        "to_json(node)::VARCHAR AS node_json FROM (SELECT DISTINCT coalesce(leader, norm) "
        "AS node FROM ids LEFT JOIN leaders USING (norm))"
    )
    con.execute(
        "CREATE TABLE link_ends AS SELECT raw, node_no, node_json FROM ids "
        "LEFT JOIN leaders USING (norm) "
        "JOIN link_nodes ON node_json = to_json(coalesce(leader, norm))::VARCHAR"
    )


def _xref_links(con: duckdb.DuckDBPyConnection, *, xref_equivalence: bool) -> None:
    """A node's `xref` naming another node of the graph is a link labelled `xref` (unless
    xrefs are equivalences); its provenance is the node's."""
    if xref_equivalence:
        con.execute("CREATE TABLE xref_out (ord BIGINT, json VARCHAR)")
        return
    members = [
        ("source", "to_json(id)::VARCHAR"),
        ("target", "to_json(target)::VARCHAR"),
        ("label", "'\"xref\"'"),
        ("evidence", "'[]'"),
        (PROVENANCE, "any_value(provenance)"),
    ]
    con.execute(
        "CREATE TABLE xref_out AS WITH listed AS (SELECT ord, id, "
        "json_extract(json, '$.provenance')::VARCHAR AS provenance, "
        "gw_items(json_extract(json, '$.xref')::VARCHAR) AS items FROM nodes_out "
        "WHERE json_exists(json, '$.xref')), refs AS (SELECT ord, id, provenance, "
        "unnest(items) AS item, unnest(range(1, len(items) + 1)) AS position FROM listed"
        "), targets AS ("
        "SELECT refs.*, t.id AS target FROM refs "
        "JOIN ids ON json_type(item) = 'VARCHAR' AND trim(item::JSON->>'$') <> '' "
        "AND ids.raw = item::JSON->>'$' "
        "LEFT JOIN leaders USING (norm) JOIN nodes_out t ON t.id = coalesce(leader, norm) "
        "WHERE t.id <> refs.id) "
        "SELECT min(ord * 1000000 + position) AS ord, "
        + json_object(members, held={name for name, _ in members})
        + " AS json FROM targets GROUP BY id, target"
    )
