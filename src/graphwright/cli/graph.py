"""`graphwright graph ...`: merge, convert and inspect knowledge-graph files.

Files are read and written in graph_files.py; parsing, merging and formats are in
`graphwright.core`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from graphwright.cli.common import PlainCommand, PlainGroup, bad_input_exits, console
from graphwright.cli.graph_files import (
    check_output_format,
    file_names,
    input_pair,
    output_format,
    read_inputs,
    read_one,
    write_file,
    write_output,
)
from graphwright.core.bibliography import CitationSet
from graphwright.core.citation_files import write_citations
from graphwright.core.formats import FORMATS, READABLE, format_from_path
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_files import InferredNode, merge_files
from graphwright.core.merge_rules import RefusedMerge
from graphwright.core.stats import graph_stats
from graphwright.core.words import counted
from graphwright.settings import get_settings
from graphwright.sources.node_normalizer import NodeNormalizer, normalize_graphs

if TYPE_CHECKING:
    from graphwright.core.batch_merge import BatchMerge

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
    xref_equivalence: Annotated[
        bool,
        typer.Option(
            "--xref-equivalence",
            envvar="GRAPHWRIGHT_MERGE_XREF_EQUIVALENCE",
            help="Merge nodes that name each other in `xref` (by default an xref is a link, "
            "not a merge).",
        ),
    ] = False,
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
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit",
            envvar="GRAPHWRIGHT_MERGE_MEMORY_LIMIT",
            help="How much memory the merge of KGX files may hold, such as 2GB; beyond it, it "
            "spills to disk (default: 80% of this machine's memory).",
        ),
    ] = None,
    temp_dir: Annotated[
        Path | None,
        typer.Option(
            "--temp-dir",
            envvar="GRAPHWRIGHT_MERGE_TEMP_DIR",
            help="Where the merge of KGX files spills to disk (default: the system's "
            "temporary folder).",
        ),
    ] = None,
) -> None:
    """Merge graph files and tool results: nodes by id, links by source, label and target;
    citations by PMID, DOI or title."""
    # the batch merge needs DuckDB: imported here, so that the rest of the CLI starts without it
    from graphwright.cli.graph_batch import run_batch
    from graphwright.core.batch_merge import batch_inputs
    from graphwright.core.batch_merge import memory_limit as checked_memory_limit

    if bibliography is not None:
        with bad_input_exits(bibliography):
            write_citations([], bibliography)  # refuse an unknown extension before any work
    if memory_limit is not None:
        with bad_input_exits("--memory-limit"):
            memory_limit = checked_memory_limit(memory_limit)
    batch = batch_inputs(files, from_fmt, input_pair, normalize=normalize)
    merged = None
    if batch is not None:
        with bad_input_exits(" ".join(map(str, files))):
            merged = run_batch(
                batch,
                key_by_source=key_by_source,
                xref_equivalence=xref_equivalence,
                strict=strict,
                memory_limit=memory_limit,
                temp_directory=temp_dir,
            )
    if merged is not None:  # KGX files: merged in DuckDB (core/batch_merge)
        with merged:
            _print_notes(merged.inferred, merged.report.refused)
            with bad_input_exits(output):
                written = _write_batch(merged, output, output_format(output, fmt))
            no_graph, counts, citations = [], merged.counts(), CitationSet()
    else:
        no_graph, counts, citations, written = _merge_accumulated(
            files, output, fmt, from_fmt, key_by_source=key_by_source,
            xref_equivalence=xref_equivalence, strict=strict, normalize=normalize,
        )  # fmt: skip
    console.print(
        f"Merged {counted(len(files), 'file')} into {file_names(written)}: "
        f"{counted(counts[0], 'node')}, {counted(counts[1], 'link')}{_graphless(no_graph)}",
        highlight=False,
        soft_wrap=True,
    )
    if bibliography is not None:
        with bad_input_exits(bibliography):
            write_file(Path(bibliography), write_citations(citations.to_list(), bibliography))
        console.print(
            f"Wrote {len(citations)} citations to {escape(bibliography)}", highlight=False
        )
    elif len(citations):
        console.print(
            f"{len(citations)} citations found; keep them with --bibliography refs.bib "
            "(or .ris, .csv, .json)",
            highlight=False,
        )


def _merge_accumulated(
    files: list[Path],
    output: str,
    fmt: str | None,
    from_fmt: str | None,
    *,
    key_by_source: bool,
    xref_equivalence: bool,
    strict: bool,
    normalize: bool,
) -> tuple[list[str], tuple[int, int], CitationSet, list[Path]]:
    """Merge with GraphAccumulator (any input); return the names of the files that held no
    graph, the node and link counts, the citations found and the files written."""
    accumulator = GraphAccumulator(key_by_source=key_by_source, xref_equivalence=xref_equivalence)
    citations = CitationSet()
    named = []
    for path in files:
        with bad_input_exits(str(path)):
            graphs, found = read_inputs(path, from_fmt)
            named.extend((path.name, graph) for graph in graphs)
            citations.add(found, path.name)
    with_graph = {name for name, _ in named}
    no_graph = [path.name for path in files if path.name not in with_graph]
    if normalize:
        client = NodeNormalizer(get_settings().node_normalizer_url)
        named, note = asyncio.run(normalize_graphs(named, client))
        if note:
            console.print(escape(note), highlight=False, soft_wrap=True)
    with bad_input_exits(" ".join(map(str, files))):
        outcome = merge_files(accumulator, named, strict=strict)
    _print_notes(outcome.inferred, accumulator.report.refused)
    with bad_input_exits(output):
        written = write_output(accumulator.to_graph(), output, output_format(output, fmt))
    counts = (accumulator.node_count, accumulator.link_count)
    return no_graph, counts, citations, written


def _print_notes(inferred: list[InferredNode], refused: list[RefusedMerge]) -> None:
    notes = [
        f"{node.result_id}: no file holds {node.id}; added it as {node.category}"
        for node in inferred
    ] + [f"kept {item.first} and {item.second} apart: {item.reason}" for item in refused]
    for note in notes:
        console.print(escape(note), highlight=False, soft_wrap=True)


def _write_batch(merged: BatchMerge, output: str, fmt: str) -> list[Path]:
    """A batch merge's graph: seed JSON streamed from DuckDB, other formats by their writers."""
    from graphwright.cli.graph_batch import write_json

    target = Path(output)
    if fmt == "json" and not output.endswith(("/", os.sep)) and not target.is_dir():
        write_json(merged, target)
        return [target]
    return write_output(merged.to_graph(), output, fmt)


