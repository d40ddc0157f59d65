"""Convert the seed knowledge-graph JSON from and to other graph formats (docs/formats.md).

`read_graph(data, fmt)` returns a graph validated by `load_graph`; `write_graph(graph, fmt)`
returns text, or bytes for the kgx-tsv tar archive. KGX files may name nodes they do not hold
(edges-only files): reading gives those nodes a category inferred from their prefix, unless
`strict`; `partial=True` leaves them to a merge with the files that hold them. One module per
format; `FORMATS` is the registry. KGX also comes as a pair of files (`read_graph_pair` /
`write_graph_pair`).
`read_graphs` reads a whole document: a graph file, or an MCP tool result with graph artifacts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import PurePath
from typing import Any

from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from graphwright.core.formats import (
    cx2,
    cytoscape,
    graph_json,
    graphml,
    kgx,
    kgx_tsv,
    neo4j,
    rdf,
    rdf_read,
    trapi,
    trapi_read,
)
from graphwright.core.graph import GraphFormatError, complete_graph, load_graph, parse_json

Graph = dict[str, Any]


@dataclass(frozen=True)
class PairFormat:
    """A format that KGX also spreads over a nodes file and an edges file."""

    nodes_file: str
    edges_file: str
    read: Callable[[str | bytes, str | bytes], Graph]
    write: Callable[[Graph], tuple[str, str]]


@dataclass(frozen=True)
class GraphFormat:
    name: str
    description: str
    extensions: tuple[str, ...]
    write: Callable[[Graph], str | bytes]
    read: Callable[[str | bytes], Graph] | None = None
    pair: PairFormat | None = None


FORMATS: dict[str, GraphFormat] = {
    fmt.name: fmt
    for fmt in (
        GraphFormat(
            "json",
            "the seeds' graph JSON {nodes, links}",
            (".json",),
            graph_json.write,
            graph_json.read,
        ),
        GraphFormat(
            "trapi",
            "TRAPI 1.5 knowledge_graph (reads a message or response too)",
            (".trapi.json",),
            trapi.write,
            trapi_read.read,
        ),
        GraphFormat(
            "kgx-jsonl",
            "KGX JSON Lines: nodes.jsonl + edges.jsonl (one .jsonl stream: nodes then edges)",
            (".jsonl",),
            kgx.write_jsonl,
            kgx.read_jsonl,
            PairFormat(kgx.NODES_JSONL, kgx.EDGES_JSONL, kgx.read_jsonl_pair, kgx.write_jsonl_pair),
        ),
        GraphFormat(
            "kgx-json",
            'KGX JSON: {"nodes": [...], "edges": [...]}',
            (".kgx.json",),
            kgx.write_json,
            kgx.read_json,
        ),
        GraphFormat(
            "kgx-tsv",
            "KGX TSV: a tar of nodes.tsv + edges.tsv, or the two files",
            (".tar", ".tar.gz", ".tgz", ".tsv"),
            kgx_tsv.write_tsv,
            kgx_tsv.read_tsv,
            PairFormat(
                kgx_tsv.NODES_TSV, kgx_tsv.EDGES_TSV, kgx_tsv.read_tsv_pair, kgx_tsv.write_tsv_pair
            ),
        ),
        GraphFormat(
            "cytoscape",
            "Cytoscape.js elements JSON",
            (".cyjs", ".cy.json"),
            cytoscape.write,
            cytoscape.read,
        ),
        GraphFormat(
            "cx2",
            "CX2, Cytoscape's and NDEx's network format, coloured by Biolink category",
            (".cx2",),
            cx2.write,
            cx2.read,
        ),
        GraphFormat("graphml", "GraphML", (".graphml",), graphml.write, graphml.read),
        GraphFormat(
            "jsonld",
            "JSON-LD with an @context, links reified",
            (".jsonld",),
            rdf.write_jsonld,
            rdf_read.read_jsonld,
        ),
        GraphFormat(
            # N-Triples is a subset of Turtle: a .ttl file of it is valid Turtle, and reading
            # takes any Turtle.
            "ntriples",
            "N-Triples, links reified (reads Turtle too)",
            (".nt", ".ttl"),
            rdf.write_ntriples,
            rdf_read.read_turtle,
        ),
    )
}

# Formats written as a directory of files (write-only).
DIRECTORIES: dict[str, Callable[[Graph], dict[str, str]]] = {"neo4j": neo4j.files}

READABLE = tuple(name for name, fmt in FORMATS.items() if fmt.read is not None)
PAIRED = tuple(name for name, fmt in FORMATS.items() if fmt.pair is not None)


def get_format(fmt: str) -> GraphFormat:
    try:
        return FORMATS[fmt]
    except KeyError:
        raise GraphFormatError(
            f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}"
        ) from None


def _reader(fmt: str) -> Callable[[str | bytes], Graph]:
    reader = get_format(fmt).read
    if reader is None:
        raise GraphFormatError(f"{fmt} is write-only; read one of: {', '.join(READABLE)}")
    return reader


def _paired(fmt: str) -> PairFormat:
    pair = get_format(fmt).pair
    if pair is None:
        raise GraphFormatError(f"{fmt} is a single file; pairs of files are: {', '.join(PAIRED)}")
    return pair


def read_graph(
    data: str | bytes, fmt: str, *, strict: bool = False, partial: bool = False
) -> Graph:
    """Read one graph in format `fmt`; GraphFormatError names what is wrong."""
    return _completed(_reader(fmt)(data), strict=strict, partial=partial)


def _completed(graph: Graph, *, strict: bool, partial: bool) -> Graph:
    if not partial:
        complete_graph(graph, strict=strict)
    return graph


def write_graph(graph: Graph, fmt: str) -> str | bytes:
    """Write a seed graph (validated first) in format `fmt`."""
    writer = get_format(fmt).write
    loaded = load_graph(graph)
    if fmt != "json":
        _require_unique_node_ids(loaded)
    return writer(loaded)


def write_graph_files(graph: Graph, fmt: str) -> dict[str, str]:
    """{file name: text} of a directory format (`DIRECTORIES`: neo4j)."""
    if fmt not in DIRECTORIES:
        raise GraphFormatError(f"{fmt} is not written as a directory: {', '.join(DIRECTORIES)} is")
    loaded = load_graph(graph)
    _require_unique_node_ids(loaded)
    return DIRECTORIES[fmt](loaded)


def read_graph_pair(
    nodes: str | bytes, edges: str | bytes, fmt: str, *, strict: bool = False, partial: bool = False
) -> Graph:
    """Read KGX's two files (nodes, edges) in `fmt` (kgx-jsonl or kgx-tsv); either may be
    empty (an edges-only or nodes-only graph)."""
    return _completed(_paired(fmt).read(nodes, edges), strict=strict, partial=partial)


def write_graph_pair(graph: Graph, fmt: str) -> tuple[str, str]:
    """KGX's two files (nodes, edges) for a seed graph in `fmt` (kgx-jsonl or kgx-tsv)."""
    pair = _paired(fmt)
    loaded = load_graph(graph)
    _require_unique_node_ids(loaded)
    return pair.write(loaded)


