"""The batch merge of KGX files in DuckDB (docs/merge.md, "Batch merge of files").

`BatchMerge(inputs).run()` reads every file into DuckDB and merges by the accumulator's rules:
the merged nodes are JSON text in a table, the links a view whose records of links met once
are built as it is read; `to_graph()`, `node_batches()` and `link_batches()` read them in
first-seen order. DuckDB spills to `temp_directory` when the
data outgrow `memory_limit`, so inputs larger than memory merge too. Reading the files is in
reading.py, the links in links.py; ids, equivalences and nodes are here.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from graphwright.core.batch_merge.grouping import drop_merged, merge_groups
from graphwright.core.batch_merge.identity import merge_equivalences, normalise_ids
from graphwright.core.batch_merge.inputs import BatchInput, Fields, first_error_line, literal
from graphwright.core.batch_merge.links import merge_links
from graphwright.core.batch_merge.reading import read_inputs
from graphwright.core.batch_merge.rules import MACROS, json_object
from graphwright.core.graph import GraphFormatError, inferred_node
from graphwright.core.merge_files import InferredNode
from graphwright.core.merge_rules import (
    ATTRIBUTES,
    SAME_AS_ATTRIBUTES,
    MergeReport,
    equivalence_fields,
)
from graphwright.errors import GraphwrightError, InvalidInput

_FETCH = 50_000
_SORTED_ROWS = 1_000_000  # rows the output is sorted by at a time
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B)\s*", re.IGNORECASE)


class MergeOutOfMemory(GraphwrightError):
    """The merge needs more memory than its limit allows, even spilling to disk."""


def memory_limit(text: str) -> str:
    """`text` as DuckDB's memory_limit (`2GB`, `512MiB`), or InvalidInput naming the problem."""
    size = _SIZE.fullmatch(text)
    if size is None:
        raise InvalidInput(f"a memory limit is a size such as 2GB or 512MB, not {text!r}")
    number, unit = size.groups()
    return f"{number}{unit[0].upper()}{unit[1:-1].lower()}B"


