"""`graphwright graph ...`: merge, convert and inspect knowledge-graph files.

Files are read and written here; parsing, merging and formats are in `graphwright.core`. KGX
comes as one file or as a pair: a directory holding `nodes.<ext>` and `edges.<ext>`, one of
the pair's files, or a prefix `P` naming `P_nodes.<ext>` and `P_edges.<ext>`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from graphwright.artifacts.collectors import is_tool_result, knowledge_in
from graphwright.cli.common import PlainCommand, PlainGroup, bad_input_exits, console
from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from graphwright.core.bibliography import CitationSet
from graphwright.core.citation_files import write_citations
from graphwright.core.formats import (
    FORMATS,
    PAIRED,
    READABLE,
    format_from_path,
    get_format,
    pair_file_names,
    read_graph_pair,
    read_graphs,
    write_graph,
    write_graph_pair,
)
from graphwright.core.graph import GraphFormatError, parse_json
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_files import merge_files
from graphwright.core.stats import graph_stats
from graphwright.errors import InvalidInput
from graphwright.settings import get_settings
from graphwright.sources.node_normalizer import NodeNormalizer, normalize_graphs

app = typer.Typer(
    help="Merge, convert and inspect knowledge-graph files.", no_args_is_help=True, cls=PlainGroup
)

StrictOption = Annotated[
    bool,
    typer.Option(
        "--strict", help="Refuse links to nodes no file holds (default: add them, as KGX does)."
    ),
]
FromOption = Annotated[
    str | None,
    typer.Option(
        "--from", help=f"Input format ({', '.join(READABLE)}); default: from the extension."
    ),
]


@app.command(cls=PlainCommand)
def merge(
    files: Annotated[
        list[Path],
        typer.Argument(metavar="FILE", help="Graph files or MCP tool-result JSON files."),
    ],
    output: Annotated[str, typer.Option("--output", "-o", help="Where to write the merged graph.")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", help=f"Output format ({', '.join(FORMATS)}); default: from OUT."
        ),
    ] = None,
    from_fmt: FromOption = None,
    key_by_source: Annotated[
        bool,
        typer.Option("--key-by-source", help="Keep links from different primary sources apart."),
    ] = False,
    strict: StrictOption = False,
    normalize: Annotated[
        bool,
        typer.Option(
            "--normalize",
            help="Ask the Translator Node Normalizer which ids name one entity "
            "(offline: only the equivalences in the files).",
        ),
    ] = False,
    bibliography: Annotated[
        str | None,
        typer.Option(
            "--bibliography",
            metavar="OUT",
            help="Write the tool results' citations, de-duplicated, to OUT "
            "(.bib, .ris, .csv or .json).",
        ),
    ] = None,
) -> None:
    """Merge graph files and tool results: nodes by id, links by source, label and target;
    citations by PMID, DOI or title."""
    if bibliography is not None:
        with bad_input_exits(bibliography):
            write_citations([], bibliography)  # refuse an unknown extension before any work
    accumulator = GraphAccumulator(key_by_source=key_by_source)
    citations = CitationSet()
    named = []
    for path in files:
        with bad_input_exits(str(path)):
            graphs, found = _read_inputs(path, from_fmt)
            named.extend((path.name, graph) for graph in graphs)
            citations.add(found, path.name)
    graph_count = len(named)
    if normalize:
        client = NodeNormalizer(get_settings().node_normalizer_url)
        named, note = asyncio.run(normalize_graphs(named, client))
        if note:
            console.print(escape(note), highlight=False, soft_wrap=True)
    with bad_input_exits(" ".join(map(str, files))):
        outcome = merge_files(accumulator, named, strict=strict)
    notes = [
        f"{node.result_id}: no file holds {node.id}; added it as {node.category}"
        for node in outcome.inferred
    ] + [
        f"kept {item.first} and {item.second} apart: {item.reason}"
        for item in accumulator.report.refused
    ]
    for note in notes:
        console.print(escape(note), highlight=False, soft_wrap=True)
    with bad_input_exits(output):
        written = _write(accumulator.to_graph(), output, _output_format(output, fmt))
    console.print(
        f"Merged {graph_count} graph(s) from {len(files)} file(s) into {_names(written)}: "
        f"{accumulator.node_count} nodes, {accumulator.link_count} links",
        highlight=False,
        soft_wrap=True,
    )
    if bibliography is not None:
        with bad_input_exits(bibliography):
            _write_file(Path(bibliography), write_citations(citations.to_list(), bibliography))
        console.print(
            f"Wrote {len(citations)} citations to {escape(bibliography)}", highlight=False
        )
    elif len(citations):
        console.print(
            f"{len(citations)} citations found; keep them with --bibliography refs.bib "
            "(or .ris, .csv, .json)",
            highlight=False,
        )


@app.command(cls=PlainCommand)
def convert(
    source: Annotated[Path, typer.Argument(metavar="IN", help="The graph to convert.")],
    output: Annotated[str, typer.Argument(metavar="OUT", help="Where to write it.")],
    to: Annotated[
        str | None, typer.Option("--to", help="Output format; default: from OUT's extension.")
    ] = None,
    from_fmt: FromOption = None,
    strict: StrictOption = False,
) -> None:
    """Convert a graph from one format to another."""
    with bad_input_exits(str(source)):
        graph = _read_one(source, from_fmt, strict=strict)
    with bad_input_exits(output):
        target_format = to or format_from_path(output)
        get_format(target_format)
        written = _write(graph, output, target_format)
    console.print(
        f"Wrote {_names(written)} ({target_format}): "
        f"{len(graph['nodes'])} nodes, {len(graph['links'])} links",
        highlight=False,
        soft_wrap=True,
    )


@app.command(cls=PlainCommand)
def stats(
    source: Annotated[Path, typer.Argument(metavar="FILE", help="The graph to summarise.")],
    from_fmt: FromOption = None,
    top: Annotated[int, typer.Option(help="How many top-degree nodes to list.")] = 10,
) -> None:
    """Print counts, categories and the top-degree nodes of a graph."""
    with bad_input_exits(str(source)):
        figures = graph_stats(_read_one(source, from_fmt), top=top)
    counts = Table(title=escape(str(source)), show_header=False)
    counts.add_row("nodes", str(figures.nodes))
    counts.add_row("links", str(figures.links))
    counts.add_row(
        "evidence items", f"{figures.evidence_items} ({figures.distinct_evidence} distinct)"
    )
    categories = Table(title="Categories")
    categories.add_column("category")
    categories.add_column("nodes", justify="right")
    for name, count in figures.categories:
        categories.add_row(escape(name), str(count))
    top_nodes = Table(title="Top-degree nodes")
    for column in ("id", "name"):
        top_nodes.add_column(column)
    top_nodes.add_column("degree", justify="right")
    for node_id, name, degree in figures.top_nodes:
        top_nodes.add_row(escape(node_id), escape(name), str(degree))
    for table in (counts, categories, top_nodes):
        console.print(table)


@app.command(cls=PlainCommand)
def export(
    conversation: Annotated[str, typer.Argument(help="The conversation whose graph to write.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Where to write the graph.")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", help=f"Output format ({', '.join(FORMATS)}); default: from OUT."
        ),
    ] = None,
) -> None:
    """Write a conversation's Graph Mode graph (from GRAPHWRIGHT_HOME) to a file."""
    from graphwright.db import Database
    from graphwright.graphmode.events import create_graph_events
    from graphwright.graphmode.service import GraphService

    settings = get_settings()
    with bad_input_exits(conversation):
        db = Database(settings.resolved_database_url)
        try:
            graph = GraphService(db, create_graph_events(db)).to_graph(conversation)
        finally:
            db.dispose()
    with bad_input_exits(output):
        written = _write(graph, output, _output_format(output, fmt))
    console.print(
        f"Wrote {_names(written)}: {len(graph['nodes'])} nodes, {len(graph['links'])} links "
        f"({settings.data_location})",
        highlight=False,
        soft_wrap=True,
    )


