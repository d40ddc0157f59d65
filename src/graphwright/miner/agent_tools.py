"""The tools the miner's agents call, as LangChain tools over graphwright's services.

Seed 001's rule: a tool that fails returns its error as the tool's result, so the agent can
retry or change course. `dkg_publish_asset` writes nothing itself: the run stops at each call,
which becomes a publication request in the knowledge base's queue; a person approves it there
(through any door) and the knowledge base publishes it. When the run resumes, the tool reports
what the request came to.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import orjson
from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool

from graphwright.errors import GraphwrightError
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.schemas import PUBLISH_TOOL
from graphwright.miner.signals import checked, tag_shapes
from graphwright.miner.tavily import TavilyClient
from graphwright.sources.service import KnowledgeGraphService, LiteratureService

logger = logging.getLogger(__name__)

TEXT_LIMIT = 8_000
SPARQL_ROWS = 200


def _json(value: Any) -> str:
    text = orjson.dumps(value, default=str, option=orjson.OPT_INDENT_2).decode()
    if len(text) <= TEXT_LIMIT:
        return text
    return (
        f"{text[:TEXT_LIMIT]}\n… ({len(text) - TEXT_LIMIT} more characters; write large "
        "results to a file and narrow the query)"
    )


def _errors_as_results(name: str, fn: Callable[..., Awaitable[str]]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            return await fn(*args, **kwargs)
        except GraphwrightError as exc:
            return f"Error: {exc}"
        except Exception as exc:
            logger.warning("Miner tool %s failed: %s", name, exc, exc_info=True)
            return f"Error: {name} failed: {type(exc).__name__}: {exc}"

    return wrapper


def _tool(name: str, description: str, fn: Callable[..., Awaitable[str]]) -> BaseTool:
    return StructuredTool.from_function(
        coroutine=_errors_as_results(name, fn), name=name, description=description
    )


@dataclass
class MinerTools:
    """The agents' tools, built once per service over the services they call."""

    knowledge: KnowledgeService
    literature: LiteratureService | None = None
    kg: KnowledgeGraphService | None = None
    tavily: TavilyClient | None = None

    def knowledge_reads(self) -> list[BaseTool]:
        knowledge = self.knowledge

        async def dkg_get_asset(ual: str) -> str:
            return _json(await knowledge.get_jsonld(ual))

        async def dkg_sparql(query: str) -> str:
            answer = await knowledge.query(query, limit=SPARQL_ROWS)
            return _json(answer.model_dump(mode="json", by_alias=True, exclude_none=True))

        return [
            _tool(
                "dkg_get_asset",
                "Fetch a Knowledge Asset from the knowledge base (DKG-compatible) by its UAL "
                "(did:dkg:...), as JSON-LD.",
                dkg_get_asset,
            ),
            _tool(
                "dkg_sparql",
                "Run a read-only SPARQL query against the knowledge base, for graph mining and "
                "finding related entities. Current assets: GRAPH <current:graph> { ?g "
                "dkg:hasNamedGraph ?ka } GRAPH ?ka { ?s ?p ?o }. At most 200 rows.",
                dkg_sparql,
            ),
        ]

    def metadata(self) -> BaseTool:
        knowledge = self.knowledge

        async def dkg_get_asset_metadata(ual: str) -> str:
            metadata = await knowledge.metadata(ual)
            return _json(metadata.model_dump(mode="json", by_alias=True, exclude_none=True))

        return _tool(
            "dkg_get_asset_metadata",
            "What the knowledge base records about an asset: publisher, publish time, "
            "transaction, owner, how many later states. There is no stake per asset on the DKG.",
            dkg_get_asset_metadata,
        )

    def validate(self) -> BaseTool:
        knowledge = self.knowledge

        async def validate_candidate(candidate: dict[str, Any], runtime: ToolRuntime) -> str:
            tags = runtime.config.get("configurable", {}).get("miner_memory_tags") or []
            shapes = await tag_shapes(runtime.store, tags) if runtime.store else []
            _, signals = await checked(candidate, knowledge=knowledge, shapes=shapes)
            return _json(signals)

        return _tool(
            "validate_candidate",
            "Check one candidate (its JSON-LD object, as written under /candidates/) in code: "
            "it expands as JSON-LD, passes the SHACL shapes (the default and the tags' "
            "shapes.ttl), has no duplicate in the knowledge base, and its UAL links exist. "
            "Returns the checks and the documented confidence with its breakdown: base your "
            "verdict on it.",
            validate_candidate,
        )

    def sources(self) -> list[BaseTool]:
        """graphwright's own sources: PubMed, the biomedical knowledge graph, the web."""
        tools = [self._web_search()] if self.tavily is not None else []
        if self.literature is not None:
            literature = self.literature

            async def search_pubmed(query: str, max_results: int = 5) -> str:
                result = await literature.search(query, max(1, min(max_results, 20)))
                return _json(result.model_dump(exclude_none=True))

            tools.append(
                _tool(
                    "search_pubmed",
                    "Search PubMed for articles (title, authors, year, PMID, abstract). "
                    "Cite facts by PMID.",
                    search_pubmed,
                )
            )
        if self.kg is not None:
            kg = self.kg

            async def kg_neighbors(curie_or_name: str, predicate: str | None = None) -> str:
                answer = await kg.neighbors(curie_or_name, predicate=predicate, limit=50)
                return _json(answer.result.model_dump(exclude_none=True))

            tools.append(
                _tool(
                    "kg_neighbors",
                    "What a biomedical entity (a CURIE such as NCBIGene:7157, or a name) is "
                    "linked to in the biomedical knowledge graph, with evidence PMIDs.",
                    kg_neighbors,
                )
            )
        return tools

    def _web_search(self) -> BaseTool:
        assert self.tavily is not None
        tavily = self.tavily

        async def tavily_search(query: str, max_results: int = 5) -> str:
            answer = await tavily.search(query, max_results=max(1, min(max_results, 10)))
            return answer.as_text()

        return _tool(
            "tavily_search",
            "Search the web for real-time information (Tavily). Without a key it says so: "
            "then carry on with the knowledge base, PubMed and the biomedical KG.",
            tavily_search,
        )

    def publish(self) -> BaseTool:
        knowledge = self.knowledge

        async def dkg_publish_asset(
            jsonld: dict[str, Any],
            runtime: ToolRuntime,
            title: str | None = None,
            revision_of: str | None = None,
        ) -> str:
            requests = runtime.config.get("configurable", {}).get("miner_requests") or {}
            request_id = requests.get(runtime.tool_call_id)
            if request_id is None:
                return "Error: no person approved this publish; nothing was published"
            request = await anyio.to_thread.run_sync(knowledge.get_request, request_id)
            if request.status != "published":
                return (
                    f"Error: publication request {request_id} is {request.status}; nothing was "
                    "published"
                )
            revised = f", a revision of {request.revision_of}" if request.revision_of else ""
            return f"Published as {request.ual} (approved by {request.decided_by}){revised}"

        return _tool(
            PUBLISH_TOOL,
            "Publish one validated candidate Knowledge Asset (JSON-LD with @context, @type, "
            "@id, name and identifier, as written under /candidates/) to the knowledge base. "
            "Its bookkeeping (linkedAssets, trustSignals, provenance, domainTags) is kept "
            "beside it, not published; its provenance sources are published as "
            "prov:wasDerivedFrom. Give revision_of (a UAL) to correct an existing asset. A "
            "person approves, edits or rejects each call before anything is published; a "
            "candidate that duplicates an existing asset is offered as its revision, or not "
            "at all when it adds nothing.",
            dkg_publish_asset,
        )