@app.command(cls=PlainCommand)
def convert(
    source: Annotated[Path, typer.Argument(metavar="IN", help="The graph to convert.")],
    output: Annotated[str, typer.Argument(metavar="OUT", help="Where to write it.")],
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="Output format; default: from OUT's extension. neo4j writes the directory OUT.",
        ),
    ] = None,
    from_fmt: FromOption = None,
    strict: StrictOption = False,
) -> None:
    """Convert a graph from one format to another."""
    with bad_input_exits(str(source)):
        graph = read_one(source, from_fmt, strict=strict)
    with bad_input_exits(output):
        target_format = to or format_from_path(output)
        check_output_format(target_format)
        written = write_output(graph, output, target_format)
    console.print(
        f"Wrote {file_names(written)} ({target_format}): "
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
        figures = graph_stats(read_one(source, from_fmt), top=top)
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
        written = write_output(graph, output, output_format(output, fmt))
    console.print(
        f"Wrote {file_names(written)}: {len(graph['nodes'])} nodes, {len(graph['links'])} links "
        f"({settings.data_location})",
        highlight=False,
        soft_wrap=True,
    )


def _graphless(names: list[str]) -> str:
    """Which files added nothing to the graph (a PubMed result holds citations only)."""
    if not names:
        return ""
    return f" ({escape(' and '.join(names))} {'holds' if len(names) == 1 else 'hold'} no graph)"
