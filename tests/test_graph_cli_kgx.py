"""`graphwright graph` on KGX files as KG-Hub ships them: nodes-only and edges-only files merged
across files (--strict refuses what no file holds), KGX's JSON Lines pair for `.jsonl`, and
`merge --normalize` when the Node Normalizer cannot be reached."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from graphwright.cli import app
from graphwright.cli.graph_batch import _WritingBehind
from graphwright.core.formats import read_graph_pair

runner = CliRunner()
KGHUB = Path(__file__).parent / "fixtures" / "formats" / "kghub"


def _run(*args: str):
    return runner.invoke(app, ["graph", *args])


def test_merge_of_a_nodes_file_and_an_edges_file_infers_only_what_no_file_holds(
    tmp_path: Path,
) -> None:
    nodes = shutil.copy(KGHUB / "kg-microbe_nodes.tsv", tmp_path / "microbe_nodes.tsv")
    edges = shutil.copy(KGHUB / "traits_edges.tsv", tmp_path / "traits_edges.tsv")
    out = tmp_path / "merged.json"
    result = _run("merge", str(nodes), str(edges), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "no file holds CHEBI:16236; added it as ChemicalEntity" in result.output
    merged = orjson.loads(out.read_bytes())
    names = {node["id"]: node.get("name") for node in merged["nodes"]}
    assert names == {
        "NCBITaxon:562": "Escherichia coli",
        "CHEBI:17234": "glucose",
        "CHEBI:16236": None,
    }
    assert len(merged["links"]) == 2  # e1 and e3 share subject, predicate and object


def test_merge_strict_refuses_links_to_nodes_no_file_holds(tmp_path: Path) -> None:
    nodes = shutil.copy(KGHUB / "kg-microbe_nodes.tsv", tmp_path / "microbe_nodes.tsv")
    edges = shutil.copy(KGHUB / "traits_edges.tsv", tmp_path / "traits_edges.tsv")
    out = tmp_path / "merged.json"
    result = _run("merge", str(nodes), str(edges), "-o", str(out), "--strict")
    assert result.exit_code != 0
    assert "'CHEBI:16236', which no file holds" in result.output
    assert not out.exists()


def test_merge_memory_limit_and_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = shutil.copy(KGHUB / "kg-microbe_nodes.tsv", tmp_path / "microbe_nodes.tsv")
    edges = shutil.copy(KGHUB / "traits_edges.tsv", tmp_path / "traits_edges.tsv")
    out, spill = tmp_path / "merged.json", tmp_path / "spill"
    merge = ("merge", str(nodes), str(edges), "-o", str(out))
    result = _run(*merge, "--memory-limit", "lots")
    assert result.exit_code == 2
    assert "--memory-limit: a memory limit is a size such as 2GB or 512MB, not 'lots'" in (
        result.output
    )
    monkeypatch.setenv("GRAPHWRIGHT_MERGE_MEMORY_LIMIT", "1MB")
    result = _run(*merge)
    assert result.exit_code == 2 and not out.exists()
    assert "the merge needs more than its memory limit" in result.output
    result = _run(*merge, "--memory-limit", "256mb", "--temp-dir", str(spill))  # the flag wins
    assert result.exit_code == 0, result.output
    assert len(orjson.loads(out.read_bytes())["nodes"]) == 3
    assert spill.is_dir() and not any(spill.iterdir())  # the merge's own folder went with it


def test_convert_to_jsonl_writes_the_pair_kgx_reads(tmp_path: Path) -> None:
    nodes = shutil.copy(KGHUB / "kg-microbe_nodes.tsv", tmp_path / "microbe_nodes.tsv")
    result = _run("convert", str(nodes), str(tmp_path / "out.jsonl"))
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out.jsonl").exists()
    written = [(tmp_path / name).read_text() for name in ("out_nodes.jsonl", "out_edges.jsonl")]
    graph = read_graph_pair(*written, "kgx-jsonl")
    assert [node["id"] for node in graph["nodes"]] == ["NCBITaxon:562", "CHEBI:17234"]


def test_merge_normalize_offline_falls_back_to_the_input_equivalences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphwright.settings import get_settings

    with socket.socket() as closed:  # a port nothing listens on: the service is unreachable
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("GRAPHWRIGHT_NODE_NORMALIZER_URL", f"http://127.0.0.1:{port}")
    get_settings.cache_clear()
    source = tmp_path / "genes.json"
    source.write_bytes(
        orjson.dumps(
            {
                "nodes": [
                    {"id": "HGNC:11998", "equivalent_ids": ["NCBIGene:7157"]},
                    {"id": "NCBIGene:7157"},
                ],
                "links": [],
            }
        )
    )
    out = tmp_path / "merged.json"
    try:
        result = _run("merge", str(source), "-o", str(out), "--normalize")
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert "merged with the equivalences in the input only" in result.output
    assert [node["id"] for node in orjson.loads(out.read_bytes())["nodes"]] == ["NCBIGene:7157"]


XREF_NODES = "id\tcategory\tname\txref\n" + (
    "MONDO:0005148\tbiolink:Disease\ttype 2 diabetes\tDOID:9352\n"
    "DOID:9352\tbiolink:Disease\ttype 2 diabetes mellitus\t\n"
    "NCBIGene:3643\tbiolink:Gene\tINSR\t\n"
)
XREF_EDGES = "id\tsubject\tpredicate\tobject\n" + (
    "e1\tNCBIGene:3643\tbiolink:gene_associated_with_condition\tDOID:9352\n"
)


@pytest.mark.parametrize("reader", ["kgx", "json"])
@pytest.mark.parametrize("asked", ["flag", "setting"])
def test_merge_treats_xref_as_equivalence_only_when_asked(
    reader: str, asked: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if reader == "kgx":  # DuckDB's batch merge
        (tmp_path / "d_nodes.tsv").write_text(XREF_NODES)
        (tmp_path / "d_edges.tsv").write_text(XREF_EDGES)
        files = [str(tmp_path / "d_nodes.tsv"), str(tmp_path / "d_edges.tsv")]
    else:  # the accumulator
        nodes = read_graph_pair(XREF_NODES, XREF_EDGES, "kgx-tsv")["nodes"]
        links = [{"source": "NCBIGene:3643", "label": "related_to", "target": "DOID:9352"}]
        (tmp_path / "d.json").write_bytes(orjson.dumps({"nodes": nodes, "links": links}))
        files = [str(tmp_path / "d.json")]
    out = tmp_path / "merged.json"

    result = _run("merge", *files, "-o", str(out))
    assert result.exit_code == 0, result.output
    merged = orjson.loads(out.read_bytes())
    assert len(merged["nodes"]) == 3
    assert ("MONDO:0005148", "xref", "DOID:9352") in {
        (link["source"], link["label"], link["target"]) for link in merged["links"]
    }

    if asked == "flag":
        result = _run("merge", *files, "-o", str(out), "--xref-equivalence")
    else:
        monkeypatch.setenv("GRAPHWRIGHT_MERGE_XREF_EQUIVALENCE", "true")
        result = _run("merge", *files, "-o", str(out))
    assert result.exit_code == 0, result.output
    merged = orjson.loads(out.read_bytes())
    assert sorted(node["id"] for node in merged["nodes"]) == ["MONDO:0005148", "NCBIGene:3643"]
    assert [(link["source"], link["target"]) for link in merged["links"]] == [
        ("NCBIGene:3643", "MONDO:0005148")
    ]


def test_writing_behind_keeps_the_order_and_raises_a_failed_write() -> None:
    written: list[bytes] = []

    class FullDisk:
        def write(self, data: bytes) -> int:
            if len(written) == 2:
                raise OSError(28, "No space left on device")
            written.append(bytes(data))
            return len(data)

    with pytest.raises(OSError, match="No space left"), _WritingBehind(FullDisk()) as write:
        for number in range(100):
            write(b"%d" % number)
    assert written == [b"0", b"1"]
