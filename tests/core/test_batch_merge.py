"""The batch merge of KGX files (DuckDB) gives the graph GraphAccumulator gives, node for node
and link for link, on random files and on the test fixtures."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphwright.core.batch_merge import BatchInput, BatchMerge, engine
from graphwright.core.formats import read_graph, read_graph_pair
from graphwright.core.graph import GraphFormatError
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_files import merge_files
from tests.core.canonical import canonical_graph

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"

IDS = ["NCBIGene:1", "ncbigene:1", " NCBIGene:2", "HGNC:5", "hgnc:5", "MONDO:0001", "CHEBI:7",
       "GO:0008150", "X:1", "plain", "http://purl.obolibrary.org/obo/MONDO_0001"]  # fmt: skip
CATEGORIES = ["biolink:Gene", "biolink:Protein", "biolink:Disease", "biolink:BiologicalProcess",
              "Gene", "biolink:Gene|biolink:Protein"]  # fmt: skip
TEXT = ["a", "b", "a|b", "123", "true", "[1]", '{"k": 1}', " c ", "null"]
PREDICATES = ["biolink:related_to", "biolink:treats", "RO:0002434", "biolink:interacts_with"]
PUBLICATIONS = ["PMID:1", "pmid:2", "PMID: 3", "https://pubmed.ncbi.nlm.nih.gov/4/", "doi:10.1/x",
                "PMID:1|PMID:5"]  # fmt: skip

NODE_CELLS = {
    "category": st.sampled_from(CATEGORIES),
    "name": st.sampled_from(TEXT),
    "xref": st.lists(st.sampled_from(IDS), min_size=1, max_size=2).map("|".join),
    "same_as": st.sampled_from(IDS),
    "graphwright:json:equivalent_ids": st.lists(st.sampled_from(IDS), max_size=2).map(
        lambda ids: orjson.dumps(ids).decode()
    ),
    "synonym": st.sampled_from(TEXT),
    "provided_by": st.sampled_from(["infores:a", "infores:b", "infores:a|infores:c"]),
    "description": st.sampled_from(TEXT),
}
EDGE_CELLS = {
    "id": st.sampled_from(["e1", "e2", "gw-link-3"]),
    "publications": st.sampled_from(PUBLICATIONS),
    "primary_knowledge_source": st.sampled_from(["infores:a", "infores:b"]),
    "knowledge_level": st.sampled_from(TEXT),
    "graphwright:label": st.sampled_from(["treats", '"x"']),
}
JSON_VALUES = (
    st.sampled_from(TEXT) | st.integers(0, 3) | st.lists(st.sampled_from(TEXT), max_size=2)
)


def _rows(cells: dict, fixed: dict) -> st.SearchStrategy[list[dict]]:
    optional = st.fixed_dictionaries(fixed, optional={k: v | st.just("") for k, v in cells.items()})
    return st.lists(optional, max_size=6)


node_rows = _rows(NODE_CELLS, {"id": st.sampled_from(IDS)})
edge_rows = _rows(
    EDGE_CELLS,
    {
        "subject": st.sampled_from(IDS),
        "predicate": st.sampled_from(PREDICATES),
        "object": st.sampled_from(IDS),
    },
)


def _write_tsv(path: Path, rows: list[dict], first: tuple[str, ...]) -> None:
    columns = list(dict.fromkeys([*first, *(key for row in rows for key in row)]))
    lines = ["\t".join(columns), *("\t".join(row.get(c, "") for c in columns) for row in rows)]
    path.write_text("\n".join(lines) + "\n")


def _json_record(row: dict, draw_value) -> dict:
    record = {}
    for key, cell in row.items():
        key = key.removeprefix("graphwright:json:")
        record[key] = orjson.loads(cell) if key == "equivalent_ids" and cell else cell
    return record


def _inputs(tmp: Path, files: list[tuple[str, list[dict], list[dict]]]) -> list[BatchInput]:
    inputs = []
    for number, (fmt, nodes, edges) in enumerate(files):
        stem = tmp / f"in{number}"
        if fmt == "kgx-tsv":
            _write_tsv(stem.with_name(f"in{number}_nodes.tsv"), nodes, ("id",))
            _write_tsv(
                stem.with_name(f"in{number}_edges.tsv"), edges, ("subject", "predicate", "object")
            )
            inputs.append(BatchInput(f"in{number}", fmt, stem.with_name(f"in{number}_nodes.tsv"),
                                     stem.with_name(f"in{number}_edges.tsv")))  # fmt: skip
        else:
            lines = [orjson.dumps(_json_record(row, None)) for row in nodes + edges]
            path = stem.with_name(f"in{number}.jsonl")
            path.write_bytes(b"\n".join(lines) + b"\n")
            inputs.append(BatchInput(f"in{number}", fmt, stream=path))
    return inputs


def _accumulated(inputs: list[BatchInput], **options: bool) -> tuple[dict, list]:
    """The reference: the files read by core/formats and merged by GraphAccumulator."""
    named = []
    for item in inputs:
        if item.stream is not None:
            graph = read_graph(item.stream.read_bytes(), item.fmt, partial=True)
        else:
            graph = read_graph_pair(
                *(path.read_bytes() if path else b"" for path in (item.nodes, item.edges)),
                item.fmt,
                partial=True,
            )
        named.append((item.result_id, graph))
    accumulator = GraphAccumulator(key_by_source=options.get("key_by_source", False))
    outcome = merge_files(accumulator, named, strict=options.get("strict", False))
    refused = [(r.first, r.second, r.reason) for r in accumulator.report.refused]
    return accumulator.to_graph(), [outcome.inferred, refused]


def _batched(inputs: list[BatchInput], **options) -> tuple[dict, list]:
    with BatchMerge(inputs, **options) as merge:
        merge.run()
        graph = merge.to_graph()
        assert (merge.node_count, merge.link_count) == (len(graph["nodes"]), len(graph["links"]))
        refused = [(r.first, r.second, r.reason) for r in merge.report.refused]
        return graph, [merge.inferred, refused]


def assert_same_merge(inputs: list[BatchInput], **options: bool) -> dict:
    expected, expected_notes = _accumulated(inputs, **options)
    got, got_notes = _batched(inputs, **options)
    assert canonical_graph(got) == canonical_graph(expected)
    assert got_notes == expected_notes
    return got


files = st.lists(
    st.tuples(st.sampled_from(["kgx-tsv", "kgx-jsonl"]), node_rows, edge_rows),
    min_size=1,
    max_size=3,
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=files, key_by_source=st.booleans())
def test_batch_merge_gives_the_accumulators_graph(
    tmp_path_factory: pytest.TempPathFactory, files: list, key_by_source: bool
) -> None:
    tmp = tmp_path_factory.mktemp("batch")
    assert_same_merge(_inputs(tmp, files), key_by_source=key_by_source)


def _fixtures() -> list[BatchInput]:
    return [
        BatchInput("kgx", "kgx-tsv", FIXTURES / "kgx_nodes.tsv", FIXTURES / "kgx_edges.tsv"),
        BatchInput(
            "short",
            "kgx-tsv",
            FIXTURES / "kgx_short_rows" / "nodes.tsv",
            FIXTURES / "kgx_short_rows" / "edges.tsv",
        ),
        BatchInput("microbe", "kgx-tsv", FIXTURES / "kghub" / "kg-microbe_nodes.tsv", None),
        BatchInput("traits", "kgx-tsv", None, FIXTURES / "kghub" / "traits_edges.tsv"),
    ]


def test_batch_merge_of_the_fixtures() -> None:
    graph = assert_same_merge(_fixtures())
    assert len(graph["nodes"]) > 3 and graph["links"]


def test_output_sorted_a_range_at_a_time_keeps_first_seen_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole, _ = _batched(_fixtures())
    monkeypatch.setattr(engine, "_SORTED_ROWS", 2)
    ranged, _ = _batched(_fixtures())
    assert len(whole["nodes"]) > 2 * 2 and len(whole["links"]) > 2 * 2
    assert ranged == whole


def test_batch_merge_strict_names_the_missing_node() -> None:
    inputs = [BatchInput("traits", "kgx-tsv", None, FIXTURES / "kghub" / "traits_edges.tsv")]
    with pytest.raises(GraphFormatError, match="which no file holds"):
        _batched(inputs, strict=True)


def test_batch_merge_names_a_file_without_an_id_column(tmp_path: Path) -> None:
    path = tmp_path / "nodes.tsv"
    path.write_text("name\tcategory\nx\tbiolink:Gene\n")
    with pytest.raises(GraphFormatError, match=r"nodes\.tsv has no 'id' column"):
        _batched([BatchInput("x", "kgx-tsv", path, None)])
