"""Counts are said in plain words: "Merged 2 files" or "1 graph", never with an "s" in
brackets. Every string in the package is read with Python's own parser, so a new "(s)" anywhere
in what a person or a model reads is caught."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

import graphwright
from graphwright.cli import app

PACKAGE = Path(graphwright.__file__).parent
EXAMPLES = Path(__file__).parents[2] / "examples"


def string_pieces(tree: ast.AST) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_no_string_counts_with_an_optional_s() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in string_pieces(ast.parse(path.read_text(), str(path))):
            shown = text.replace("http(s)", "")
            if "(s)" in shown and "MACRO" not in text:  # DuckDB macros take an argument `s`
                found.append(f"{path.relative_to(PACKAGE)}:{line}: {text.strip()[:60]}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (["kg_nodes.tsv", "other_edges.tsv"], "Merged 2 files into OUT: 4 nodes, 3 links"),
        (["medik-tp53.json", "pubmed-p53.json"],
         "Merged 2 files into OUT: 7 nodes, 6 links (pubmed-p53.json holds no graph)"),
    ],
)  # fmt: skip
def test_a_merge_says_what_happened(tmp_path: Path, files: list[str], said: str) -> None:
    out = tmp_path / "merged.json"
    outcome = CliRunner().invoke(
        app,
        ["graph", "merge", *(str(EXAMPLES / name) for name in files), "-o", str(out)],
        terminal_width=200,
    )
    assert outcome.exit_code == 0, outcome.output
    printed = " ".join(outcome.output.split())
    assert "(s)" not in printed and said.replace("OUT", str(out)) in printed
