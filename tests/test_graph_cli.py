"""`graphwright graph merge|convert|stats`, run through Typer's CliRunner on real files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from graphwright.cli import app
from graphwright.core.formats import read_graph, write_graph, write_graph_pair
from graphwright.core.graph import load_graph

runner = CliRunner()

KG = "application/vnd.knowledge-graph"
FIRST = {
    "nodes": [
        {"id": "NCBIGene:7157", "name": "TP53", "category": "Gene"},
        {"id": "MONDO:0004992", "name": "cancer", "category": "Disease"},
    ],
    "links": [
        {
            "source": "NCBIGene:7157",
            "target": "MONDO:0004992",
            "label": "associated with",
            "evidence": ["PMID:1"],
            "primary_knowledge_source": "infores:a",
        }
    ],
}
SECOND = {
    "nodes": [
        {"id": "ncbigene:7157", "name": "TP53"},
        {"id": "MONDO:0004992", "name": "cancer"},
        {"id": "CHEBI:41774", "name": "tamoxifen", "category": "SmallMolecule"},
    ],
    "links": [
        {
            "source": "ncbigene:7157",
            "target": "MONDO:0004992",
            "label": "associated with",
            "evidence": ["PMID:2"],
            "primary_knowledge_source": "infores:b",
        },
        {"source": "CHEBI:41774", "target": "ncbigene:7157", "label": "affects", "evidence": []},
    ],
}


def _tool_result(graph: dict[str, Any], *, as_text: bool) -> bytes:
    content: Any = orjson.dumps(graph).decode() if as_text else graph
    return orjson.dumps(
        {
            "content": [{"type": "text", "text": "a graph"}],
            "artifacts": [
                {"type": KG, "id": "kg-1", "title": "Knowledge Graph", "content": content}
            ],
            "isError": False,
        }
    )


@pytest.fixture
def results(tmp_path: Path) -> list[Path]:
    first = tmp_path / "call-1.json"
    second = tmp_path / "call-2.json"
    first.write_bytes(_tool_result(FIRST, as_text=True))
    second.write_bytes(_tool_result(SECOND, as_text=False))
    return [first, second]


def _run(*args: str) -> Any:
    return runner.invoke(app, ["graph", *args])


def test_merge_tool_results(results: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "merged.json"
    result = _run("merge", *map(str, results), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert f"into {out}: 3 nodes, 2 links" in result.stdout
    merged = orjson.loads(out.read_bytes())
    tp53 = merged["nodes"][0]
    assert tp53["id"] == "NCBIGene:7157"
    assert tp53["provenance"] == ["call-1.json", "call-2.json"]
    association = merged["links"][0]
    assert association["evidence"] == ["PMID:1", "PMID:2"]


def test_merge_keeps_sources_apart_when_asked(results: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "merged.json"
    result = _run("merge", *map(str, results), "-o", str(out), "--key-by-source")
    assert result.exit_code == 0, result.output
    assert len(orjson.loads(out.read_bytes())["links"]) == 3


def test_merge_reads_any_input_format_and_writes_the_chosen_one(
    results: list[Path], tmp_path: Path
) -> None:
    trapi = tmp_path / "answer.json"  # TRAPI recognised by its shape
    trapi.write_text(str(write_graph(SECOND, "trapi")))
    kgx = tmp_path / "kgx"
    kgx.mkdir()
    nodes, edges = write_graph_pair(FIRST, "kgx-tsv")
    (kgx / "nodes.tsv").write_text(nodes)
    (kgx / "edges.tsv").write_text(edges)
    out = tmp_path / "merged.graphml"
    result = _run("merge", str(trapi), str(kgx), str(results[0]), "-o", str(out))
    assert result.exit_code == 0, result.output
    merged = read_graph(out.read_text(), "graphml")
    assert [node["id"] for node in merged["nodes"]] == [
        "NCBIGene:7157",
        "MONDO:0004992",
        "CHEBI:41774",
    ]
    assert merged["links"][0]["evidence"] == ["PMID:2", "PMID:1"]
    assert merged["links"][0]["provenance"] == ["answer.json", "kgx", "call-1.json"]


@pytest.mark.parametrize("fmt", ["json", "trapi", "kgx-jsonl", "kgx-tsv", "graphml", "cx2"])
def test_convert_round_trips_through_files(fmt: str, tmp_path: Path) -> None:
    source = tmp_path / "graph.json"
    source.write_bytes(orjson.dumps(SECOND))
    middle = tmp_path / ("middle.tar" if fmt == "kgx-tsv" else "middle.out")
    back = tmp_path / "back.json"
    assert _run("convert", str(source), str(middle), "--to", fmt).exit_code == 0
    result = _run("convert", str(middle), str(back), "--from", fmt, "--to", "json")
    assert result.exit_code == 0, result.output
    expected = load_graph(SECOND)
    if fmt == "trapi":  # TRAPI needs a category: NamedThing when none is known
        for node in expected["nodes"]:
            node.setdefault("category", "NamedThing")
    assert orjson.loads(back.read_bytes()) == expected


@pytest.mark.parametrize("fmt", ["kgx-jsonl", "kgx-tsv"])
def test_convert_writes_and_reads_kgx_pairs(fmt: str, tmp_path: Path) -> None:
    source = tmp_path / "graph.json"
    source.write_bytes(orjson.dumps(SECOND))
    ext = fmt.removeprefix("kgx-")
    directory = tmp_path / "out"
    assert _run("convert", str(source), f"{directory}/", "--to", fmt).exit_code == 0
    assert sorted(p.name for p in directory.iterdir()) == [f"edges.{ext}", f"nodes.{ext}"]
    assert _run("convert", str(source), str(tmp_path / "g"), "--to", fmt).exit_code == 0
    assert (tmp_path / f"g_nodes.{ext}").is_file() and (tmp_path / f"g_edges.{ext}").is_file()
    for given in (directory, tmp_path / "g", tmp_path / f"g_edges.{ext}"):
        back = tmp_path / "back.json"
        result = _run("convert", str(given), str(back))
        assert result.exit_code == 0, result.output
        assert orjson.loads(back.read_bytes()) == load_graph(SECOND)


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("g.cyjs", lambda text: len(orjson.loads(text)["elements"]["edges"]) == 2),
        (
            "g.cx2",
            lambda text: orjson.loads(text)[0] == {"CXVersion": "2.0", "hasFragments": False},
        ),
        ("g.jsonld", lambda text: "@context" in orjson.loads(text)),
        ("g.nt", lambda text: "<http://www.w3.org/1999/02/22-rdf-syntax-ns#Statement>" in text),
    ],
)
def test_convert_to_write_only_formats_by_extension(name: str, check: Any, tmp_path: Path) -> None:
    source = tmp_path / "graph.json"
    source.write_bytes(orjson.dumps(SECOND))
    result = _run("convert", str(source), str(tmp_path / name))
    assert result.exit_code == 0, result.output
    assert check((tmp_path / name).read_text())


def test_stats(results: list[Path], tmp_path: Path) -> None:
    merged = tmp_path / "merged.json"
    _run("merge", *map(str, results), "-o", str(merged))
    result = runner.invoke(app, ["graph", "stats", str(merged)], terminal_width=200)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any("nodes" in line and "3" in line for line in lines)
    assert any("evidence items" in line and "2 (2 distinct)" in line for line in lines)
    assert any("SmallMolecule" in line and "1" in line for line in lines)
    top = next(line for line in lines if "NCBIGene:7157" in line)
    assert "TP53" in top and top.rstrip(" │").endswith("2")


def _bad(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.json", '{"nodes": [', "broken.json: invalid JSON at line 1"),
        (
            "dangling.json",
            orjson.dumps({"nodes": [{"id": "A:1"}], "links": [{"source": "A:1", "target": "B:2"}]}),
            "dangling.json: link 0 points to missing node 'B:2'",
        ),
        (
            "no-graph.json",
            orjson.dumps({"artifacts": [{"type": "text/markdown", "content": "# grant"}]}),
            "no-graph.json: tool result holds no application/vnd.knowledge-graph artifact",
        ),
        ("graph.xyz", "{}", "graph.xyz: cannot tell the format of 'graph.xyz'"),
        ("g.graphml", "<graphml", "g.graphml: invalid GraphML"),
        (
            "bad.jsonl",
            '{"id": "A:1"}\n{"id": "e", "subject": "A:1", "object": "A:1"}\n',
            "bad.jsonl: kgx-jsonl line 2: edge 'e' has no predicate",
        ),
    ],
)
@pytest.mark.parametrize("command", ["merge", "convert", "stats"])
def test_bad_input_gives_one_line_and_status_2(
    command: str, name: str, content: str | bytes, message: str, tmp_path: Path
) -> None:
    path = _bad(tmp_path, name, content)
    out = str(tmp_path / "out.json")
    args = {
        "merge": ["merge", str(path), "-o", out],
        "convert": ["convert", str(path), out],
        "stats": ["stats", str(path)],
    }[command]
    result = runner.invoke(app, ["graph", *args], terminal_width=80)
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    assert message in line
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["convert", "{good}", "{tmp}/x.json", "--to", "foo"],
            "unknown format 'foo'; choose one of:",
        ),
        (["convert", "{good}", "{tmp}/x.json", "--from", "foo"], "unknown format 'foo'"),
        (["merge", "{good}", "-o", "{tmp}/x.json", "--format", "nope"], "unknown format 'nope'"),
        (["merge", "{tmp}/missing.json", "-o", "{tmp}/x.json"], "missing.json: no such file"),
        (["stats", "{tmp}/missing.json"], "missing.json: no such file"),
        (["convert", "{good}", "{tmp}/no/such/dir/x.json"], "cannot write x.json"),
        (["stats", "{tmp}"], "is a directory without KGX nodes and edges files"),
    ],
)
def test_bad_arguments_give_one_line_and_status_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(orjson.dumps(FIRST))
    filled = [arg.format(good=good, tmp=tmp_path) for arg in args]
    result = runner.invoke(app, ["graph", *filled], terminal_width=80)
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert message in line
    assert not (tmp_path / "x.json").exists()


def test_convert_refuses_a_tool_result_with_several_graphs(tmp_path: Path) -> None:
    document = orjson.loads(_tool_result(FIRST, as_text=True))
    document["artifacts"].append({"type": KG, "content": SECOND})
    path = _bad(tmp_path, "two.json", orjson.dumps(document))
    result = _run("convert", str(path), str(tmp_path / "x.json"))
    assert result.exit_code == 2
    assert "two.json: holds 2 graphs; combine them with `graphwright graph merge`" in result.stderr


def test_names_with_brackets_are_printed_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = {
        "nodes": [{"id": "X:[1]", "name": "[bold]TP53", "category": "[red]Gene"}],
        "links": [{"source": "X:[1]", "target": "X:[1]", "label": "self", "evidence": []}],
    }
    monkeypatch.chdir(tmp_path)
    Path("g[1].json").write_bytes(orjson.dumps(graph))
    result = runner.invoke(app, ["graph", "stats", "g[1].json"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for text in ("g[1].json", "X:[1]", "[bold]TP53", "[red]Gene"):
        assert text in result.stdout


def test_the_cli_starts_without_duckdb() -> None:
    # only `graph merge` needs the batch merge (DuckDB, pyarrow): `graphwright --help` and
    # every other command start without importing them
    code = "import sys, graphwright.cli; print(sorted({'duckdb', 'pyarrow'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
