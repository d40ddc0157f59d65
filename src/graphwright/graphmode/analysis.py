"""Graph analysis over plain node and edge lists, with networkx.

Nodes are mappings with `id`, `label`, `type`, `data`; edges are mappings with `id`, `source`,
`target`, `label`, `type`. Every function is pure: it reads the lists and returns plain dicts, so
the same code serves the embedded database and the REST client. Structural measures ignore edge
direction and collapse parallel edges (a knowledge-graph relation connects both ends); paths and
neighbours may follow direction when asked.

Exact algorithms are used while they are cheap; above a size, a sampled or bounded one is used
and the result says so (`approximate: true`), because a tool call must answer in seconds.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import networkx as nx

from graphwright.errors import InvalidInput, NotFound

Node = Mapping[str, Any]
Edge = Mapping[str, Any]
_G = TypeVar("_G", bound=nx.Graph)

EXACT_DIAMETER_MAX_NODES = 2_000
EXACT_BETWEENNESS_MAX_NODES = 1_000
BETWEENNESS_SAMPLE_BUDGET = 2_000_000  # sampled sources x (nodes + edges) we are willing to visit
FORCE_LAYOUT_MAX_NODES = 2_000
EXACT_HISTOGRAM_MAX_DEGREES = 25

CentralityMeasure = Literal["degree", "betweenness", "pagerank"]
LayoutKind = Literal["force", "hierarchical", "circular"]
Direction = Literal["out", "in", "both"]


def undirected(nodes: Sequence[Node], edges: Sequence[Edge]) -> nx.Graph:
    """A simple undirected graph; each pair remembers the ids of the edges joining it."""
    return _simple(nx.Graph(), nodes, edges)


def directed(nodes: Sequence[Node], edges: Sequence[Edge]) -> nx.DiGraph:
    return _simple(nx.DiGraph(), nodes, edges)


def _simple(graph: _G, nodes: Sequence[Node], edges: Sequence[Edge]) -> _G:
    graph.add_nodes_from(node["id"] for node in nodes)
    for edge in edges:
        source, target = edge["source"], edge["target"]
        if graph.has_edge(source, target):
            graph[source][target]["ids"].append(edge["id"])
        else:
            graph.add_edge(source, target, ids=[edge["id"]])
    return graph


def edge_degrees(nodes: Sequence[Node], edges: Sequence[Edge]) -> Counter[str]:
    """Edges touching each node (parallel edges counted; a self-loop counts twice, as networkx)."""
    degree: Counter[str] = Counter({node["id"]: 0 for node in nodes})
    for edge in edges:
        degree[edge["source"]] += 1
        degree[edge["target"]] += 1
    return degree


# --- structure -------------------------------------------------------------------------------


def structure(nodes: Sequence[Node], edges: Sequence[Edge], *, seed: int = 0) -> dict[str, Any]:
    """Size, density, connected components, diameter of the largest one and degree spread."""
    graph = undirected(nodes, edges)
    components = sorted((len(c) for c in nx.connected_components(graph)), reverse=True)
    degrees = [degree for _, degree in graph.degree()]
    return {
        "nodeCount": len(nodes),
        "edgeCount": len(edges),
        "density": round(nx.density(graph), 6),
        "components": {
            "count": len(components),
            "largestSize": components[0] if components else 0,
            "sizes": components[:10],
            "isolatedNodes": sum(1 for degree in degrees if degree == 0),
        },
        "diameter": largest_component_diameter(graph, seed=seed),
        "degree": degree_distribution(degrees),
        "selfLoops": nx.number_of_selfloops(graph),
    }


def largest_component_diameter(graph: nx.Graph, *, seed: int = 0) -> dict[str, Any]:
    """Exact on small components; above EXACT_DIAMETER_MAX_NODES a two-sweep lower bound."""
    if graph.number_of_nodes() == 0:
        return {"value": None, "approximate": False, "componentSize": 0}
    largest = graph.subgraph(max(nx.connected_components(graph), key=len))
    size = largest.number_of_nodes()
    if size <= EXACT_DIAMETER_MAX_NODES:
        return {"value": nx.diameter(largest), "approximate": False, "componentSize": size}
    return {
        "value": nx.approximation.diameter(largest, seed=seed),
        "approximate": True,
        "method": "two-sweep lower bound",
        "componentSize": size,
    }


def degree_distribution(degrees: Sequence[int]) -> dict[str, Any]:
    """Summary statistics and a histogram: one bin per degree when few, else powers of two."""
    if not degrees:
        return {"min": 0, "max": 0, "mean": 0.0, "median": 0.0, "histogram": []}
    counts = Counter(degrees)
    if len(counts) <= EXACT_HISTOGRAM_MAX_DEGREES:
        histogram = [{"min": d, "max": d, "count": counts[d]} for d in sorted(counts)]
    else:
        histogram = _log2_histogram(counts)
    return {
        "min": min(degrees),
        "max": max(degrees),
        "mean": round(statistics.fmean(degrees), 4),
        "median": float(statistics.median(degrees)),
        "histogram": histogram,
    }


def _log2_histogram(counts: Counter[int]) -> list[dict[str, int]]:
    bins: Counter[tuple[int, int]] = Counter()
    for degree, count in counts.items():
        low = 0 if degree == 0 else 1 << (degree.bit_length() - 1)
        high = 0 if degree == 0 else (low << 1) - 1
        bins[(low, high)] += count
    return [{"min": low, "max": high, "count": bins[(low, high)]} for low, high in sorted(bins)]


# --- centrality ------------------------------------------------------------------------------


def centrality(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    *,
    measure: CentralityMeasure = "degree",
    top: int = 10,
    seed: int = 0,
) -> dict[str, Any]:
    """The `top` most central nodes by degree, betweenness (sampled when large) or PageRank."""
    graph = undirected(nodes, edges)
    result: dict[str, Any] = {"measure": measure, "approximate": False}
    if measure == "degree":
        scores = nx.degree_centrality(graph)
    elif measure == "betweenness":
        samples = betweenness_samples(graph.number_of_nodes(), graph.number_of_edges())
        scores = nx.betweenness_centrality(graph, k=samples, seed=seed)
        if samples is not None:
            result.update(approximate=True, sampledSources=samples)
    elif measure == "pagerank":
        scores = nx.pagerank(directed(nodes, edges)) if graph.number_of_nodes() else {}
    else:
        raise InvalidInput(
            f"Unknown centrality measure '{measure}'; use degree, betweenness or pagerank"
        )
    result["top"] = _ranked(scores, _labels(nodes), top)
    return result


def betweenness_samples(node_count: int, edge_count: int) -> int | None:
    """None (exact) for small graphs, else how many source nodes to sample."""
    if node_count <= EXACT_BETWEENNESS_MAX_NODES:
        return None
    affordable = BETWEENNESS_SAMPLE_BUDGET // (node_count + edge_count)
    return min(node_count, max(10, min(affordable, 200)))


def _ranked(scores: Mapping[str, float], labels: Mapping[str, Node], top: int) -> list[dict]:
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:top]
    return [_node_brief(labels[node_id], score=round(score, 6)) for node_id, score in best]


# --- communities -----------------------------------------------------------------------------


def communities(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    *,
    resolution: float = 1.0,
    seed: int = 0,
    max_members: int = 20,
) -> dict[str, Any]:
    """Louvain communities (seeded, so repeatable), largest first, with their node types."""
    graph = undirected(nodes, edges)
    if graph.number_of_nodes() == 0:
        return {"algorithm": "louvain", "count": 0, "modularity": None, "communities": []}
    found = nx.community.louvain_communities(graph, resolution=resolution, seed=seed)
    found = sorted(found, key=lambda members: (-len(members), min(members)))
    labels = _labels(nodes)
    # Modularity is undefined without edges (networkx divides by the edge count).
    modularity = (
        nx.community.modularity(graph, found, resolution=resolution)
        if graph.number_of_edges()
        else None
    )
    return {
        "algorithm": "louvain",
        "count": len(found),
        "modularity": None if modularity is None else round(modularity, 6),
        "communities": [
            {
                "index": index,
                "size": len(members),
                "types": dict(Counter(labels[m].get("type") or "other" for m in members)),
                "members": [_node_brief(labels[m]) for m in _by_degree(graph, members)][
                    :max_members
                ],
            }
            for index, members in enumerate(found)
        ],
    }


def _by_degree(graph: nx.Graph, members: Iterable[str]) -> list[str]:
    return sorted(members, key=lambda node_id: (-graph.degree(node_id), node_id))


# --- layout ----------------------------------------------------------------------------------


def layout(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    *,
    kind: LayoutKind = "force",
    scale: float = 1000.0,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Positions `{id: {x, y}}` centred on the origin, within `scale` of it."""
    if not nodes:
        return {}
    if kind == "force":
        positions = _force_positions(undirected(nodes, edges), seed=seed)
    elif kind == "hierarchical":
        positions = _layered_positions(directed(nodes, edges))
    elif kind == "circular":
        positions = nx.circular_layout(undirected(nodes, edges))
    else:
        raise InvalidInput(f"Unknown layout '{kind}'; use force, hierarchical or circular")
    return {
        node_id: {"x": round(float(x) * scale, 2), "y": round(float(y) * scale, 2)}
        for node_id, (x, y) in positions.items()
    }


