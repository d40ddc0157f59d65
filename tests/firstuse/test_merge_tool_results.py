"""`graph merge` takes every tool-result shape the collector takes (PubMed's bibliography-only
results too), with citations to `--bibliography OUT` in BibTeX, RIS, CSV or JSON; `demo --out`
writes the same merged graph and bibliography."""

from __future__ import annotations

import csv
import json
from importlib.resources import files
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphwright.cli import app

runner = CliRunner()
SAMPLES = files("graphwright.sources") / "sample_data" / "tool_results"


def sample_paths() -> list[Path]:
    return sorted(Path(str(p)) for p in SAMPLES.iterdir() if p.name.endswith(".json"))


@pytest.mark.parametrize("extension", ["bib", "ris", "csv", "json"])
def test_merge_takes_the_bundled_tool_results_like_demo(tmp_path: Path, extension: str) -> None:
    merged, refs = tmp_path / "merged.json", tmp_path / f"refs.{extension}"
    paths = [str(p) for p in sample_paths()]
    outcome = runner.invoke(
        app, ["graph", "merge", *paths, "-o", str(merged), "--bibliography", str(refs)]
    )
    assert outcome.exit_code == 0, outcome.output
    graph = json.loads(merged.read_text())
    assert (len(graph["nodes"]), len(graph["links"])) == (12, 13)  # what `demo` reports
    text = refs.read_text()
    if extension == "bib":
        assert text.count("@article{") == 5 and "doi = {10.1038/35042675}" in text
    elif extension == "ris":
        assert text.count("TY  - JOUR") == 5 and text.count("ER  -") == 5
        assert "AU  - Vogelstein B" in text
    elif extension == "csv":
        rows = list(csv.DictReader(refs.open()))
        assert len(rows) == 5 and {"title", "authors", "year", "doi", "pmid"} <= rows[0].keys()
    else:
        assert len(json.loads(text)) == 5
    assert "5 citations" in " ".join(outcome.output.split())


def test_a_bibliography_only_result_is_accepted(tmp_path: Path) -> None:
    pubmed = next(p for p in sample_paths() if "pubmed" in p.name)
    refs = tmp_path / "refs.json"
    args = ["graph", "merge", str(pubmed), "-o", str(tmp_path / "g.json")]
    outcome = runner.invoke(app, [*args, "--bibliography", str(refs)])
    assert outcome.exit_code == 0, outcome.output
    assert len(json.loads(refs.read_text())) == 3


def test_citations_without_bibliography_option_are_mentioned(tmp_path: Path) -> None:
    pubmed = next(p for p in sample_paths() if "pubmed" in p.name)
    outcome = runner.invoke(app, ["graph", "merge", str(pubmed), "-o", str(tmp_path / "g.json")])
    assert outcome.exit_code == 0, outcome.output
    assert "--bibliography" in outcome.output


def test_unknown_bibliography_extension_is_refused(tmp_path: Path) -> None:
    outcome = runner.invoke(
        app,
        ["graph", "merge", str(sample_paths()[0]), "-o", str(tmp_path / "g.json"),
         "--bibliography", str(tmp_path / "refs.docx")],
    )  # fmt: skip
    assert outcome.exit_code == 2
    assert ".bib" in outcome.output and ".ris" in outcome.output


def test_demo_out_writes_graph_and_bibliography(tmp_path: Path) -> None:
    outcome = runner.invoke(app, ["demo", "--out", str(tmp_path / "demo")])
    assert outcome.exit_code == 0, outcome.output
    graph = json.loads((tmp_path / "demo" / "merged-graph.json").read_text())
    assert (len(graph["nodes"]), len(graph["links"])) == (12, 13)
    assert len(json.loads((tmp_path / "demo" / "bibliography.json").read_text())) == 5
    assert (tmp_path / "demo" / "bibliography.bib").read_text().count("@article{") == 5


def test_graph_export_writes_a_conversation_graph(tmp_path: Path, monkeypatch) -> None:
    from graphwright.db import Database
    from graphwright.graphmode.events import create_graph_events
    from graphwright.graphmode.schemas import NodeInput
    from graphwright.graphmode.service import GraphService
    from graphwright.settings import get_settings

    monkeypatch.setenv("GRAPHWRIGHT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHWRIGHT_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    database = Database(f"sqlite:///{tmp_path / 'home' / 'graphwright.db'}")
    service = GraphService(database, create_graph_events(database))
    service.add_node("conv-1", NodeInput(id="A:1", label="a", type="gene"), actor="t")
    database.dispose()
    out = tmp_path / "g.graphml"
    try:
        outcome = runner.invoke(app, ["graph", "export", "conv-1", "-o", str(out)])
        missing = runner.invoke(app, ["graph", "export", "nope", "-o", str(out)])
    finally:
        get_settings.cache_clear()  # the next test reads its own environment
    assert outcome.exit_code == 0, outcome.output
    assert "<graphml" in out.read_text() and "A:1" in out.read_text()
    assert missing.exit_code == 2 and "no graph" in missing.output
