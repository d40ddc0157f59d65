"""Merging rows that share a key (a node's class, a link's key) by the rules for values.

Two passes. The first keeps a fixed-size state per group and field, which DuckDB aggregates
fast and spills to disk when it must. For nodes that is the first value, the first non-empty
value and the smallest and largest non-empty value: a node whose non-empty values of each field
are all equal (most nodes: one row, or the same values again) is done then, the first non-empty
value kept, no conflict. A link met more than once always unions its evidence, so for links the
first pass only counts the rows and keeps any value (that of the one row of a link met once).
The other groups go through the second pass, which gathers each field's values in input order
for the macros of rules.py.
"""

from __future__ import annotations

import duckdb
import orjson
import pyarrow as pa

from graphwright.core.batch_merge.rules import json_object
from graphwright.core.merge_values import CONFLICTS, PROVENANCE

MAX_FILES = 64  # provenance is a bit mask of input numbers
# a gathered group's evidence lists (JSON texts) as one list of items, in input order
GATHERED_EVIDENCE = "flatten(list_transform(evidence, lambda x: gw_items(x)))"


def merge_groups(
    con: duckdb.DuckDBPyConnection,
    name: str,
    rows: str,
    group: list[str],
    key: list[tuple[str, str]],
    columns: dict[str, str],
    result_ids: list[str],
    *,
    evidence: bool,
) -> None:
    """Create table `name (ord, json)`: one merged record per group of `rows`.

    `rows` selects the `group` columns, `o` (input order), `file_no`, the field `columns` (JSON
    text) and, with `evidence`, an `evidence` list; `key` gives the record's own members
    (JSON text expressions over the group columns and, for links, `evidence`)."""
    con.execute(f"CREATE TABLE {name}_rows AS {rows}")  # joins first, then the aggregate
    rows = f"SELECT * FROM {name}_rows"
    cols = list(columns.values())
    by = ", ".join(group)
    states, hard = _first_pass(cols, evidence=evidence)
    con.execute(
        f"CREATE TABLE {name}_groups AS SELECT {by}, min(o) AS ord, count(*) AS n, "
        f"bit_or(1::UBIGINT << file_no) AS files{states} FROM ({rows}) GROUP BY {by}"
    )
    _provenance_table(con, name, result_ids)
    simple_key = [(k, v.replace(GATHERED_EVIDENCE, "gw_items(evidence)")) for k, v in key]
    simple = _record(simple_key, {n: f"{c}_kept" for n, c in columns.items()}, None)
    # group columns are never NULL but `source_key`, which is never ''
    matched = " AND ".join(f"coalesce(r.{g}, '') = coalesce(k.{g}, '')" for g in group)
    lists = "".join(
        f", list({{'o': o, 'v': {c}}}) FILTER (WHERE {c} IS NOT NULL) AS {c}" for c in cols
    )
    if evidence:
        lists += ", list({'o': o, 'v': evidence}) AS evidence"
    gathered = (
        f"SELECT {', '.join(f'r.{g} AS {g}' for g in group)}, min(o) AS ord, "
        f"bit_or(1::UBIGINT << file_no) AS files{lists} "
        f"FROM ({rows}) r SEMI JOIN (SELECT {by} FROM {name}_groups WHERE {hard}) k ON {matched} "
        f"GROUP BY ALL"
    )
    con.execute(
        f"CREATE TABLE {name} AS "
        f"SELECT ord, {simple} AS json FROM {name}_groups JOIN {name}_prov USING (files) "
        f"WHERE NOT ({hard}) "
        f"UNION ALL {_gathered_records(gathered, name, key, columns, evidence=evidence)}"
    )
    con.execute(f"DROP TABLE {name}_groups; DROP TABLE {name}_rows")


