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

from graphwright.core.ids import (
    canonical_prefix,
    case_insensitive_local,
    normalize_curie,
    redundant_starts,
)
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_rules import EQUIVALENT_IDS, MergeReport

_CHUNK = 100_000


def normalise_ids(con: duckdb.DuckDBPyConnection, raws_sql: str) -> None:
    """Create `ids (raw, norm)` for the distinct raw ids `raws_sql` selects (column `raw`).

    An id of printable ASCII that is no URI (nearly all) is normalised in SQL by the rules of
    `normalize_curie`, its prefix's canonical spelling asked once per distinct prefix; the
    others, and ids whose local part starts with what Bioregistry calls redundant for their
    prefix (`GO:GO:0032571`), go through `normalize_curie` itself (1M/5M: 1.4M distinct ids,
    most of 2.4 s).
    """
    con.execute(
        f"CREATE TABLE distinct_ids AS SELECT DISTINCT raw FROM ({raws_sql}) WHERE raw IS NOT NULL"
    )
    # on printable ASCII, Python's strip() is trim() and its lower() is lower()
    con.execute(
        "CREATE TABLE plain_ids AS SELECT raw, split_part(text, ':', 1) AS prefix, "
        "trim(substr(text, strpos(text, ':') + 1)) AS local FROM ("
        "SELECT raw, trim(raw) AS text FROM distinct_ids "
        "WHERE regexp_full_match(raw, '[ -~]*') AND contains(raw, ':')) "
        "WHERE lower(text[1:4]) <> 'http'"
    )
    prefixes = [row[0] for row in con.execute("SELECT DISTINCT prefix FROM plain_ids").fetchall()]
    canonical = [canonical_prefix(prefix) for prefix in prefixes]
    con.register(
        "prefix_batch",
        pa.table(
            {
                "prefix": pa.array(prefixes, pa.string()),
                "canonical": pa.array(canonical, pa.string()),
                "lower_local": [bool(c) and case_insensitive_local(c) for c in canonical],
                "redundant": pa.array(
                    [list(redundant_starts(c)) if c else [] for c in canonical],
                    pa.list_(pa.string()),
                ),
            }
        ),
    )
    con.execute(
        "CREATE TABLE ids AS SELECT raw, CASE WHEN canonical IS NULL THEN trim(raw) "
        "WHEN lower_local THEN canonical || ':' || lower(local) ELSE canonical || ':' || local "
        "END AS norm FROM plain_ids JOIN prefix_batch USING (prefix) "
        "WHERE len(redundant) = 0 OR NOT list_bool_or("
        "list_transform(redundant, lambda r: starts_with(lower(local), r)))"
    )
    con.unregister("prefix_batch")
    reader = con.execute("SELECT raw FROM distinct_ids ANTI JOIN ids USING (raw)")
    batches = []
    while chunk := reader.fetchmany(_CHUNK):
        raws = [row[0] for row in chunk]
        batches.append(pa.table({"raw": raws, "norm": list(map(normalize_curie, raws))}))
    for batch in batches:
        con.register("id_batch", batch)
        con.execute("INSERT INTO ids SELECT raw, norm FROM id_batch")
        con.unregister("id_batch")
    con.execute("DROP TABLE plain_ids")
    con.execute("DROP TABLE distinct_ids")


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
