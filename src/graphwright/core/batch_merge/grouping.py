"""Merging rows that share a key (a node's class, a link's key) by the rules for values.

Two passes. The first keeps a fixed-size state per group, which DuckDB aggregates fast and
spills to disk when it must. For nodes that is, per field, the first value, the first non-empty
value and the smallest and largest non-empty value: a node whose non-empty values of each field
are all equal (most nodes: one row, or the same values again) is done then, the first non-empty
value kept, no conflict. A link met more than once always unions its evidence, so for links the
first pass only counts the rows, by a key of numbers (source, target, label); a link met once
is its own row, joined back by its order. The other groups go through the second pass, which
gathers each field's values in input order for the macros of rules.py. A link field that every
row holds with one value (or none holds) is not gathered: every link keeps that value.
"""

from __future__ import annotations

import duckdb
import orjson
import pyarrow as pa

from graphwright.core.batch_merge.inputs import literal
from graphwright.core.batch_merge.rules import json_object
from graphwright.core.merge_values import CONFLICTS, PROVENANCE

MAX_FILES = 64  # provenance is a bit mask of input numbers
# the union of a group's evidence lists (JSON texts, in input order), as JSON text
_EVIDENCE_UNION = "gw_array(gw_dedupe(flatten(list_transform(evidence, lambda x: gw_items(x)))))"


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
    lookups: str = "",
    consumed: tuple[str, ...] = (),
) -> int:
    """Create view `name (ord, json)`: one merged record per group of `rows`; return how many
    records it holds (counted without building them).

    The records of groups of one row are built when the view is read (for links, most of
    them: materialising their JSON would write and read it back once more); the view reads
    the tables `<name>_*`, which `drop_merged` drops with it.

    `rows` selects the `group` columns, `o` (input order, unique), `file_no`, the field
    `columns` (JSON text) and, with `evidence`, an `evidence` list (JSON text, without
    repeats); `key` gives the record's own members, JSON text expressions over a row's
    columns. A group of several rows keeps only its group columns: the `lookups` (JOIN
    clauses) give it the other columns `key` names. The tables named in `consumed`, which
    `rows` reads and nothing needs after, are dropped once the rows are copied: they leave
    their memory to the merge (1M/5M: 2 GB of edge rows)."""
    con.execute(f"CREATE TABLE {name}_rows AS {rows}")  # joins first, then the aggregate
    for table in consumed:
        con.execute(f"DROP TABLE {table}")
    by = ", ".join(group)
    if evidence:
        constants = _constant_fields(con, name, columns)
        done, hard = _links_met_once(con, name, by, key, columns, constants)
        key = [*key, ("evidence", _EVIDENCE_UNION)]
    else:
        done, hard = _nodes_of_equal_values(con, name, by, key, columns)
        constants = {}
    _provenance_table(con, name, result_ids)
    gathered = {n: c for n, c in columns.items() if n not in constants}
    # plain lists in row order (NULL included), put in input order later: lists of
    # (order, value) pairs cost more, and an ORDER BY inside the aggregate keeps DuckDB from
    # spilling it
    lists = ["o", *gathered.values(), *(["evidence"] if evidence else [])]
    # `source_key` is NULL for links without a primary source
    matched = " AND ".join(f"r.{g} IS NOT DISTINCT FROM k.{g}" for g in group)
    con.execute(
        f"CREATE TABLE {name}_gathered AS SELECT {', '.join(f'r.{g} AS {g}' for g in group)}, "
        "min(o) AS ord, bit_or(1::UBIGINT << file_no) AS files"
        + "".join(f", list({c}) AS {c}_list" for c in lists)
        + f" FROM {name}_rows r SEMI JOIN ({hard}) k ON {matched} GROUP BY {by}"
    )
    records = _gathered_records(name, key, columns, gathered, constants, lookups, evidence=evidence)
    con.execute(f"CREATE TABLE {name}_merged AS {records}")
    con.execute(f"DROP TABLE {name}_gathered")
    con.execute(f"CREATE VIEW {name} AS {done} UNION ALL SELECT ord, json FROM {name}_merged")
    return con.execute(f"SELECT count(*) FROM {name}_groups").fetchone()[0]


def drop_merged(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop the view `merge_groups` made and the tables it reads."""
    con.execute(f"DROP VIEW {name}")
    for table in ("merged", "prov", "groups", "rows"):
        con.execute(f"DROP TABLE {name}_{table}")


def _links_met_once(
    con: duckdb.DuckDBPyConnection,
    name: str,
    by: str,
    key: list[tuple[str, str]],
    columns: dict[str, str],
    constants: dict[str, str],
) -> tuple[str, str]:
    """Links: the first pass only counts each key's rows (a link met more than once always
    unions its evidence, so it is gathered). Return the SELECT (ord, json) of the links met
    once, each the row itself joined back by its order, and the SELECT of the others' keys."""
    con.execute(
        f"CREATE TABLE {name}_groups AS SELECT {by}, min(o) AS ord, count(*) AS n, "
        f"bit_or(1::UBIGINT << file_no) AS files FROM {name}_rows GROUP BY {by}"
    )
    values = {n: f"r.{c}" for n, c in columns.items()}
    record = _record([*key, ("evidence", "r.evidence")], values, None, constants)
    done = (
        f"SELECT g.ord, {record} AS json FROM {name}_groups g JOIN {name}_rows r ON r.o = g.ord "
        f"JOIN {name}_prov p ON p.files = g.files WHERE g.n = 1"
    )
    return done, f"SELECT {by} FROM {name}_groups WHERE n > 1"