def _first_pass(cols: list[str], *, evidence: bool) -> tuple[str, str]:
    """The first pass's states per field (`<column>_kept`, the value a group that is done
    keeps) and the SQL condition that sends a group to the second pass."""
    if evidence:  # every group of more than one row unions its evidence in the second pass
        states = "".join(f", any_value({c}) AS {c}_kept" for c in cols)
        return states + ", any_value(evidence) AS evidence", "n > 1"
    # the first non-empty value, else the first value: empty values sort after all others
    states = "".join(
        f", arg_min({c}, CASE WHEN gw_empty({c}) THEN o + {1 << 60} ELSE o END) AS {c}_kept"
        f", min({c}) FILTER (WHERE NOT gw_empty({c})) AS {c}_min"
        f", max({c}) FILTER (WHERE NOT gw_empty({c})) AS {c}_max"
        for c in cols
    )
    hard = " OR ".join(f"coalesce({c}_min <> {c}_max, false)" for c in cols)
    return states, hard or "false"


def _provenance_table(con: duckdb.DuckDBPyConnection, name: str, result_ids: list[str]) -> None:
    """`<name>_prov (files, provenance)`: each distinct bit mask as its result ids."""
    masks = [row[0] for row in con.execute(f"SELECT DISTINCT files FROM {name}_groups").fetchall()]
    texts = []
    for mask in masks:
        ids = [result_ids[n] for n in range(len(result_ids)) if mask >> n & 1]
        texts.append(orjson.dumps(list(dict.fromkeys(ids))).decode())
    table = pa.table({"files": pa.array(masks, pa.uint64()), "provenance": texts})
    con.register(f"{name}_prov_batch", table)
    con.execute(f"CREATE TABLE {name}_prov AS SELECT * FROM {name}_prov_batch")
    con.unregister(f"{name}_prov_batch")


def _record(key: list[tuple[str, str]], values: dict[str, str], conflicts: str | None) -> str:
    return json_object(
        [*key, *values.items(), (CONFLICTS, conflicts or "NULL"), (PROVENANCE, "provenance")]
    )


def _gathered_records(
    gathered: str, name: str, key: list[tuple[str, str]], columns: dict[str, str], *, evidence: bool
) -> str:
    """SELECT (ord, json) for the gathered groups: the rules run in stages, each a projection
    over the one before, so that no SQL expression repeats another."""
    cols = list(columns.values())
    # (input position, value) lists are sorted here: an ORDER BY inside the aggregate would
    # keep DuckDB from spilling it
    ordered = ", ".join(
        f"list_transform(list_sort({c}), lambda x: x.v) AS {c}"
        for c in [*cols, *(["evidence"] if evidence else [])]
    )
    stage = f"SELECT * REPLACE ({ordered}) FROM ({gathered})" if ordered else gathered
    non_empty = ", ".join(
        f"CASE WHEN len({c}) > 1 THEN list_filter({c}, lambda x: NOT gw_empty(x)) END AS {c}_ne"
        for c in cols
    )
    first_list = ", ".join(f"gw_first_list({c}_ne) AS {c}_p" for c in cols)
    kept = ", ".join(
        f"CASE WHEN len({c}) <= 1 OR len({c}_ne) = 0 THEN {c}[1] "
        f"WHEN len({c}_ne) = 1 OR {c}_p > len({c}_ne) THEN {c}_ne[1] "
        f"ELSE gw_listed({c}_ne, {c}_p) END AS {c}_v, "
        f"CASE WHEN {c}_p > 2 THEN gw_dedupe({c}_ne[1:{c}_p - 1]) END AS {c}_k"
        for c in cols
    )
    if cols:
        for projection in (non_empty, first_list, kept):
            stage = f"SELECT *, {projection} FROM ({stage})"
    clashes = [
        (n, f"CASE WHEN len({c}_k) > 1 THEN gw_array({c}_k) END") for n, c in columns.items()
    ]
    any_clash = " OR ".join(f"len({c}_k) > 1" for c in cols)
    conflicts = f"CASE WHEN {any_clash} THEN {json_object(clashes)} END" if cols else None
    record = _record(key, {n: f"{c}_v" for n, c in columns.items()}, conflicts)
    return f"SELECT ord, {record} AS json FROM ({stage}) JOIN {name}_prov USING (files)"
