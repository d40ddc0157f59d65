"""Ids in the batch merge: CURIE normalisation once per distinct id, and equivalence classes.

Normalisation is our Python `normalize_curie`, called once per distinct id spelling; the
result is a table the SQL joins. Equivalence needs the accumulator's order-dependent rules
(leader priority, category refusals, the first-seen record absorbing the other), so the rows
of the nodes that take part in an equivalence (those declaring one, and those whose id some
node declares) are merged by a `GraphAccumulator`, in input order: an id no declaration names
can only ever be a class of its own, so leaving its rows out changes nothing for the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

import duckdb
import orjson
import pyarrow as pa

from graphwright.core.ids import normalize_curie
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_rules import EQUIVALENT_IDS, MergeReport

_CHUNK = 100_000


def normalise_ids(con: duckdb.DuckDBPyConnection, raws_sql: str) -> None:
    """Create `ids (raw, norm)` for the distinct raw ids `raws_sql` selects (column `raw`)."""
    con.execute("CREATE TABLE ids (raw VARCHAR, norm VARCHAR)")
    reader = con.execute(f"SELECT DISTINCT raw FROM ({raws_sql}) WHERE raw IS NOT NULL")
    batches = []
    while chunk := reader.fetchmany(_CHUNK):
        raws = [row[0] for row in chunk]
        batches.append(pa.table({"raw": raws, "norm": list(map(normalize_curie, raws))}))
    for batch in batches:
        con.register("id_batch", batch)
        con.execute("INSERT INTO ids SELECT raw, norm FROM id_batch")
        con.unregister("id_batch")


def merge_equivalences(
    con: duckdb.DuckDBPyConnection,
    rows_sql: str,
    result_ids: list[str],
    *,
    key_by_source: bool,
    xref_equivalence: bool,
) -> MergeReport:
    """Merge the node rows `rows_sql` selects (`file_no`, `ord`, `record`: the node as JSON)
    with a `GraphAccumulator`, one add per file; create `routed_nodes (id, ord, json)` with
    the merged nodes and `leaders (norm, leader)` for every id of their classes."""
    accumulator = GraphAccumulator(key_by_source=key_by_source, xref_equivalence=xref_equivalence)
    rows = con.execute(f"SELECT file_no, record FROM ({rows_sql}) ORDER BY ord").fetchall()
    for file_no, group in groupby(rows, key=lambda row: row[0]):
        nodes = [orjson.loads(record) for _, record in group]
        accumulator.add({"nodes": nodes, "links": []}, result_id=result_ids[file_no])
    merged = accumulator.to_graph()["nodes"]
    ids = [node["id"] for node in merged]
    con.register(
        "routed_batch",
        pa.table({"id": ids, "json": [orjson.dumps(node).decode() for node in merged]}),
    )
    con.execute("CREATE TABLE routed_nodes AS SELECT id, json FROM routed_batch")
    con.unregister("routed_batch")
    pairs = list(_class_members(merged))
    con.register(
        "leader_batch",
        pa.table({"norm": [p[0] for p in pairs], "leader": [p[1] for p in pairs]}),
    )
    con.execute("CREATE TABLE leaders AS SELECT DISTINCT norm, leader FROM leader_batch")
    con.unregister("leader_batch")
    return accumulator.report


def _class_members(nodes: Iterable[dict]) -> Iterable[tuple[str, str]]:
    for node in nodes:
        yield node["id"], node["id"]
        for member in node.get(EQUIVALENT_IDS) or ():
            if isinstance(member, str):
                yield member, node["id"]