# -- files -----------------------------------------------------------------------------------


def _read_one(path: Path, fmt: str | None, *, strict: bool = False) -> dict[str, Any]:
    graphs = _read_graphs(path, fmt, strict=strict)
    if len(graphs) != 1:
        raise InvalidInput(
            f"holds {len(graphs)} graphs; combine them with `graphwright graph merge`"
        )
    return graphs[0]


def _read_inputs(path: Path, fmt: str | None) -> tuple[list[dict[str, Any]], list[Any]]:
    """The graphs and citations of a graph file or an MCP tool-result JSON file."""
    if fmt in (None, "json") and path.suffix.lower() == ".json" and path.is_file():
        document = parse_json(_read_bytes(path))
        if is_tool_result(document):
            found = knowledge_in(document, name=path.name)
            if found.errors:
                raise InvalidInput(found.errors[0].message)
            if not found.graphs and not found.citations:
                raise InvalidInput(
                    f"tool result holds no {KNOWLEDGE_GRAPH} artifact and no bibliography"
                )
            return found.graphs, found.citations
    return _read_graphs(path, fmt, partial=True), []


def _read_graphs(
    path: Path, fmt: str | None, *, strict: bool = False, partial: bool = False
) -> list[dict[str, Any]]:
    """The graphs in `path`; a KGX nodes or edges file without its partner reads alone."""
    if fmt is not None and fmt not in READABLE:
        problem = f"{fmt} is write-only" if fmt in FORMATS else f"unknown format {fmt!r}"
        raise InvalidInput(f"{problem}; --from takes one of: {', '.join(READABLE)}")
    pair = _input_pair(path, fmt)
    if pair is not None:
        pair_format, nodes, edges = pair
        return [
            read_graph_pair(
                _read_bytes(nodes) if nodes.is_file() else b"",
                _read_bytes(edges) if edges.is_file() else b"",
                pair_format,
                strict=strict,
                partial=partial,
            )
        ]
    if path.is_dir():
        raise InvalidInput("is a directory without KGX nodes and edges files")
    return read_graphs(_read_bytes(path), fmt, name=path.name, strict=strict, partial=partial)


