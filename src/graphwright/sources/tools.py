"""The literature, grants and kg MCP servers: thin tools over the source services.

Each result has markdown for the model, structuredContent (the tool's outputSchema) and, where the
seed's servers made one, an artifact: a bibliography, a grant page, a knowledge graph.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcpkit
from graphwright.core.words import counted
from graphwright.mcp_apps import (
    BIBLIOGRAPHY_VIEW,
    KNOWLEDGE_GRAPH_VIEW,
    ServerViews,
    bibliography_payload,
    knowledge_graph_payload,
)
from graphwright.settings import Settings, get_settings
from graphwright.sources import models
from graphwright.sources.kg import MAX_HOPS
from graphwright.sources.reporter import MAX_LIMIT, MAX_OFFSET, GrantQuery
from graphwright.sources.service import (
    MAX_CITATIONS,
    MAX_NEIGHBORS,
    GrantsService,
    KnowledgeGraphService,
    LiteratureService,
)
from graphwright.sources.webfetch import truncate_at_line

MODEL_TEXT_LIMIT = 12_000
ABSTRACT_PREVIEW = 500
SUMMARY_LINES = 40

READ_REMOTE = mcpkit.hints(read_only=True, open_world=True)


def _notes(notes: list[str]) -> str:
    return "".join(f"\n\n_Note: {note}_" for note in notes)


# -- literature --------------------------------------------------------------------------------


def _citation_markdown(index: int, citation: models.Citation) -> str:
    authors = ", ".join(citation.authors[:3]) + (" et al." if len(citation.authors) > 3 else "")
    journal = f" *{citation.journal}*" if citation.journal else ""
    year = f" ({citation.year})" if citation.year else ""
    ids = f"PMID: {citation.pmid}" + (f" · DOI: {citation.doi}" if citation.doi else "")
    line = f"{index}. **{citation.title}** {authors}.{journal}{year}. {ids}"
    if citation.synthetic:
        line += " · _synthetic sample record_"
    if citation.abstract:
        abstract = citation.abstract
        if len(abstract) > ABSTRACT_PREVIEW:
            abstract = abstract[:ABSTRACT_PREVIEW].rsplit(" ", 1)[0] + " …"
        line += f"\n   {abstract}"
    return line


def _bibliography(result: models.LiteratureResult, title: str) -> CallToolResult:
    if not result.citations:
        return mcpkit.tool_result(
            f"# {title}\n\nNo articles found in {result.source}.{_notes(result.notes)}",
            structured=result,
        )
    body = "\n".join(_citation_markdown(i, c) for i, c in enumerate(result.citations, 1))
    text = f"# {title}\n\nSource: {result.source}\n\n{body}{_notes(result.notes)}"
    citations = [c.model_dump(exclude_none=True, exclude_defaults=True) for c in result.citations]
    artifact = mcpkit.Artifact(
        mcpkit.BIBLIOGRAPHY, "Article References", citations, metadata={"source": result.source}
    )
    return mcpkit.tool_result(text, structured=result, artifacts=[artifact])


def literature_server(
    service: LiteratureService | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """PubMed search and retrieval (NCBI E-utilities; bundled sample corpus offline)."""
    literature = service or LiteratureService.from_settings(settings or get_settings())
    views = ServerViews()
    view = views.link(BIBLIOGRAPHY_VIEW, bibliography_payload)
    server = mcpkit.new_server(
        "literature",
        instructions="Search PubMed and fetch citations. Results come with a bibliography "
        "artifact that the person sees; cite articles by PMID.",
        extensions=[views],
    )

    @mcpkit.tool(server, name="searchPubMed", annotations=READ_REMOTE, view=view)
    async def search_pubmed(
        query: Annotated[
            str,
            Field(
                description="PubMed query: words, phrases, and PubMed syntax such as "
                "'BRCA1[tiab] AND breast cancer'."
            ),
        ],
        maxResults: Annotated[
            int, Field(ge=1, le=MAX_CITATIONS, description="How many articles, best first.")
        ] = 10,
    ) -> Annotated[CallToolResult, models.LiteratureResult]:
        """Search PubMed for articles matching a query, most relevant first.

        Returns a markdown list (title, authors, journal, year, PMID, abstract excerpt) and a
        bibliography artifact. Use getArticles for full records of known PMIDs.
        """
        result = await literature.search(query, maxResults)
        return _bibliography(result, f"PubMed results for: {query}")

    @mcpkit.tool(server, name="getArticles", annotations=READ_REMOTE, view=view)
    async def get_articles(
        pmids: Annotated[
            list[str],
            Field(
                min_length=1,
                description="PubMed ids, e.g. ['11287972', 'PMID:15118073'].",
            ),
        ],
    ) -> Annotated[CallToolResult, models.LiteratureResult]:
        """Fetch PubMed articles by PMID: title, authors, journal, year, DOI and abstract.

        Returns a markdown list and a bibliography artifact. Ids that are not found are named.
        """
        result = await literature.get_articles(pmids)
        return _bibliography(result, f"PubMed articles {', '.join(result.pmidsRequested)}")

    return server


# -- grants ------------------------------------------------------------------------------------


def _grant_markdown(index: int, grant: models.Grant) -> str:
    facts = [
        f"Project {grant.projectNumber}" if grant.projectNumber else "",
        f"PI: {', '.join(grant.principalInvestigators)}" if grant.principalInvestigators else "",
        grant.organization or "",
        grant.agency or "",
        f"FY {grant.fiscalYear}" if grant.fiscalYear else "",
        f"${grant.awardAmount:,.0f}" if grant.awardAmount else "",
    ]
    line = f"{index}. **{grant.title}** — {' · '.join(f for f in facts if f)}"
    if grant.url:
        line += f"\n   {grant.url}"
    if grant.synthetic:
        line += "\n   _synthetic sample record, not a real award_"
    return line


def grants_server(
    service: GrantsService | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """NIH grant search (RePORTER v2; bundled sample grants offline) and safe page fetching."""
    grants = service or GrantsService.from_settings(settings or get_settings())
    server = mcpkit.new_server(
        "grants",
        instructions="Search NIH grants with searchGrants; turn a grant web page into a "
        "markdown document with fetchGrant.",
    )

    @mcpkit.tool(server, name="searchGrants", annotations=READ_REMOTE)
    async def search_grants(
        query: Annotated[
            str, Field(description="Words to find in grant titles, terms, abstracts.")
        ],
        fiscalYears: Annotated[
            list[Annotated[int, Field(ge=1, le=9999)]] | None,
            Field(description="Only these fiscal years, e.g. [2023, 2024]."),
        ] = None,
        piName: Annotated[
            str | None, Field(description="Only grants with this principal investigator.")
        ] = None,
        organization: Annotated[
            str | None, Field(description="Only grants held by this organization.")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Grants per page.")] = 10,
        offset: Annotated[
            int, Field(ge=0, le=MAX_OFFSET, description="Skip this many (for paging).")
        ] = 0,
    ) -> Annotated[CallToolResult, models.GrantSearchResult]:
        """Search NIH-funded research projects (NIH RePORTER), most recent fiscal year first.

        Returns a markdown list (title, project number, PI, organization, agency, year, amount,
        RePORTER link). Pass a grant's URL to fetchGrant for its full page.
        """
        query_spec = GrantQuery(
            text=query,
            fiscal_years=tuple(fiscalYears or ()),
            pi_name=piName,
            organization=organization,
            limit=limit,
            offset=offset,
        )
        result = await grants.search(query_spec)
        shown = f"{offset + 1}-{offset + len(result.grants)}" if result.grants else "none"
        body = "\n".join(_grant_markdown(offset + i, g) for i, g in enumerate(result.grants, 1))
        text = (
            f"# Grants for: {query}\n\nSource: {result.source}. {result.total} match(es); "
            f"showing {shown}.\n\n{body}{_notes(result.notes)}"
        )
        return mcpkit.tool_result(text, structured=result)

    @mcpkit.tool(server, name="fetchGrant", annotations=READ_REMOTE)
    async def fetch_grant(
        url: Annotated[
            str, Field(description="http(s) URL of a grant page, e.g. a RePORTER project page.")
        ],
    ) -> Annotated[CallToolResult, models.GrantPage]:
        """Fetch a web page (a grant's details) and convert it to markdown; tables are kept.

        The page becomes a text/markdown artifact for the person. Private, loopback and cloud
        metadata addresses are refused; pages are size-capped and must be HTML or text.
        """
        page = await grants.fetch_page(url)
        metadata = {
            "source": page.source,
            "contentType": page.contentType,
            "convertedAt": page.convertedAt,
        }
        artifact = mcpkit.Artifact(mcpkit.MARKDOWN, page.title, page.markdown, metadata=metadata)
        preview = page.markdown
        if len(preview) > MODEL_TEXT_LIMIT:
            preview = truncate_at_line(preview, MODEL_TEXT_LIMIT)
            preview += "\n\n… (truncated; the artifact has it all)"
        text = f"# {page.title}\n\nSource: {page.source}\n\n{preview}"
        return mcpkit.tool_result(text, structured=page, artifacts=[artifact])

    return server


# -- kg ----------------------------------------------------------------------------------------


def _entity(entity: models.Entity) -> str:
    kind = f", {entity.category}" if entity.category else ""
    return f"{entity.name} ({entity.id}{kind})"


def _neighbor_summary(result: models.NeighborResult) -> str:
    by_label: dict[tuple[str, str], list[models.Neighbor]] = defaultdict(list)
    for neighbor in result.neighbors:
        by_label[(neighbor.label, neighbor.direction)].append(neighbor)
    lines = []
    for (label, direction), group in sorted(by_label.items()):
        names = ", ".join(
            f"{n.name} ({n.id})" + (f" [{'; '.join(n.evidence)}]" if n.evidence else "")
            for n in group
        )
        verb = f"{label} →" if direction == "out" else f"← {label}"
        lines.append(f"- {verb}: {names}")
    shown = lines[:SUMMARY_LINES]
    if len(lines) > SUMMARY_LINES:
        shown.append(f"- … {len(lines) - SUMMARY_LINES} more groups in the artifact")
    return "\n".join(shown)


def _path_text(path: list[str], graph: dict[str, Any]) -> str:
    """`imatinib -[treats]-> CML <-[...]- X`: each step with its link label and direction."""
    names = {node["id"]: node.get("name") or node["id"] for node in graph["nodes"]}
    labels: dict[tuple[str, str], str] = {}
    for link in graph["links"]:
        labels.setdefault((link["source"], link["target"]), link["label"])
    text = names[path[0]]
    for here, there in itertools.pairwise(path):
        if (here, there) in labels:
            text += f" -[{labels[here, there]}]-> {names[there]}"
        else:
            text += f" <-[{labels[there, here]}]- {names[there]}"
    return text


def _graph_artifact(title: str, graph: dict[str, Any], source: str) -> list[mcpkit.Artifact]:
    if not graph["links"]:
        return []
    return [mcpkit.Artifact(mcpkit.KNOWLEDGE_GRAPH, title, graph, metadata={"source": source})]


NORMALIZE_HELP = (
    "Add the Translator Node Normalizer's equivalent ids to the nodes, so that merges join "
    "other results' ids of the same entities."
)


def kg_server(
    service: KnowledgeGraphService | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """Biomedical knowledge graph: neighbours, paths and name resolution."""
    knowledge = service or KnowledgeGraphService.from_settings(settings or get_settings())
    views = ServerViews()
    view = views.link(KNOWLEDGE_GRAPH_VIEW, knowledge_graph_payload)
    server = mcpkit.new_server(
        "kg",
        instructions="Explore a biomedical knowledge graph (genes, diseases, drugs, processes). "
        "Resolve names to CURIEs with resolveName; results come as knowledge-graph artifacts.",
        extensions=[views],
    )

    @mcpkit.tool(server, name="queryNeighbors", annotations=READ_REMOTE, view=view)
    async def query_neighbors(
        curieOrName: Annotated[
            str, Field(description="A CURIE such as NCBIGene:7157 or a name such as 'imatinib'.")
        ],
        predicate: Annotated[
            str | None,
            Field(description="Only links with this predicate, e.g. 'treats' or 'biolink:treats'."),
        ] = None,
        category: Annotated[
            str | None, Field(description="Only neighbours of this category: Gene, Disease, Drug.")
        ] = None,
        limit: Annotated[
            int, Field(ge=1, le=MAX_NEIGHBORS, description="At most this many links.")
        ] = 50,
        normalize: Annotated[bool, Field(description=NORMALIZE_HELP)] = False,
    ) -> Annotated[CallToolResult, models.NeighborResult]:
        """List what an entity is directly linked to (both directions), with evidence PMIDs.

        Returns a summary grouped by predicate and a knowledge-graph artifact of the neighbourhood.
        """
        answer = await knowledge.neighbors(
            curieOrName, predicate=predicate, category=category, limit=limit, normalize=normalize
        )
        result = answer.result
        head = f"# Neighbours of {_entity(result.entity)}\n\nSource: {result.source}."
        if not result.neighbors:
            text = f"{head}\n\nNo links match.{_notes(result.notes)}"
            return mcpkit.tool_result(text, structured=result)
        text = (
            f"{head} {counted(len(result.neighbors), 'link')}:\n\n"
            f"{_neighbor_summary(result)}{_notes(result.notes)}"
        )
        title = f"Knowledge graph: {result.entity.name}"
        artifacts = _graph_artifact(title, answer.graph, result.source)
        return mcpkit.tool_result(text, structured=result, artifacts=artifacts)

    @mcpkit.tool(server, name="findPaths", annotations=READ_REMOTE, view=view)
    async def find_paths(
        source: Annotated[str, Field(description="Start entity: a CURIE or a name.")],
        target: Annotated[str, Field(description="End entity: a CURIE or a name.")],
        maxHops: Annotated[
            int, Field(ge=1, le=MAX_HOPS, description=f"Longest path, in links (1 to {MAX_HOPS}).")
        ] = 2,
        normalize: Annotated[bool, Field(description=NORMALIZE_HELP)] = False,
    ) -> Annotated[CallToolResult, models.PathResult]:
        """Find the shortest connections between two entities (links followed either way).

        Returns each path as a chain of names and a knowledge-graph artifact of the paths.
        """
        answer = await knowledge.paths(source, target, maxHops, normalize=normalize)
        result = answer.result
        head = (
            f"# Paths from {_entity(result.start)} to {_entity(result.end)}\n\n"
            f"Source: {result.source}. At most {counted(result.maxHops, 'hop')}."
        )
        if not result.paths:
            text = f"{head}\n\nNo path found.{_notes(result.notes)}"
            return mcpkit.tool_result(text, structured=result)
        chains = "\n".join(
            f"{i}. {_path_text(path, answer.graph)}" for i, path in enumerate(result.paths, 1)
        )
        text = f"{head} {counted(len(result.paths), 'path')}:\n\n{chains}{_notes(result.notes)}"
        title = f"Paths: {result.start.name} to {result.end.name}"
        artifacts = _graph_artifact(title, answer.graph, result.source)
        return mcpkit.tool_result(text, structured=result, artifacts=artifacts)

    @mcpkit.tool(server, name="resolveName", annotations=READ_REMOTE)
    async def resolve_name(
        name: Annotated[str, Field(description="A gene, disease, drug or process name.")],
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many matches.")] = 10,
    ) -> Annotated[CallToolResult, models.Resolution]:
        """Find CURIEs for a name (exact names and synonyms first), to use in the other tools."""
        result = await knowledge.resolve_name(name, limit)
        if not result.matches:
            text = f"No entity matches '{name}' in {result.source}."
        else:
            rows = "\n".join(
                f"- {m.id} — {m.name}" + (f" ({m.category})" if m.category else "")
                for m in result.matches
            )
            text = f"Matches for '{name}' ({result.source}):\n\n{rows}"
        return mcpkit.tool_result(text, structured=result)

    return server