def pair_file_names(fmt: str) -> tuple[str, str]:
    """The KGX file names for `fmt`: ("nodes.jsonl", "edges.jsonl") or the .tsv pair."""
    pair = _paired(fmt)
    return pair.nodes_file, pair.edges_file


def format_from_path(path: str | PathLike[str]) -> str:
    """The format a file name's extension names (`.trapi.json` before `.json`)."""
    name = PurePath(path).name.lower()
    matches = [
        (len(extension), fmt.name)
        for fmt in FORMATS.values()
        for extension in fmt.extensions
        if name.endswith(extension)
    ]
    if not matches:
        raise GraphFormatError(
            f"cannot tell the format of {PurePath(path).name!r} from its extension; "
            f"name one of: {', '.join(FORMATS)}"
        )
    return max(matches)[1]


def _require_unique_node_ids(graph: Graph) -> None:
    seen: dict[str, int] = {}
    for index, node in enumerate(graph["nodes"]):
        first = seen.setdefault(node["id"], index)
        if first != index:
            raise GraphFormatError(
                f"node id {node['id']!r} appears twice (nodes {first} and {index}); "
                "merge the graph first"
            )


# -- documents -------------------------------------------------------------------------------


def graphs_in_tool_result(result: dict[str, Any]) -> list[Graph]:
    """The knowledge graphs in an MCP tool result's `artifacts` (seed 003), validated.

    An artifact counts when its `type` (or A2A `mediaType`) is application/vnd.knowledge-graph;
    its `content` may be JSON text or an object.
    """
    artifacts = result.get("artifacts")
    if not isinstance(artifacts, list):
        raise GraphFormatError("tool result has no 'artifacts' list")
    graphs = []
    for index, artifact in enumerate(artifacts):
        if not isinstance(artifact, dict):
            continue
        if KNOWLEDGE_GRAPH not in (artifact.get("type"), artifact.get("mediaType")):
            continue
        content = artifact.get("content")
        if not isinstance(content, str | bytes | dict):
            raise GraphFormatError(f"knowledge-graph artifact {index} has no content")
        try:
            graphs.append(load_graph(content))
        except GraphFormatError as exc:
            raise GraphFormatError(f"knowledge-graph artifact {index}: {exc}") from None
    return graphs


def read_graphs(
    data: str | bytes,
    fmt: str | None = None,
    *,
    name: str = "",
    strict: bool = False,
    partial: bool = False,
) -> list[Graph]:
    """Every graph in one document.

    `fmt` None means: the format `name`'s extension gives, and for JSON, the format the
    document's shape gives (TRAPI when it has `message`, `knowledge_graph` or nodes keyed by
    id; KGX JSON when it has `nodes` and `edges` lists). A JSON document with `artifacts` is an
    MCP tool result whatever `fmt` says; it must hold at least one knowledge graph.
    """
    chosen = fmt or format_from_path(name)
    if chosen not in ("json", "trapi"):
        return [read_graph(data, chosen, strict=strict, partial=partial)]
    document = parse_json(data)
    if isinstance(document, dict) and "artifacts" in document:
        graphs = graphs_in_tool_result(document)
        if not graphs:
            raise GraphFormatError(f"tool result holds no {KNOWLEDGE_GRAPH} artifact")
        return graphs
    if chosen == "trapi" or (fmt is None and _looks_like_trapi(document)):
        return [trapi_read.from_document(document)]
    if fmt is None and kgx.looks_like_kgx_json(document):
        return [_completed(kgx.from_json_document(document), strict=strict, partial=partial)]
    return [load_graph(document)]


def _looks_like_trapi(document: Any) -> bool:
    if not isinstance(document, dict):
        return False
    return (
        "message" in document
        or "knowledge_graph" in document
        or (isinstance(document.get("nodes"), dict) and "links" not in document)
        or trapi_read.looks_like_old_trapi(document)
    )
