"""Format rules a first user meets: `.ttl` and `.nt` are recognised (N-Triples is valid Turtle),
and a format the CLI cannot read is refused with the formats it can."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from graphwright.cli import app
from graphwright.core.formats import READABLE

runner = CliRunner()
GRAPH = {"nodes": [{"id": "A:1", "name": "a"}, {"id": "A:2", "name": "b"}],
         "links": [{"source": "A:1", "target": "A:2", "label": "to"}]}  # fmt: skip


def test_ttl_and_nt_are_written_as_n_triples(tmp_path: Path) -> None:
    source = tmp_path / "g.json"
    source.write_text(json.dumps(GRAPH))
    for name in ("g.ttl", "g.nt"):
        outcome = runner.invoke(app, ["graph", "convert", str(source), str(tmp_path / name)])
        assert outcome.exit_code == 0, outcome.output
        assert "<" in (tmp_path / name).read_text() and " .\n" in (tmp_path / name).read_text()


def test_an_unreadable_input_format_offers_the_readable_ones(tmp_path: Path) -> None:
    source = tmp_path / "g.json"
    source.write_text(json.dumps(GRAPH))
    for fmt in ("ntriples", "nonsense"):
        outcome = runner.invoke(
            app, ["graph", "stats", str(source), "--from", fmt], terminal_width=200
        )
        assert outcome.exit_code == 2
        offered = outcome.output.rsplit(":", 1)[1]
        assert all(name in offered for name in READABLE), outcome.output
        assert "cytoscape" not in offered and "jsonld" not in offered
