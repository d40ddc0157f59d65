"""Merging whole files: KGX nodes files, edges files and graphs whose links cross files.

KG-Hub ships nodes-only and edges-only files, and one file's edges may name another file's
nodes. So the files are merged first and checked after: every file's nodes are added, then
every file's links, which may name any stored node. A link end that no file holds is, as KGX
does it, given a node of its own with a category inferred from its prefix, and reported;
`strict` refuses it instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from graphwright.core.graph import GraphFormatError, inferred_node, missing_ends
from graphwright.core.merge import GraphAccumulator

Graph = dict[str, Any]


@dataclass(frozen=True)
class InferredNode:
    """A node no file held, made from a link end: its id, inferred category, and the file."""

    id: str
    category: str
    result_id: str


@dataclass
class FileMerge:
    """What merging files added besides their own content."""

    inferred: list[InferredNode] = field(default_factory=list)


def merge_files(
    accumulator: GraphAccumulator, graphs: Iterable[tuple[str, Graph]], *, strict: bool = False
) -> FileMerge:
    """Merge `(result id, graph)` pairs whose links may name nodes of the other graphs.

    The graphs may be partial (`load_graph(..., partial=True)`). GraphFormatError names a link
    end no graph holds when `strict`; nothing is added to `accumulator` then.
    """
    named = list(graphs)
    missing = _missing(named, strict=strict)
    outcome = FileMerge()
    for result_id, graph in named:
        accumulator.add({"nodes": graph["nodes"], "links": []}, result_id=result_id)
    for result_id, ends in missing:
        stubs = [inferred_node(end) for end in ends if not accumulator.knows(end)]
        if stubs:
            accumulator.add({"nodes": stubs, "links": []}, result_id=result_id)
            outcome.inferred.extend(InferredNode(s["id"], s["category"], result_id) for s in stubs)
    for result_id, graph in named:
        if graph["links"]:
            accumulator.add(
                {"nodes": [], "links": graph["links"]}, result_id=result_id, stored_ends=True
            )
    return outcome


def _missing(named: list[tuple[str, Graph]], *, strict: bool) -> list[tuple[str, list[str]]]:
    """Per graph, the link ends that no graph holds (checked before anything is added)."""
    if not any(missing_ends(graph) for _, graph in named):
        return []
    probe = GraphAccumulator()
    for result_id, graph in named:
        probe.add({"nodes": graph["nodes"], "links": []}, result_id=result_id)
    found = []
    for result_id, graph in named:
        ends = missing_ends(graph, known=probe.knows)
        if ends and strict:
            raise GraphFormatError(
                f"{result_id}: a link points to node {ends[0]!r}, which no file holds"
            )
        if ends:
            found.append((result_id, ends))
    return found