def _constant_fields(
    con: duckdb.DuckDBPyConnection, name: str, columns: dict[str, str]
) -> dict[str, str]:
    """The fields every row holds with one value, or no row holds, each with that value as a
    SQL literal: every group keeps it, with no conflict, so none is gathered. (KGX edges often
    carry one category, knowledge level or agent type throughout.)"""
    if not columns:
        return {}
    states = ", ".join(f"min({c}), max({c}), count({c})" for c in columns.values())
    found = con.execute(f"SELECT count(*), {states} FROM {name}_rows").fetchone()
    assert found is not None
    total, constants = found[0], {}
    for number, field in enumerate(columns):
        low, high, held = found[1 + 3 * number : 4 + 3 * number]
        if held == 0:
            constants[field] = "NULL"
        elif held == total and low == high:
            constants[field] = literal(low)
    return constants


def _nodes_of_equal_values(
    con: duckdb.DuckDBPyConnection,
    name: str,
    by: str,
    key: list[tuple[str, str]],
    columns: dict[str, str],
) -> tuple[str, str]:
    """Nodes: the first pass keeps, per field, the first value, the first non-empty value and
    the smallest and largest non-empty value. Return the SELECT (ord, json) of the groups
    whose non-empty values of each field are all equal, and the SELECT of the others' keys."""
    states, hard = _first_pass(list(columns.values()))
    con.execute(
        f"CREATE TABLE {name}_groups AS SELECT {by}, min(o) AS ord, count(*) AS n, "
        f"bit_or(1::UBIGINT << file_no) AS files{states} FROM {name}_rows GROUP BY {by}"
    )
    simple = _record(key, {n: f"{c}_kept" for n, c in columns.items()}, None)
    done = (
        f"SELECT ord, {simple} AS json FROM {name}_groups JOIN {name}_prov USING (files) "
        f"WHERE NOT ({hard})"
    )
    return done, f"SELECT {by} FROM {name}_groups WHERE {hard}"


def _first_pass(cols: list[str]) -> tuple[str, str]:
    """The first pass's states per field (`<column>_kept`, the value a group that is done
    keeps) and the SQL condition that sends a group to the second pass."""
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


def _record(
    key: list[tuple[str, str]],
    values: dict[str, str],
    conflicts: str | None,
    constants: dict[str, str] | None = None,
) -> str:
    """A merged record. A constant field takes its one value in place of `values`' (a field
    no row holds is left out); key members, provenance and constants are never NULL, the
    other values may be."""
    constants = constants or {}
    values = {name: constants.get(name) or value for name, value in values.items()}
    return json_object(
        [*key, *values.items(), (CONFLICTS, conflicts or "NULL"), (PROVENANCE, "provenance")],
        held={*(name for name, _ in key), PROVENANCE, *constants},
    )


def _gathered_records(
    name: str,
    key: list[tuple[str, str]],
    columns: dict[str, str],
    gathered: dict[str, str],
    constants: dict[str, str],
    lookups: str,
    *,
    evidence: bool,
) -> str:
    """SELECT (ord, json) for the gathered groups of `<name>_gathered`: the rules run in
    stages, each a projection over the one before, so that no SQL expression repeats another.
    `gathered` are the fields with value lists, `constants` the others' values; `lookups`
    join the columns `key` names besides the group's."""
    cols = list(gathered.values())
    in_order = ", ".join(
        f"list_filter(list_select({c}_list, list_grade_up(o_list)), lambda x: x IS NOT NULL) AS {c}"
        for c in cols
    )
    if evidence:
        in_order += (", " if cols else "") + (
            "list_select(evidence_list, list_grade_up(o_list)) AS evidence"
        )
    stage = f"SELECT *, {in_order} FROM {name}_gathered" if in_order else f"FROM {name}_gathered"
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
        (n, f"CASE WHEN len({c}_k) > 1 THEN gw_array({c}_k) END") for n, c in gathered.items()
    ]
    any_clash = " OR ".join(f"len({c}_k) > 1" for c in cols)
    conflicts = f"CASE WHEN {any_clash} THEN {json_object(clashes)} END" if cols else None
    record = _record(key, {n: f"{c}_v" for n, c in columns.items()}, conflicts, constants)
    return f"SELECT ord, {record} AS json FROM ({stage}) JOIN {name}_prov USING (files) {lookups}"
