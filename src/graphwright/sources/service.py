"""The source services the MCP tools call: literature, grants, biomedical knowledge graph.

Each uses its remote API unless `offline` is set, and falls back to the bundled sample data when
the remote one fails, saying so in `notes`. After a failure the remote is skipped for a while so
that every call does not wait for the same timeout.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from graphwright.core.ids import normalize_curie
from graphwright.errors import InvalidInput, NotFound
from graphwright.settings import Settings
from graphwright.sources import kg, models, pubmed, reporter, webfetch
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.node_normalizer import NodeNormalizer, normalize_graphs

T = TypeVar("T")
R = TypeVar("R")

MAX_CITATIONS = 100
MAX_PMIDS = 200
MAX_NEIGHBORS = 500
SAMPLE_CORPUS = "graphwright sample corpus (sample data)"
SAMPLE_GRANTS = "graphwright sample grants (sample data, all synthetic)"
PUBMED = "PubMed (NCBI E-utilities)"
REPORTER = "NIH RePORTER"
NAME_RESOLVER = "Translator Name Resolution"


class RemoteGate:
    """Remembers why a remote source failed and keeps it closed for `cooldown` seconds."""

    def __init__(self, cooldown: float = 300.0) -> None:
        self.cooldown = cooldown
        self.reason = ""
        self._closed_until = 0.0

    @property
    def open(self) -> bool:
        return time.monotonic() >= self._closed_until

    def close(self, reason: str) -> None:
        self.reason = reason
        self._closed_until = time.monotonic() + self.cooldown


async def with_fallback(
    gate: RemoteGate,
    remote: Any | None,
    local: Any,
    call: Callable[[Any], T | Awaitable[T]],
    notes: list[str],
) -> tuple[T, bool]:
    """(`call(remote)`, True), or else (`call(local)`, False) with a note saying why.

    The remote backend is async; a local (sample data) one may answer directly.
    """
    if remote is not None and gate.open:
        try:
            return await call(remote), True
        except SourceUnavailable as exc:
            gate.close(str(exc))
    if remote is not None:
        notes.append(f"{gate.reason}; answered from the bundled sample data instead.")
    answer = call(local)
    if inspect.isawaitable(answer):
        answer = await answer
    return answer, False


class LiteratureService:
    def __init__(self, *, corpus: pubmed.SampleCorpus, remote: pubmed.EUtilsClient | None) -> None:
        self.corpus = corpus
        self.remote = remote
        self.gate = RemoteGate()

    @classmethod
    def from_settings(
        cls, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> LiteratureService:
        remote = None
        if not settings.offline:
            key = settings.ncbi_api_key.get_secret_value() if settings.ncbi_api_key else None
            remote = pubmed.EUtilsClient(api_key=key, transport=transport)
        return cls(corpus=pubmed.SampleCorpus.bundled(), remote=remote)

    async def search(self, query: str, max_results: int) -> models.LiteratureResult:
        if not query.strip():
            raise InvalidInput("Give a PubMed query, e.g. 'BRCA1 breast cancer'")
        if not 1 <= max_results <= MAX_CITATIONS:
            raise InvalidInput(f"maxResults must be between 1 and {MAX_CITATIONS}")
        notes: list[str] = []
        citations, from_remote = await with_fallback(
            self.gate,
            self.remote,
            self.corpus,
            lambda backend: backend.search(query, max_results),
            notes,
        )
        return models.LiteratureResult(
            source=PUBMED if from_remote else SAMPLE_CORPUS,
            query=query,
            citations=[models.Citation(**c) for c in citations],
            notes=notes,
        )

    async def get_articles(self, pmids: Sequence[str]) -> models.LiteratureResult:
        wanted = pubmed.clean_pmids(pmids)
        if len(wanted) > MAX_PMIDS:
            raise InvalidInput(f"Ask for at most {MAX_PMIDS} PubMed ids at a time")
        notes: list[str] = []
        samples = [p for p in wanted if pubmed.SampleCorpus.is_sample_id(p)]
        real = [p for p in wanted if p not in samples]
        citations = self.corpus.fetch(samples)
        source = SAMPLE_CORPUS
        if real:
            found, from_remote = await with_fallback(
                self.gate, self.remote, self.corpus, lambda backend: backend.fetch(real), notes
            )
            citations = found + citations
            source = PUBMED if from_remote else SAMPLE_CORPUS
        missing = set(wanted) - {c["pmid"] for c in citations}
        if missing and not citations:
            raise NotFound(
                f"No articles found for {'PubMed id' if len(missing) == 1 else 'PubMed ids'} "
                f"{', '.join(sorted(missing))} in {source}"
            )
        if missing:
            notes.append(f"Not found: {', '.join(sorted(missing))}.")
        return models.LiteratureResult(
            source=source,
            pmidsRequested=wanted,
            citations=[models.Citation(**c) for c in citations],
            notes=notes,
        )


class GrantsService:
    def __init__(
        self,
        *,
        samples: reporter.SampleGrants,
        remote: reporter.ReporterClient | None,
        fetcher: webfetch.SafeFetcher,
    ) -> None:
        self.samples = samples
        self.remote = remote
        self.fetcher = fetcher
        self.gate = RemoteGate()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        resolver: webfetch.Resolver = webfetch.system_resolver,
    ) -> GrantsService:
        fetcher = webfetch.SafeFetcher(
            allow_hosts=settings.fetch_allow_hosts,
            max_bytes=settings.fetch_max_bytes,
            timeout=settings.fetch_timeout_seconds,
            resolver=resolver,
            transport=transport,
        )
        remote = None if settings.offline else reporter.ReporterClient(transport=transport)
        return cls(samples=reporter.SampleGrants.bundled(), remote=remote, fetcher=fetcher)

    async def search(self, query: reporter.GrantQuery) -> models.GrantSearchResult:
        notes: list[str] = []
        page, from_remote = await with_fallback(
            self.gate, self.remote, self.samples, lambda backend: backend.search(query), notes
        )
        return models.GrantSearchResult(
            source=REPORTER if from_remote else SAMPLE_GRANTS,
            query=query.text,
            total=page.total,
            offset=query.offset,
            grants=[models.Grant(**grant) for grant in page.grants],
            notes=notes,
        )

    async def fetch_page(self, url: str) -> models.GrantPage:
        """The page at `url` as sanitised markdown (fetched under the SSRF rules)."""
        page = await self.fetcher.fetch(url)
        converted = webfetch.to_markdown_page(page, default_title="NIH Grant Details")
        return models.GrantPage(
            title=converted.title,
            source=converted.source,
            contentType=converted.content_type,
            convertedAt=converted.converted_at,
            markdown=converted.markdown,
        )


@dataclass(frozen=True)
class GraphAnswer(Generic[R]):
    """A KG answer: the structured result and the seed graph JSON for the artifact."""

    result: R
    graph: kg.Graph


class KnowledgeGraphService:
    def __init__(
        self,
        *,
        sample: kg.SampleKG,
        remote: kg.TrapiKG | None = None,
        names: kg.NameResolver | None = None,
        normalizer: NodeNormalizer | None = None,
    ) -> None:
        self.sample = sample
        self.remote = remote
        self.names = names
        self.normalizer = normalizer
        self.gate = RemoteGate()
        self.names_gate = RemoteGate()

    @classmethod
    def from_settings(
        cls, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> KnowledgeGraphService:
        remote = names = None
        if not settings.offline and settings.kg_api_url:
            remote = kg.TrapiKG(settings.kg_api_url, transport=transport)
        if not settings.offline and settings.name_resolver_url:
            names = kg.NameResolver(settings.name_resolver_url, transport=transport)
        normalizer = None
        if not settings.offline and settings.node_normalizer_url:
            normalizer = NodeNormalizer(settings.node_normalizer_url, transport=transport)
        return cls(sample=kg.SampleKG.bundled(), remote=remote, names=names, normalizer=normalizer)

    async def resolve_name(self, name: str, limit: int = 10) -> models.Resolution:
        notes: list[str] = []
        matches, from_remote = await with_fallback(
            self.names_gate,
            self.names,
            self.sample,
            lambda backend: backend.resolve(name, limit),
            notes,
        )
        return models.Resolution(
            name=name,
            source=NAME_RESOLVER if from_remote else self.sample.label,
            matches=[models.EntityMatch(**vars(match)) for match in matches],
        )

    async def entity(self, curie_or_name: str) -> models.Entity:
        """The entity a CURIE names, or the best match for a name."""
        text = curie_or_name.strip()
        if not text:
            raise InvalidInput("Give a CURIE (e.g. NCBIGene:7157) or a name (e.g. TP53)")
        if kg.looks_like_curie(text):
            curie = normalize_curie(text)
            if curie in self.sample.nodes:
                return models.Entity(**self.sample.public_node(curie))
            return models.Entity(id=curie, name=curie)
        matches = (await self.resolve_name(text, 1)).matches
        if not matches:
            raise NotFound(
                f"No entity named '{text}' is known. "
                "Try resolveName with another spelling, or give a CURIE such as NCBIGene:7157."
            )
        best = matches[0]
        return models.Entity(id=best.id, name=best.name, category=best.category)

    async def neighbors(
        self,
        curie_or_name: str,
        *,
        predicate: str | None = None,
        category: str | None = None,
        limit: int = 50,
        normalize: bool = False,
    ) -> GraphAnswer[models.NeighborResult]:
        if not 1 <= limit <= MAX_NEIGHBORS:
            raise InvalidInput(f"limit must be between 1 and {MAX_NEIGHBORS}")
        entity = await self.entity(curie_or_name)
        label = kg.link_label(predicate) if predicate else None
        wanted_category = kg.category_name(category) if category else None
        graph, source, notes = await self._graph_call(
            lambda backend: backend.neighbors(
                entity.id, label=label, category=wanted_category, limit=limit
            )
        )
        if normalize:
            graph = await self._with_equivalents(graph, notes)
        names = {node["id"]: node for node in graph["nodes"]}
        neighbors = []
        for link in graph["links"]:
            outgoing = link["source"] == entity.id
            other = names[link["target"] if outgoing else link["source"]]
            neighbors.append(
                models.Neighbor(
                    id=other["id"],
                    name=other.get("name") or other["id"],
                    category=other.get("category"),
                    label=link["label"],
                    direction="out" if outgoing else "in",
                    evidence=[str(item) for item in link["evidence"]],
                )
            )
        result = models.NeighborResult(
            source=source, entity=entity, neighbors=neighbors, notes=notes
        )
        return GraphAnswer(result=result, graph=graph)

    async def paths(
        self, source: str, target: str, max_hops: int, limit: int = 10, *, normalize: bool = False
    ) -> GraphAnswer[models.PathResult]:
        if not 1 <= max_hops <= kg.MAX_HOPS:
            raise InvalidInput(f"maxHops must be between 1 and {kg.MAX_HOPS}")
        start = await self.entity(source)
        end = await self.entity(target)
        if start.id == end.id:
            raise InvalidInput(f"Source and target are the same entity ({start.id})")
        graph, label, notes = await self._graph_call(
            lambda backend: backend.path_graph(start.id, end.id, max_hops)
        )
        found = kg.find_paths(graph, start.id, end.id, max_hops, limit)
        subgraph = kg.path_subgraph(graph, found)
        if normalize:
            subgraph = await self._with_equivalents(subgraph, notes)
        result = models.PathResult(
            source=label, start=start, end=end, maxHops=max_hops, paths=found, notes=notes
        )
        return GraphAnswer(result=result, graph=subgraph)

    async def _with_equivalents(self, graph: kg.Graph, notes: list[str]) -> kg.Graph:
        """The graph with the Node Normalizer's equivalent ids on its nodes, so that a later
        merge joins other results' ids of the same entities; offline, the graph as it is."""
        if self.normalizer is None:
            notes.append("The Node Normalizer is off (offline): no equivalent ids were added.")
            return graph
        [(_, normalized)], note = await normalize_graphs([("kg", graph)], self.normalizer)
        if note:
            notes.append(note)
        return normalized

    async def _graph_call(
        self, call: Callable[[kg.KGBackend], Awaitable[kg.Graph]]
    ) -> tuple[kg.Graph, str, list[str]]:
        """(graph, the backend that gave it, notes) from the remote KG, else the sample KG."""
        notes: list[str] = []
        graph, from_remote = await with_fallback(self.gate, self.remote, self.sample, call, notes)
        label = self.remote.label if from_remote and self.remote else self.sample.label
        return graph, label, notes