@dataclass
class BatchMerge:
    """A merge of KGX files in DuckDB; `run()` it, read the result, then `close()` it."""

    inputs: list[BatchInput]
    key_by_source: bool = False
    xref_equivalence: bool = False
    strict: bool = False
    memory_limit: str | None = None  # DuckDB's setting, e.g. "2GB"
    temp_directory: Path | None = None
    step: str = "starting"  # what `run()` is doing (for a progress display)
    report: MergeReport = field(default_factory=MergeReport)
    inferred: list[InferredNode] = field(default_factory=list)
    node_count: int = 0
    link_count: int = 0

    def __post_init__(self) -> None:
        if self.memory_limit:  # refused before any folder or connection is made
            self.memory_limit = memory_limit(self.memory_limit)
        if self.temp_directory is not None:
            self.temp_directory.mkdir(parents=True, exist_ok=True)
        self._directory = Path(
            tempfile.mkdtemp(prefix="graphwright-merge-", dir=self.temp_directory)
        )
        # in memory, spilling to the temporary directory beyond `memory_limit`
        self.con = duckdb.connect()
        self.con.execute(f"SET temp_directory = {literal(str(self._directory))}")
        if self.memory_limit:
            self.con.execute(f"SET memory_limit = {literal(self.memory_limit)}")
        self.con.execute("SET preserve_insertion_order = true")
        self.con.execute(";\n".join(MACROS))
        self._node_fields = Fields()
        self._node_fields.column("category")  # inferred nodes have one
        self._edge_fields = Fields()
        self._names = [item.result_id for item in self.inputs]

    def close(self) -> None:
        self.con.close()
        shutil.rmtree(self._directory, ignore_errors=True)

    def __enter__(self) -> BatchMerge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def counts(self) -> tuple[int, int]:
        return self.node_count, self.link_count

    def query_progress(self) -> float:
        """The running query's progress in percent (-1 when DuckDB cannot tell)."""
        return self.con.query_progress()

    def run(self) -> None:
        try:
            self._run()
        except duckdb.OutOfMemoryException:
            limit = self.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
            raise MergeOutOfMemory(
                f"the merge needs more than its memory limit ({limit}), even spilling to "
                f"{self._directory.parent}; raise the limit"
            ) from None

    def _run(self) -> None:
        self.step = "reading"
        try:
            read_inputs(
                self.con,
                self.inputs,
                self._node_fields,
                self._edge_fields,
                key_by_source=self.key_by_source,
            )
        except duckdb.OutOfMemoryException:
            raise
        except duckdb.Error as exc:
            raise GraphFormatError(f"cannot read the files: {first_error_line(exc)}") from None
        # rows were numbered in file order; from here on every query orders what it needs
        self.con.execute("SET preserve_insertion_order = false")
        self.step = "identifiers"
        self._normalise()
        self.step = "equivalences"
        self._declared()
        # The nodes of no equivalence merge in DuckDB, on a cursor of their own and one
        # thread, while the others go through the accumulator in Python on the other core.
        with self._one_thread(), ThreadPoolExecutor(1, thread_name_prefix="nodes") as pool:
            plain = pool.submit(self._merge_plain_nodes)
            self._equivalences()
            self.step = "inferred nodes"
            self._infer_missing()
            self.step = "nodes"
            plain.result()
        self._nodes_out()
        # what the links are made from stays; the node rows and the rest leave their memory
        self._drop_tables_but("edge_rows", "ids", "leaders", "nodes_out")
        self.step = "links"
        self.link_count = merge_links(
            self.con,
            self._edge_fields,
            self._names,
            key_by_source=self.key_by_source,
            xref_equivalence=self.xref_equivalence,
        )
        # what the result is read from stays; the rest leaves its memory to the reading
        self._drop_tables_but("nodes_out", "xref_out")
        self.step = "done"

    def _drop_tables_but(self, *kept: str) -> None:
        """Drop every table but those named and the merged links' (`links_out_*`)."""
        for (table,) in self.con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            if table not in kept and not table.startswith("links_out_"):
                self.con.execute(f"DROP TABLE {table}")

    @contextmanager
    def _one_thread(self) -> Iterator[None]:
        """DuckDB on one thread, leaving the other core to Python."""
        threads = self.con.execute("SELECT current_setting('threads')").fetchone()[0]
        self.con.execute("SET threads = 1")
        try:
            yield
        finally:
            self.con.execute(f"SET threads = {threads}")

    # -- identifiers -----------------------------------------------------------------------------

    def _declaration_columns(self, fields: tuple[str, ...]) -> dict[str, str]:
        """Field name -> its column, for the fields the nodes have."""
        columns = self._node_fields.columns
        return {name: columns[name] for name in fields if name in columns}

    def _declared_ids(self, columns: dict[str, str]) -> str:
        """SQL selecting `raw`: the ids the nodes declare in `columns` (`declared_ids`: string
        items, the Node Normalizer's `{"identifier"}` objects, `biolink:same_as` attributes)."""
        items = []
        for name, column in columns.items():
            values = (
                f"SELECT unnest(gw_items({column})) AS item FROM node_rows "
                f"WHERE {column} IS NOT NULL"
            )
            if name == ATTRIBUTES:
                kinds = ", ".join(literal(kind) for kind in sorted(SAME_AS_ATTRIBUTES))
                values = (
                    "SELECT unnest(gw_items((attribute->'$.value')::VARCHAR)) AS item FROM ("
                    f"{values.replace(' AS item', ' AS attribute')}) "
                    f"WHERE attribute->>'$.attribute_type_id' IN ({kinds})"
                )
            items.append(values)
        return (
            "SELECT CASE WHEN json_type(item) = 'OBJECT' THEN item->>'$.identifier' "
            f"ELSE item::JSON->>'$' END AS raw FROM ({' UNION ALL '.join(items)}) "
            "WHERE json_type(item) = 'VARCHAR' OR (json_type(item) = 'OBJECT' "
            "AND json_type(item->'$.identifier') = 'VARCHAR')"
        )

    def _normalise(self) -> None:
        named = self._declaration_columns(equivalence_fields(xref_equivalence=True))
        declared = f" UNION ALL {self._declared_ids(named)}" if named else ""
        normalise_ids(
            self.con,
            "SELECT raw FROM node_rows UNION ALL SELECT subject FROM edge_rows "
            f"UNION ALL SELECT object FROM edge_rows{declared}",
        )

    def _equivalence_columns(self) -> dict[str, str]:
        return self._declaration_columns(equivalence_fields(xref_equivalence=self.xref_equivalence))

    def _declared(self) -> None:
        """`declared (norm)`: the ids that take part in an equivalence (a node declares one,
        or some node declares it)."""
        columns = self._equivalence_columns()
        if not columns:
            self.con.execute("CREATE TABLE declared (norm VARCHAR)")
            return
        declaring = " OR ".join(f"{column} IS NOT NULL" for column in columns.values())
        self.con.execute(
            "CREATE TABLE declared AS SELECT DISTINCT norm FROM ("
            f"SELECT norm FROM node_rows JOIN ids USING (raw) WHERE {declaring} "
            f"UNION ALL SELECT norm FROM ({self._declared_ids(columns)}) JOIN ids USING (raw))"
        )

    def _equivalences(self) -> None:
        """Route the nodes that take part in an equivalence to the accumulator's rules."""
        if not self._equivalence_columns():
            self.con.execute("CREATE TABLE routed_nodes (id VARCHAR, json VARCHAR)")
            self.con.execute("CREATE TABLE leaders (norm VARCHAR, leader VARCHAR)")
            self.con.execute("CREATE TABLE routed_ord (id VARCHAR, ord BIGINT)")
            return
        record = json_object(
            [("id", "to_json(raw)::VARCHAR")]
            + [(name, column) for name, column in self._node_fields.columns.items()],
            held={"id"},
        )
        rows = (
            f"SELECT file_no, node_rows.rowid AS ord, {record} AS record FROM node_rows "
            "JOIN ids USING (raw) SEMI JOIN declared USING (norm)"
        )
        self.report = merge_equivalences(
            self.con,
            rows,
            self._names,
            key_by_source=self.key_by_source,
            xref_equivalence=self.xref_equivalence,
        )
        self.con.execute(
            "CREATE TABLE routed_ord AS SELECT coalesce(leader, norm) AS id, min(node_rows.rowid) "
            "AS ord FROM node_rows JOIN ids USING (raw) SEMI JOIN declared USING (norm) "
            "LEFT JOIN leaders USING (norm) GROUP BY ALL"
        )

    # -- nodes -----------------------------------------------------------------------------------

    def _ends(self) -> str:
        """Each edge end with its node's id (the class leader), in input order."""
        return (
            "SELECT file_no, end_raw, coalesce(leader, norm) AS node, position FROM ("
            "SELECT file_no, subject AS end_raw, rowid * 2 AS position FROM edge_rows "
            "UNION ALL SELECT file_no, object, rowid * 2 + 1 FROM edge_rows) "
            "JOIN ids ON ids.raw = end_raw LEFT JOIN leaders USING (norm)"
        )

    def _node_ids(self) -> str:
        return (
            "SELECT norm AS node FROM node_rows JOIN ids USING (raw) "
            "ANTI JOIN declared USING (norm) UNION ALL SELECT id FROM routed_nodes"
        )

    def _infer_missing(self) -> None:
        """A link end no file holds becomes a node with a category from its prefix (as KGX
        does), made by the first file naming it; `strict` refuses it."""
        # the few spellings whose node no file holds first, then only their link ends
        missing = self.con.execute(
            "WITH unknown AS (SELECT raw FROM ids LEFT JOIN leaders USING (norm) "
            f"ANTI JOIN ({self._node_ids()}) known ON known.node = coalesce(leader, norm)), "
            f"missing AS (SELECT * FROM ({self._ends()}) SEMI JOIN unknown "
            "ON unknown.raw = end_raw), "
            "firsts AS (SELECT node, min(file_no) AS first_file FROM missing GROUP BY node) "
            "SELECT file_no, end_raw, min(position) AS p "
            "FROM missing JOIN firsts ON missing.node = firsts.node AND file_no = first_file "
            "GROUP BY file_no, end_raw ORDER BY file_no, p"
        ).fetchall()
        if missing and self.strict:
            file_no, end, _ = missing[0]
            raise GraphFormatError(
                f"{self._names[file_no]}: a link points to node {end!r}, which no file holds"
            )
        if not missing:
            return
        stubs = [inferred_node(end) for _, end, _ in missing]
        self.inferred = [
            InferredNode(stub["id"], stub["category"], self._names[file_no])
            for stub, (file_no, _, _) in zip(stubs, missing, strict=True)
        ]
        table = pa.table(
            {
                "file_no": [row[0] for row in missing],
                "raw": [stub["id"] for stub in stubs],
                "category": [orjson.dumps(stub["category"]).decode() for stub in stubs],
            }
        )
        self.con.register("stub_batch", table)
        self.con.execute("CREATE TABLE stub_rows AS SELECT * FROM stub_batch")
        self.con.unregister("stub_batch")
        # a stub's node is no file's: its rows make groups of their own, after the files'
        after = self.con.execute("SELECT count(*) FROM node_rows").fetchone()[0]
        category = {"category": "category"}
        self._merge_node_rows(self.con, "stub_nodes", "stub_rows", after, category)

    def _merge_plain_nodes(self) -> None:
        """Merge the file nodes that take part in no equivalence (most of them)."""
        with self.con.cursor() as con:
            columns = self._node_fields.columns
            self._merge_node_rows(con, "plain_nodes", "node_rows", 0, columns, plain=True)

    def _merge_node_rows(
        self,
        con: duckdb.DuckDBPyConnection,
        name: str,
        table: str,
        after: int,
        columns: dict[str, str],
        *,
        plain: bool = False,
    ) -> None:
        """Merge the rows of `table` by normalised id into `name`; row n is `after + n` in
        input order. `plain` leaves out the ids of equivalences."""
        rows = (
            f"SELECT ids.norm AS id, {after} + {table}.rowid AS o, file_no"
            + "".join(f", {c}" for c in columns.values())
            + f" FROM {table} JOIN ids USING (raw)"
            + (" ANTI JOIN declared USING (norm)" if plain else "")
        )
        key = [("id", "to_json(id)::VARCHAR")]
        merge_groups(con, name, rows, ["id"], key, columns, self._names, evidence=False)

    def _nodes_out(self) -> None:
        merged = ["plain_nodes", *(["stub_nodes"] if self.inferred else [])]
        self.con.execute(
            "CREATE TABLE nodes_out AS "
            + "".join(
                f"SELECT ord, json->>'$.id' AS id, json FROM {name} UNION ALL " for name in merged
            )
            + "SELECT ord, id, json FROM routed_nodes JOIN routed_ord USING (id)"
        )
        for name in merged:
            drop_merged(self.con, name)
        self.node_count = self.con.execute("SELECT count(*) FROM nodes_out").fetchone()[0]

    # -- the result ------------------------------------------------------------------------------

    def node_batches(self) -> Iterator[pa.StringArray]:
        """The merged nodes as JSON texts, in first-seen order, a batch at a time."""
        return self._in_order("nodes_out")

    def link_batches(self) -> Iterator[pa.StringArray]:
        """The merged links as JSON texts, in first-seen order, then the xref links."""
        yield from self._in_order("links_out")
        yield from self._in_order("xref_out")

    def _in_order(self, table: str) -> Iterator[pa.StringArray]:
        """The JSON texts of `table` by `ord`, sorted a range of `ord` at a time.

        One ORDER BY of millions of texts spills them all to disk and reads them back; a range
        of `_SORTED_ROWS` rows sorts in memory (1M/5M: 2.7 s against 7.3 s for 9M links).
        """
        count, low, high = self.con.execute(
            f"SELECT count(*), min(ord), max(ord) FROM {table}"
        ).fetchone()
        if not count:
            return
        width = (high - low) // -(-count // _SORTED_ROWS) + 1  # ords are row numbers: dense
        for start in range(low, high + 1, width):
            sql = (
                f"SELECT json FROM {table} WHERE ord >= {start} AND ord < {start + width} "
                "ORDER BY ord"
            )
            for batch in self.con.cursor().sql(sql).to_arrow_reader(_FETCH):
                yield batch.column(0)

    def to_graph(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "nodes": [orjson.loads(text) for b in self.node_batches() for text in b.to_pylist()],
            "links": [orjson.loads(text) for b in self.link_batches() for text in b.to_pylist()],
        }
