"""Format rules a first user meets: `.ttl` and `.nt` are recognised (N-Triples is valid Turtle),
a format the CLI cannot read is refused with the formats it can, `stats` and `convert` read back
every file the CLI writes, and one rule says where KGX TSV goes."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphwright.cli import app
from graphwright.core.formats import FORMATS, READABLE

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
    for fmt in ("nonsense",):
        outcome = runner.invoke(
            app, ["graph", "stats", str(source), "--from", fmt], terminal_width=200
        )
        assert outcome.exit_code == 2
        offered = outcome.output.rsplit(":", 1)[1]
        assert all(name in offered for name in READABLE), outcome.output


def _written_names() -> list[str]:
    """An output name for every extension the CLI writes, and KGX's pair names."""
    names = [f"g{extension}" for fmt in FORMATS.values() for extension in fmt.extensions]
    return [*names, "pair.tsv", "pair.jsonl", "bare", "dir/"]


@pytest.mark.parametrize("name", _written_names())
def test_stats_and_convert_read_back_what_the_cli_writes(name: str, tmp_path: Path) -> None:
    source = tmp_path / "g.json"
    source.write_text(json.dumps(GRAPH))
    target = str(tmp_path / name)
    to = ["--to", "kgx-tsv"] if name in ("bare", "dir/") else []
    outcome = runner.invoke(app, ["graph", "convert", str(source), target, *to])
    assert outcome.exit_code == 0, outcome.output
    for command in (["stats", target], ["convert", target, str(tmp_path / "back.json")]):
        outcome = runner.invoke(app, ["graph", *command], terminal_width=200)
        assert outcome.exit_code == 0, outcome.output
    back = json.loads((tmp_path / "back.json").read_text())
    assert sorted(node["id"] for node in back["nodes"]) == ["A:1", "A:2"]
    assert [(link["source"], link["target"]) for link in back["links"]] == [("A:1", "A:2")]


def test_kgx_tsv_goes_to_the_container_its_name_says(tmp_path: Path) -> None:
    """One rule: `.tsv`, a directory or a bare name give KGX's pair of files; `.tar`, `.tar.gz`
    and `.tgz` give one archive (compressed for .gz); any other name is refused, naming both."""
    source = tmp_path / "g.json"
    source.write_text(json.dumps(GRAPH))

    def convert(name: str) -> Any:
        return runner.invoke(
            app,
            ["graph", "convert", str(source), str(tmp_path / name), "--to", "kgx-tsv"],
            terminal_width=200,
        )

    assert convert("p.tsv").exit_code == 0
    assert (tmp_path / "p_nodes.tsv").is_file() and (tmp_path / "p_edges.tsv").is_file()
    assert convert("a.tar").exit_code == 0
    assert tarfile.is_tarfile(tmp_path / "a.tar")
    assert convert("a.tar.gz").exit_code == 0
    assert (tmp_path / "a.tar.gz").read_bytes()[:2] == b"\x1f\x8b"  # gzip
    refused = convert("out.kgx-tsv")
    assert refused.exit_code == 2
    assert ".tsv" in refused.output and ".tar" in refused.output, refused.output
    assert not (tmp_path / "out.kgx-tsv").exists()
