"""`graphwright demo` merges the bundled sample tool results and prints a summary."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from graphwright.cli import app
from graphwright.cli.demo import sample_results


def test_demo_prints_per_result_rows_and_totals() -> None:
    outcome = CliRunner().invoke(app, ["demo"])
    assert outcome.exit_code == 0, outcome.output
    for call_id, _ in sample_results():
        assert call_id in outcome.output
    text = " ".join(outcome.output.split())
    assert "21 nodes in, 12 after merge; 18 links in, 13 after merge;" in text
    assert "8 citations in, 5 after de-duplication" in text


def test_sample_results_have_the_seed_shapes() -> None:
    results = dict(sample_results())
    assert len(results) == 6
    kinds = [
        (artifact["type"], type(artifact["content"]).__name__)
        for result in results.values()
        for artifact in result.get("artifacts", [])
    ]
    assert ("application/vnd.knowledge-graph", "str") in kinds
    assert ("application/vnd.knowledge-graph", "dict") in kinds
    assert ("application/vnd.bibliography", "str") in kinds
    assert any("bibliography" in result for result in results.values())


def test_made_up_citations_are_marked_synthetic() -> None:
    real_pmids = {"21376230"}
    real_dois = {"10.1038/35042675", "10.1038/358015a0"}  # real papers whose PMID is not given
    for _, result in sample_results():
        citations = list(result.get("bibliography", []))
        for artifact in result.get("artifacts", []):
            if artifact["type"] == "application/vnd.bibliography":
                citations += json.loads(artifact["content"])
        for citation in citations:
            pmid = str(citation.get("pmid", "")).removeprefix("PMID:")
            real = pmid in real_pmids or citation.get("doi") in real_dois
            assert citation.get("synthetic") is True or real
            if citation.get("synthetic"):
                assert "pmid" not in citation
                assert (
                    citation.get("doi", "10.5555/")
                    .lower()
                    .split("doi.org/")[-1]
                    .startswith("10.5555/")
                )