def _input_pair(path: Path, fmt: str | None) -> tuple[str, Path, Path] | None:
    """(format, nodes file, edges file) when `path` names a KGX pair of files that exist."""
    for candidate in (fmt,) if fmt else PAIRED:
        if candidate not in PAIRED:
            continue
        nodes_name, edges_name = pair_file_names(candidate)
        if path.is_dir():
            nodes, edges = _only(path, nodes_name), _only(path, edges_name)
        elif path.name.endswith((nodes_name, edges_name)):
            stem = path.name.removesuffix(nodes_name).removesuffix(edges_name)
            nodes, edges = path.with_name(stem + nodes_name), path.with_name(stem + edges_name)
        elif not path.exists():
            nodes = path.with_name(f"{path.name}_{nodes_name}")
            edges = path.with_name(f"{path.name}_{edges_name}")
        else:
            continue
        if nodes is not None and edges is not None and (nodes.is_file() or edges.is_file()):
            return candidate, nodes, edges
    return None


def _only(directory: Path, suffix: str) -> Path | None:
    found = sorted(directory.glob(f"*{suffix}"))
    return found[0] if len(found) == 1 else None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InvalidInput("no such file") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read it: {exc.strerror}") from None


def _output_format(output: str, fmt: str | None) -> str:
    if fmt is not None:
        get_format(fmt)
        return fmt
    try:
        return format_from_path(output)
    except GraphFormatError:
        return "json"


def _write(graph: dict[str, Any], output: str, fmt: str) -> list[Path]:
    """Write `graph` to `output` in `fmt`; a KGX pair when `output` is a directory or a prefix."""
    target = Path(output)
    pair_target = fmt in PAIRED and (
        output.endswith(("/", os.sep))
        or target.is_dir()
        or target.suffix == ""
        or (fmt == "kgx-tsv" and target.suffix == ".tsv")
        or (fmt == "kgx-jsonl" and target.suffix == ".jsonl")  # KGX reads the pair only
    )
    if not pair_target:
        content = write_graph(graph, fmt)
        _write_file(target, content)
        return [target]
    nodes_name, edges_name = pair_file_names(fmt)
    if output.endswith(("/", os.sep)) or target.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        paths = [target / nodes_name, target / edges_name]
    else:
        stem = target.with_suffix("").name if target.suffix else target.name
        paths = [target.with_name(f"{stem}_{nodes_name}"), target.with_name(f"{stem}_{edges_name}")]
    for path, content in zip(paths, write_graph_pair(graph, fmt), strict=True):
        _write_file(path, content)
    return paths


def _write_file(path: Path, content: str | bytes) -> None:
    """Write through a temporary file, so a failed write leaves no half-written output."""
    data = content.encode() if isinstance(content, str) else content
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_bytes(data)
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise InvalidInput(f"cannot write {path.name}: {exc.strerror}") from None


def _names(paths: list[Path]) -> str:
    """File names for a rich message (escaped: a name may hold [brackets])."""
    return escape(" and ".join(str(path) for path in paths))
