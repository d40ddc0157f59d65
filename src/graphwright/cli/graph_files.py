"""The files of `graphwright graph ...`: reading graphs and tool results, writing graphs.

KGX comes as one file or as a pair: a directory holding `nodes.<ext>` and `edges.<ext>`, one
of the pair's files, or a prefix `P` naming `P_nodes.<ext>` and `P_edges.<ext>`.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path, PurePath
from typing import Any

from rich.markup import escape

from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from graphwright.core.formats import (
    DIRECTORIES,
    FORMATS,
    PAIRED,
    READABLE,
    format_from_path,
    get_format,
    pair_file_names,
    read_graph_pair,
    read_graphs,
    write_graph,
    write_graph_files,
    write_graph_pair,
)
from graphwright.core.graph import GraphFormatError, parse_json
from graphwright.errors import InvalidInput

TSV_ARCHIVES = (".tar", ".tar.gz", ".tgz")


def read_one(path: Path, fmt: str | None, *, strict: bool = False) -> dict[str, Any]:
    graphs = _read_graphs(path, fmt, strict=strict)
    if len(graphs) != 1:
        raise InvalidInput(
            f"holds {len(graphs)} graphs; combine them with `graphwright graph merge`"
        )
    return graphs[0]


def read_inputs(path: Path, fmt: str | None) -> tuple[list[dict[str, Any]], list[Any]]:
    """The graphs and citations of a graph file or an MCP tool-result JSON file."""
    if fmt in (None, "json") and path.suffix.lower() == ".json" and path.is_file():
        from graphwright.artifacts.collectors import is_tool_result, knowledge_in  # MCP types

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
    pair = input_pair(path, fmt)
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


def input_pair(path: Path, fmt: str | None) -> tuple[str, Path, Path] | None:
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
            # The prefix `write_output` used: `g` and `g.tsv` both name g_nodes.tsv + g_edges.tsv.
            stem = path.name.removesuffix(PurePath(nodes_name).suffix)
            nodes = path.with_name(f"{stem}_{nodes_name}")
            edges = path.with_name(f"{stem}_{edges_name}")
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


def check_output_format(fmt: str) -> None:
    """Refuse a format no writer has; GraphFormatError names the ones there are."""
    if fmt not in DIRECTORIES:
        try:
            get_format(fmt)
        except GraphFormatError:
            raise GraphFormatError(
                f"unknown format {fmt!r}; choose one of: {', '.join([*FORMATS, *DIRECTORIES])}"
            ) from None


def output_format(output: str, fmt: str | None) -> str:
    if fmt is not None:
        check_output_format(fmt)
        return fmt
    try:
        return format_from_path(output)
    except GraphFormatError:
        return "json"


def write_output(graph: dict[str, Any], output: str, fmt: str) -> list[Path]:
    """Write `graph` to `output` in `fmt`; a KGX pair when `output` is a directory or a prefix;
    the directory `output` for a directory format (neo4j)."""
    target = Path(output)
    if fmt in DIRECTORIES:
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInput(f"cannot make the directory: {exc.strerror}") from None
        paths = []
        for name, content in write_graph_files(graph, fmt).items():
            write_file(target / name, content)
            paths.append(target / name)
        return paths
    pair_target = fmt in PAIRED and (
        output.endswith(("/", os.sep))
        or target.is_dir()
        or target.suffix == ""
        or (fmt == "kgx-tsv" and target.suffix == ".tsv")
        or (fmt == "kgx-jsonl" and target.suffix == ".jsonl")  # KGX reads the pair only
    )
    if not pair_target:
        content = write_graph(graph, fmt)
        if fmt == "kgx-tsv":
            content = _tsv_archive(output, content)
        write_file(target, content)
        return [target]
    nodes_name, edges_name = pair_file_names(fmt)
    if output.endswith(("/", os.sep)) or target.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        paths = [target / nodes_name, target / edges_name]
    else:
        stem = target.with_suffix("").name if target.suffix else target.name
        paths = [target.with_name(f"{stem}_{nodes_name}"), target.with_name(f"{stem}_{edges_name}")]
    for path, content in zip(paths, write_graph_pair(graph, fmt), strict=True):
        write_file(path, content)
    return paths


def _tsv_archive(output: str, archive: str | bytes) -> bytes:
    """KGX TSV in one file is a tar archive, so its name must say so (docs/formats.md): the pair
    of .tsv files is the other container."""
    name = output.lower()
    if not name.endswith(TSV_ARCHIVES):
        raise InvalidInput(
            "kgx-tsv is written as KGX's pair of files (OUT.tsv, a directory, or a name "
            f"without extension) or as one tar archive ({', '.join(TSV_ARCHIVES)}); "
            f"{Path(output).name!r} names neither"
        )
    data = archive.encode() if isinstance(archive, str) else archive
    return gzip.compress(data, mtime=0) if name.endswith((".gz", ".tgz")) else data


def write_file(path: Path, content: str | bytes) -> None:
    """Write through a temporary file, so a failed write leaves no half-written output."""
    data = content.encode() if isinstance(content, str) else content
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_bytes(data)
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise InvalidInput(f"cannot write {path.name}: {exc.strerror}") from None


def file_names(paths: list[Path]) -> str:
    """File names for a rich message (escaped: a name may hold [brackets])."""
    return escape(" and ".join(str(path) for path in paths))
