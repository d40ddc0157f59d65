"""`graphwright demo`: merge the sample tool results that ship with the package.

The results are shaped like seed 003's MCP results: knowledge graphs in `artifacts` (content as a
JSON string or an object), citations in a top-level `bibliography` or in a bibliography artifact.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.markup import escape
from rich.table import Table

from graphwright.cli.common import bad_input_exits, console
from graphwright.core.artifacts import BIBLIOGRAPHY
from graphwright.core.bibliography import CitationSet
from graphwright.core.citation_files import write_citations
from graphwright.core.formats import graphs_in_tool_result, write_graph
from graphwright.core.graph import parse_json
from graphwright.core.merge import GraphAccumulator
from graphwright.errors import InvalidInput


@dataclass
class ResultSummary:
    tool_call_id: str
    nodes: int = 0
    links: int = 0
    citations: int = 0
    new_citations: int = 0


def sample_results() -> list[tuple[str, dict[str, Any]]]:
    """The bundled tool results as (tool-call id, result), in call order."""
    folder = files("graphwright.sources") / "sample_data" / "tool_results"
    paths = sorted((path for path in folder.iterdir() if path.name.endswith(".json")),
                   key=lambda path: path.name)  # fmt: skip
    return [(path.name.removesuffix(".json"), orjson.loads(path.read_bytes())) for path in paths]


def _graphs(result: dict[str, Any]) -> list[dict[str, Any]]:
    return graphs_in_tool_result(result) if "artifacts" in result else []


def _citations(result: dict[str, Any]) -> list[dict[str, Any]]:
    citations = list(result.get("bibliography") or [])
    for artifact in result.get("artifacts") or []:
        if artifact.get("type") == BIBLIOGRAPHY:
            content = artifact.get("content")
            citations.extend(parse_json(content) if isinstance(content, str | bytes) else content)
    return citations


def demo(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Also write merged-graph.json, bibliography.json and bibliography.bib here.",
        ),
    ] = None,
) -> None:
    """Merge the bundled sample tool results and print a summary table."""
    accumulator, bibliography = GraphAccumulator(), CitationSet()
    rows: list[ResultSummary] = []
    for call_id, result in sample_results():
        row = ResultSummary(call_id)
        with bad_input_exits(call_id):
            for graph in _graphs(result):
                row.nodes += len(graph["nodes"])
                row.links += len(graph["links"])
                accumulator.add(graph, call_id)
            citations = _citations(result)
            row.citations = len(citations)
            row.new_citations = bibliography.add(citations, call_id)
        rows.append(row)
    console.print(_table(rows, accumulator, bibliography))
    console.print(
        f"{sum(row.nodes for row in rows)} nodes in, {accumulator.node_count} after merge; "
        f"{sum(row.links for row in rows)} links in, {accumulator.link_count} after merge; "
        f"{sum(row.citations for row in rows)} citations in, {len(bibliography)} after "
        "de-duplication.",
        highlight=False,
    )
    console.print(
        "[dim]Sample data shipped with graphwright; records marked synthetic are made up."
    )
    if out is not None:
        _write_outputs(out, accumulator, bibliography)


def _write_outputs(out: Path, graph: GraphAccumulator, citations: CitationSet) -> None:
    files = {
        "merged-graph.json": write_graph(graph.to_graph(), "json"),
        "bibliography.json": write_citations(citations.to_list(), "bibliography.json"),
        "bibliography.bib": write_citations(citations.to_list(), "bibliography.bib"),
    }
    with bad_input_exits(str(out)):
        try:
            out.mkdir(parents=True, exist_ok=True)
            for name, content in files.items():
                data = content.encode() if isinstance(content, str) else content
                (out / name).write_bytes(data)
        except OSError as exc:
            raise InvalidInput(f"cannot write there: {exc.strerror}") from None
    console.print(f"Wrote {', '.join(files)} to {escape(str(out))}", highlight=False)


def _table(rows: list[ResultSummary], graph: GraphAccumulator, citations: CitationSet) -> Table:
    table = Table(title="Sample tool results merged")
    for header in ("tool call", "nodes", "links", "citations", "new citations"):
        table.add_column(header, justify="left" if header == "tool call" else "right")
    for row in rows:
        table.add_row(row.tool_call_id, str(row.nodes), str(row.links), str(row.citations),
                      str(row.new_citations))  # fmt: skip
    table.add_section()
    table.add_row(
        "total in",
        str(sum(row.nodes for row in rows)),
        str(sum(row.links for row in rows)),
        str(sum(row.citations for row in rows)),
        "",
    )
    table.add_row("after merge", str(graph.node_count), str(graph.link_count),
                  str(len(citations)), "", style="bold")  # fmt: skip
    return table
