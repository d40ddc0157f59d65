"""The seeds' knowledge-graph JSON: `{"nodes": [{"id", "name", ...}], "links": [...]}`.

Links are `{"source", "target", "label", "evidence": [...], ...}`. A graph may arrive as a JSON
string (an MCP artifact's `content`) or as an already parsed object; `load_graph` accepts both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from graphwright.core.biolink import NAMED_THING, category_for_prefix
from graphwright.core.ids import normalize_curie
from graphwright.errors import InvalidInput


class GraphFormatError(InvalidInput):
    """The input is not a valid seed knowledge graph; the message names the problem."""


def parse_json(content: str | bytes) -> Any:
    """Parse JSON text, turning a syntax error into a GraphFormatError with line and column."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise GraphFormatError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def load_graph(content: str | bytes | dict[str, Any], *, partial: bool = False) -> dict[str, Any]:
    """Validate a seed graph and return it as a fresh `{"nodes": [...], "links": [...], ...}`.

    Missing `links` and missing link `evidence` default to empty lists (a lone evidence value
    becomes a one-item list). Every node needs a non-empty string `id`; every link needs a
    `source` and a `target` naming a node of the same graph (ids compared after CURIE
    normalisation). Node and link dicts in the result are new objects (shallow copies when
    `content` is a dict), so the caller may change them; the input is never modified.
    A `partial` graph (an edges-only file, one file of several) may name nodes it does not hold:
    its link ends need only be non-empty strings (see `complete_graph`).
    """
    owned = isinstance(content, str | bytes)
    data = parse_json(content) if owned else content
    nodes, links = check_graph(data, partial=partial)
    if not owned:
        nodes = [dict(node) for node in nodes]
        links = [dict(link) for link in links]
    for link in links:
        evidence = link.get("evidence")
        if type(evidence) is not list:
            link["evidence"] = [] if evidence is None else [evidence]
    graph = {key: value for key, value in data.items() if key not in ("nodes", "links")}
    graph["nodes"] = nodes
    graph["links"] = links
    return graph


def check_graph(
    data: Any, *, partial: bool = False, known: Callable[[str], bool] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Validate a parsed seed graph without copying or changing it; return its nodes and links.

    `partial` accepts link ends that name no node of the graph; `known` accepts those it
    knows (nodes stored by an earlier merge)."""
    nodes, links = graph_lists(data)
    node_ids = _checked_node_ids(nodes)
    if partial:
        _check_link_ends(links)
        return nodes, links
    for link in links:
        if type(link) is not dict or (
            link.get("source") not in node_ids or link.get("target") not in node_ids
        ):
            _check_links_slowly(links, node_ids, known)
            break
    return nodes, links


def graph_lists(data: Any) -> tuple[list[Any], list[Any]]:
    """The `nodes` and `links` lists of a parsed graph, checking only the graph's own shape."""
    if not isinstance(data, dict):
        raise GraphFormatError(f"a graph must be a JSON object, got {_json_type(data)}")
    if "nodes" not in data:
        raise GraphFormatError("graph has no 'nodes' list")
    if "links" not in data and "edges" in data:
        raise GraphFormatError(
            "graph has 'edges', not 'links': this is not the seed graph JSON "
            "(convert it from its own format first)"
        )
    nodes, links = data["nodes"], data.get("links")
    if links is None:
        links = []
    for name, items in (("nodes", nodes), ("links", links)):
        if not isinstance(items, list):
            raise GraphFormatError(f"'{name}' must be a list, got {_json_type(items)}")
    return nodes, links


def _checked_node_ids(nodes: list[Any]) -> set[str]:
    ids: set[str] = set()
    add = ids.add
    for index, node in enumerate(nodes):
        if (
            type(node) is dict
            and type(node_id := node.get("id")) is str
            and node_id
            and (not node_id[0].isspace() or node_id.strip())
        ):
            add(node_id)
        else:
            add(_checked_node_id(index, node))
    return ids


def _checked_node_id(index: int, node: Any) -> str:
    if not isinstance(node, dict):
        raise GraphFormatError(f"node {index} must be an object, got {_json_type(node)}")
    node_id = node.get("id")
    if not isinstance(node_id, str) or not node_id.strip():
        shown = "no 'id'" if node_id is None else f"'id' {node_id!r} (need a non-empty string)"
        raise GraphFormatError(f"node {index} has {shown}")
    return node_id


def _check_links_slowly(
    links: list[Any], node_ids: set[str], known: Callable[[str], bool] | None
) -> None:
    """The careful pass, run only when the fast one saw something unusual; it may accept
    links whose ends match a node id only after normalisation, by extending `node_ids`."""
    normalized = {normalize_curie(node_id) for node_id in node_ids}
    for index, link in enumerate(links):
        if not isinstance(link, dict):
            raise GraphFormatError(f"link {index} must be an object, got {_json_type(link)}")
        for end in ("source", "target"):
            ref = link.get(end)
            if ref in node_ids:
                continue
            if not isinstance(ref, str):
                raise GraphFormatError(f"link {index} has no '{end}' node id")
            if normalize_curie(ref) not in normalized and not (known and known(ref)):
                raise GraphFormatError(f"link {index} points to missing node {ref!r}")
            node_ids.add(ref)


def _check_link_ends(links: list[Any]) -> None:
    for index, link in enumerate(links):
        if not isinstance(link, dict):
            raise GraphFormatError(f"link {index} must be an object, got {_json_type(link)}")
        for end in ("source", "target"):
            ref = link.get(end)
            if not isinstance(ref, str) or not ref.strip():
                raise GraphFormatError(f"link {index} has no '{end}' node id")


def missing_ends(graph: dict[str, Any], known: Callable[[str], bool] | None = None) -> list[str]:
    """Link ends of `graph` that name no node of it (nor, with `known`, one known elsewhere),
    in first-seen order; ids are compared after CURIE normalisation."""
    have = {normalize_curie(node["id"]) for node in graph["nodes"]}
    missing: dict[str, None] = {}
    for link in graph["links"]:
        for ref in (link["source"], link["target"]):
            if ref in missing or normalize_curie(ref) in have or (known and known(ref)):
                continue
            missing[ref] = None
    return list(missing)


def complete_graph(graph: dict[str, Any], *, strict: bool = False) -> list[dict[str, Any]]:
    """Give `graph` a node for every link end it names but does not hold, as KGX does: the
    node's id is the end and its category is inferred from the id's prefix. Return the nodes
    added. `strict` refuses such a graph instead, naming the first link that points nowhere."""
    missing = missing_ends(graph)
    if missing and strict:
        first = next(
            (index, ref)
            for index, link in enumerate(graph["links"])
            for ref in (link["source"], link["target"])
            if ref in missing
        )
        raise GraphFormatError(f"link {first[0]} points to missing node {first[1]!r}")
    added = [inferred_node(node_id) for node_id in missing]
    graph["nodes"].extend(added)
    return added


def inferred_node(node_id: str) -> dict[str, Any]:
    """A node known only by its id: its category comes from the id's prefix."""
    prefix, sep, _ = node_id.partition(":")
    category = category_for_prefix(prefix) if sep else NAMED_THING
    return {"id": node_id, "category": category.removeprefix("biolink:")}


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")