def _force_positions(graph: nx.Graph, *, seed: int) -> dict[str, Any]:
    size = graph.number_of_nodes()
    if size > FORCE_LAYOUT_MAX_NODES:
        raise InvalidInput(
            f"The force layout handles up to {FORCE_LAYOUT_MAX_NODES:,} nodes and this graph has "
            f"{size:,}; use the 'hierarchical' or 'circular' layout, or remove nodes first"
        )
    # Each iteration costs O(n^2): fewer iterations on bigger graphs keep the call to seconds.
    iterations = max(10, min(50, 25_000 // max(size, 1)))
    return nx.spring_layout(graph, seed=seed, iterations=iterations)


def layers(graph: nx.DiGraph) -> dict[str, int]:
    """Layer of each node: its generation in the DAG of strongly connected components."""
    condensed = nx.condensation(graph)
    layer_of_component = {
        component: depth
        for depth, generation in enumerate(nx.topological_generations(condensed))
        for component in generation
    }
    mapping = condensed.graph["mapping"]
    return {node_id: layer_of_component[mapping[node_id]] for node_id in graph}


def _layered_positions(graph: nx.DiGraph) -> dict[str, Any]:
    layer_of = layers(graph)
    by_layer: dict[int, list[str]] = {}
    for node_id, layer in layer_of.items():
        by_layer.setdefault(layer, []).append(node_id)
    if len(by_layer) == 1:  # one layer: a row, not a single column point
        only = by_layer[0]
        return {node_id: (_spread(i, len(only)), 0.0) for i, node_id in enumerate(only)}
    positions = nx.multipartite_layout(graph, subset_key=by_layer, align="horizontal")
    top = min(float(positions[node_id][1]) for node_id in by_layer[0])
    flip = -1.0 if top > 0 else 1.0  # layer 0 at the top of the screen (smallest y)
    return {node_id: (float(x), float(y) * flip) for node_id, (x, y) in positions.items()}


def _spread(index: int, count: int) -> float:
    return 0.0 if count == 1 else -1.0 + 2.0 * index / (count - 1)


# --- paths, neighbours, search ---------------------------------------------------------------


def shortest_path(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    source: str,
    target: str,
    *,
    follow_direction: bool = False,
) -> dict[str, Any]:
    """The shortest path from `source` to `target` as nodes and the edges walked."""
    labels = _labels(nodes)
    _require_nodes(labels, source, target)
    graph = directed(nodes, edges) if follow_direction else undirected(nodes, edges)
    try:
        path = nx.shortest_path(graph, source, target)
    except nx.NetworkXNoPath:
        raise NotFound(
            f"No path from '{_name(labels[source])}' to '{_name(labels[target])}'"
            + (" following edge direction" if follow_direction else "")
        ) from None
    edges_by_id = {edge["id"]: edge for edge in edges}
    walked = [edges_by_id[graph[a][b]["ids"][0]] for a, b in itertools.pairwise(path)]
    return {
        "length": len(path) - 1,
        "nodes": [_node_brief(labels[node_id]) for node_id in path],
        "edges": [_edge_brief(edge) for edge in walked],
    }


def neighbors(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    node_id: str,
    *,
    depth: int = 1,
    direction: Direction = "both",
    limit: int = 100,
) -> dict[str, Any]:
    """Nodes within `depth` hops of `node_id` (breadth first), with the edges that reach them."""
    labels = _labels(nodes)
    _require_nodes(labels, node_id)
    adjacency = _adjacency(edges, direction)
    distance = {node_id: 0}
    reached_by: dict[str, Edge] = {}
    queue = deque([node_id])
    while queue:
        current = queue.popleft()
        if distance[current] == depth:
            continue
        for edge, other in adjacency.get(current, ()):
            if other not in distance:
                distance[other] = distance[current] + 1
                reached_by[other] = edge
                queue.append(other)
    found = [other for other in distance if other != node_id]
    return {
        "node": _node_brief(labels[node_id]),
        "count": len(found),
        "neighbors": [
            {
                **_node_brief(labels[other]),
                "distance": distance[other],
                "via": _edge_brief(reached_by[other]),
            }
            for other in found[:limit]
        ],
        "truncated": len(found) > limit,
    }


def _adjacency(edges: Sequence[Edge], direction: Direction) -> dict[str, list[tuple[Edge, str]]]:
    adjacency: dict[str, list[tuple[Edge, str]]] = {}
    for edge in edges:
        source, target = edge["source"], edge["target"]
        if direction in ("out", "both"):
            adjacency.setdefault(source, []).append((edge, target))
        if direction in ("in", "both"):
            adjacency.setdefault(target, []).append((edge, source))
    return adjacency


def search(
    nodes: Sequence[Node],
    *,
    query: str | None = None,
    properties: Mapping[str, Any] | None = None,
    node_type: str | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    """Nodes matching text (id, label, type, data values; case-insensitive), exact property
    values (top-level fields or `data` keys) and a type; best text matches first."""
    if not query and not properties and not node_type:
        raise InvalidInput("Give a query, properties or a type to search for")
    needle = (query or "").strip().lower()
    ranked: list[tuple[int, int, Node]] = []
    for position, node in enumerate(nodes):
        if node_type and not _same_type(node, node_type):
            continue
        if properties and not _has_properties(node, properties):
            continue
        rank = _text_rank(node, needle) if needle else 0
        if rank is not None:
            ranked.append((rank, position, node))
    ranked.sort(key=lambda item: (item[0], item[1]))
    return {
        "count": len(ranked),
        "nodes": [_node_brief(node) for _, _, node in ranked[:limit]],
        "truncated": len(ranked) > limit,
    }


def _text_rank(node: Node, needle: str) -> int | None:
    """0 exact label or id, 1 label prefix, 2 label or id substring, 3 type or data value."""
    label = str(node.get("label") or "").lower()
    node_id = str(node["id"]).lower()
    if needle in (label, node_id):
        return 0
    if label.startswith(needle):
        return 1
    if needle in label or needle in node_id:
        return 2
    others = [node.get("type"), *list(_flat_values(node.get("data") or {}))]
    if any(needle in str(value).lower() for value in others if value is not None):
        return 3
    return None


def _flat_values(value: Any) -> Iterable[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _flat_values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _flat_values(item)
    else:
        yield value


def _has_properties(node: Node, properties: Mapping[str, Any]) -> bool:
    data = node.get("data") or {}
    for key, wanted in properties.items():
        actual = node[key] if key in node and key != "data" else data.get(key, _MISSING)
        if actual is _MISSING or not _equal(actual, wanted):
            return False
    return True


_MISSING = object()


def _equal(actual: Any, wanted: Any) -> bool:
    if isinstance(actual, str) and isinstance(wanted, str):
        return actual.casefold() == wanted.casefold()
    if isinstance(actual, list) and not isinstance(wanted, list):
        return any(_equal(item, wanted) for item in actual)
    return bool(actual == wanted)


def _same_type(node: Node, node_type: str) -> bool:
    return str(node.get("type") or "").casefold() == node_type.casefold()


# --- small helpers ---------------------------------------------------------------------------


def _labels(nodes: Sequence[Node]) -> dict[str, Node]:
    return {node["id"]: node for node in nodes}


def _require_nodes(labels: Mapping[str, Node], *node_ids: str) -> None:
    for node_id in node_ids:
        if node_id not in labels:
            raise NotFound(f"No node '{node_id}' in this graph")


def _name(node: Node) -> str:
    return str(node.get("label") or node["id"])


def _node_brief(node: Node, **extra: Any) -> dict[str, Any]:
    return {"id": node["id"], "label": node.get("label"), "type": node.get("type"), **extra}


def _edge_brief(edge: Edge) -> dict[str, Any]:
    return {
        "id": edge["id"],
        "source": edge["source"],
        "target": edge["target"],
        "label": edge.get("label"),
    }
