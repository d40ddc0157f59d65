"""Biomedical knowledge-graph backends: the bundled sample KG (networkx) and a TRAPI HTTP API.

Both answer in the seed graph JSON (`{"nodes": [{id, name, category}], "links": [{source,
target, label, evidence}]}`). Names resolve to CURIEs through the sample KG's lexicon or,
when configured, the Translator Name Resolution service.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

import httpx
import networkx as nx
import orjson

from graphwright.core.formats import trapi_read
from graphwright.core.formats.common import label_from, predicate_for
from graphwright.core.graph import GraphFormatError
from graphwright.core.ids import normalize_curie
from graphwright.core.merge import GraphAccumulator
from graphwright.errors import InvalidInput, NotFound
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.http import fetch_bytes

Graph = dict[str, Any]
CURIE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*:[^\s:][^\s]*$")
NODE_FIELDS = ("id", "name", "category")
MAX_HOPS = 3


def looks_like_curie(text: str) -> bool:
    return CURIE.fullmatch(text.strip()) is not None


def link_label(predicate_or_label: str) -> str:
    """`biolink:treats`, `treats` and `Treats` all become the link label `treats`."""
    return label_from(predicate_for(predicate_or_label))


def category_name(category: str) -> str:
    """`biolink:Gene` and `gene` both become `Gene`."""
    name = category.strip().removeprefix("biolink:")
    return name[:1].upper() + name[1:]


@dataclass(frozen=True)
class EntityMatch:
    id: str
    name: str
    category: str | None
    score: float
    matched: str


class KGBackend(Protocol):
    label: str

    async def neighbors(
        self, curie: str, *, label: str | None, category: str | None, limit: int
    ) -> Graph: ...

    async def path_graph(self, source: str, target: str, max_hops: int) -> Graph: ...


class SampleKG:
    """The bundled sample KG; `neighbors` and `path_graph` read it with networkx."""

    label = "graphwright sample knowledge graph (sample data)"

    def __init__(self, graph: Graph) -> None:
        self.nodes: dict[str, dict[str, Any]] = {node["id"]: node for node in graph["nodes"]}
        self.graph = nx.MultiDiGraph()
        self.graph.add_nodes_from(self.nodes)
        for link in graph["links"]:
            self.graph.add_edge(link["source"], link["target"], **link)
        self.lexicon: dict[str, set[str]] = {}
        for node in graph["nodes"]:
            for term in (node["id"], node["name"], *node.get("synonyms", [])):
                self.lexicon.setdefault(term.casefold(), set()).add(node["id"])

    @classmethod
    def bundled(cls) -> SampleKG:
        data = resources.files("graphwright.sources.sample_data").joinpath("kg.json")
        return cls(orjson.loads(data.read_bytes()))

    def public_node(self, curie: str) -> dict[str, Any]:
        node = self.nodes[curie]
        return {key: node[key] for key in NODE_FIELDS if key in node}

    def resolve(self, name: str, limit: int) -> list[EntityMatch]:
        """Exact name or synonym matches first, then prefix, then substring matches."""
        wanted = name.strip().casefold()
        if not wanted:
            raise InvalidInput("Give a name to resolve, e.g. 'imatinib' or 'TP53'")
        scores: dict[str, tuple[float, str]] = {}
        for term, ids in self.lexicon.items():
            if term == wanted:
                score = 1.0
            elif term.startswith(wanted):
                score = 0.8
            elif wanted in term:
                score = 0.5
            else:
                continue
            for curie in ids:
                if score > scores.get(curie, (0.0, ""))[0]:
                    scores[curie] = (score, term)
        ranked = sorted(scores.items(), key=lambda item: (-item[1][0], self.nodes[item[0]]["name"]))
        return [
            EntityMatch(
                id=curie,
                name=self.nodes[curie]["name"],
                category=self.nodes[curie].get("category"),
                score=score,
                matched=term,
            )
            for curie, (score, term) in ranked[:limit]
        ]

    def _require(self, curie: str) -> None:
        if curie not in self.nodes:
            raise NotFound(
                f"No entity '{curie}' in the sample knowledge graph. "
                "Use resolveName to find an identifier it knows."
            )

    async def neighbors(
        self, curie: str, *, label: str | None, category: str | None, limit: int
    ) -> Graph:
        self._require(curie)
        links = []
        edges = itertools.chain(
            self.graph.out_edges(curie, data=True), self.graph.in_edges(curie, data=True)
        )
        for source, target, data in edges:
            other = target if source == curie else source
            if label and data["label"] != label:
                continue
            if category and self.nodes[other].get("category") != category:
                continue
            links.append(_public_link(data))
        links = links[:limit]
        return self._graph({curie, *(end for link in links for end in _ends(link))}, links)

    async def path_graph(self, source: str, target: str, max_hops: int) -> Graph:
        self._require(source)
        self._require(target)
        links = [_public_link(data) for _, _, data in self.graph.edges(data=True)]
        return self._graph(set(self.nodes), links)

    def _graph(self, node_ids: Iterable[str], links: list[dict[str, Any]]) -> Graph:
        return {"nodes": [self.public_node(i) for i in sorted(node_ids)], "links": links}


def _public_link(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "source": data["source"],
        "target": data["target"],
        "label": data["label"],
        "evidence": list(data.get("evidence", [])),
    }


def _ends(link: dict[str, Any]) -> tuple[str, str]:
    return link["source"], link["target"]


def one_hop_query(curie: str, *, label: str | None, category: str | None) -> dict[str, Any]:
    """A TRAPI message asking for what `curie` connects to (one hop, subject = curie)."""
    target: dict[str, Any] = {}
    if category:
        target["categories"] = [f"biolink:{category}"]
    edge: dict[str, Any] = {"subject": "n0", "object": "n1"}
    if label:
        edge["predicates"] = [predicate_for(label)]
    return {
        "message": {
            "query_graph": {
                "nodes": {"n0": {"ids": [curie]}, "n1": target},
                "edges": {"e0": edge},
            }
        }
    }


def chain_query(source: str, target: str, hops: int) -> dict[str, Any]:
    """A TRAPI message for paths of exactly `hops` edges from `source` to `target`."""
    nodes: dict[str, Any] = {f"n{i}": {} for i in range(hops + 1)}
    nodes["n0"] = {"ids": [source]}
    nodes[f"n{hops}"] = {"ids": [target]}
    edges = {f"e{i}": {"subject": f"n{i}", "object": f"n{i + 1}"} for i in range(hops)}
    return {"message": {"query_graph": {"nodes": nodes, "edges": edges}}}


class TrapiKG:
    """A Translator/mediKanren-style TRAPI endpoint: POST {url}/query with a query graph."""

    def __init__(
        self,
        url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.label = f"TRAPI knowledge provider at {self.url}"
        self.transport = transport
        self.timeout = timeout

    async def neighbors(
        self, curie: str, *, label: str | None, category: str | None, limit: int
    ) -> Graph:
        graph = await self._query(one_hop_query(curie, label=label, category=category))
        links = graph["links"][:limit]
        kept = {curie, *(end for link in links for end in _ends(link))}
        return {"nodes": [n for n in graph["nodes"] if n["id"] in kept], "links": links}

    async def path_graph(self, source: str, target: str, max_hops: int) -> Graph:
        merged = GraphAccumulator()
        for hops in range(1, max_hops + 1):
            merged.add(await self._query(chain_query(source, target, hops)))
        return merged.to_graph()

    async def _query(self, message: dict[str, Any]) -> Graph:
        content = await fetch_bytes(
            "POST",
            f"{self.url}/query",
            label=self.label,
            transport=self.transport,
            timeout=self.timeout,
            json=message,
        )
        try:
            reply = orjson.loads(content)
        except orjson.JSONDecodeError:
            raise SourceUnavailable(f"{self.label} did not answer with JSON") from None
        message = reply.get("message") if isinstance(reply, dict) else None
        if not isinstance(message, dict) or not message.get("knowledge_graph"):
            return {"nodes": [], "links": []}
        try:
            graph = trapi_read.from_document(reply)
        except GraphFormatError as exc:
            raise SourceUnavailable(
                f"{self.label} sent an unusable knowledge_graph ({exc})"
            ) from None
        for node in graph["nodes"]:
            for key in [key for key in node if key not in NODE_FIELDS]:
                del node[key]
        return graph


class NameResolver:
    """The Translator Name Resolution service: GET {url}/lookup?string=...&limit=..."""

    def __init__(
        self, url: str, *, transport: httpx.AsyncBaseTransport | None = None, timeout: float = 20.0
    ) -> None:
        self.url = url.rstrip("/")
        self.transport = transport
        self.timeout = timeout

    async def resolve(self, name: str, limit: int) -> list[EntityMatch]:
        content = await fetch_bytes(
            "GET",
            f"{self.url}/lookup",
            label="Name resolution",
            transport=self.transport,
            timeout=self.timeout,
            params={"string": name, "limit": limit},
        )
        try:
            rows = orjson.loads(content)
        except orjson.JSONDecodeError:
            raise SourceUnavailable("Name resolution unavailable (JSONDecodeError)") from None
        return [_match_from_nameres(row, name) for row in rows if isinstance(row, dict)][:limit]


def _match_from_nameres(row: dict[str, Any], name: str) -> EntityMatch:
    types: Sequence[str] = row.get("types") or []
    top_score = float(row.get("score") or 0.0)
    return EntityMatch(
        id=normalize_curie(row["curie"]),
        name=row.get("label") or row["curie"],
        category=category_name(types[0]) if types else None,
        score=top_score,
        matched=name,
    )


def find_paths(graph: Graph, source: str, target: str, max_hops: int, limit: int) -> list[list]:
    """Up to `limit` shortest simple paths (links followed either way) of at most `max_hops`.

    Each path is its node ids; `path_links` gives the links along it.
    """
    undirected = nx.Graph()
    undirected.add_nodes_from(node["id"] for node in graph["nodes"])
    undirected.add_edges_from(_ends(link) for link in graph["links"])
    if source not in undirected or target not in undirected:
        return []
    try:
        found = []
        for path in nx.shortest_simple_paths(undirected, source, target):
            if len(path) - 1 > max_hops or len(found) == limit:
                break
            found.append(path)
    except nx.NetworkXNoPath:
        return []
    return found


def path_subgraph(graph: Graph, paths: list[list[str]]) -> Graph:
    """The nodes on `paths` and every link joining consecutive nodes of a path."""
    steps = {frozenset(pair) for path in paths for pair in itertools.pairwise(path)}
    on_path = {node_id for path in paths for node_id in path}
    return {
        "nodes": [node for node in graph["nodes"] if node["id"] in on_path],
        "links": [link for link in graph["links"] if frozenset(_ends(link)) in steps],
    }
