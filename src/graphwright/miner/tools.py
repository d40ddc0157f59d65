"""The `miner` MCP server: seed 001's `knowledge-miner` tool, thin over MinerService.

It returns seed 001's JSON (as text, and as structured content) with `runId` and
`pendingApproval`: publishing waits for a person, who decides in the web UI or through
`POST /api/miner/runs/{runId}/decisions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcp_http, mcpkit
from graphwright.miner.schemas import DEFAULT_ITERATIONS, MAX_ITERATIONS, MinerOutput, MinerRequest
from graphwright.settings import Settings, get_settings

if TYPE_CHECKING:
    from graphwright.miner.service import MinerService

INSTRUCTIONS = (
    "knowledge-miner turns a question into validated JSON-LD knowledge assets with three "
    "subagents (discovery, enrichment, validation) and long-term memory per domain tag. "
    "Publishing waits for a person's approval: the result lists what waits in pendingApproval, "
    "each a publication request (requestId) in the knowledge base's queue."
)
RUN = mcpkit.hints(read_only=False, destructive=False, idempotent=False, open_world=True)


def miner_server(
    service: MinerService | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """The miner MCP server; by default on the configured database and knowledge base."""
    configured = settings or get_settings()

    def miner() -> MinerService:
        nonlocal service
        if service is None:
            service = _default_service(configured)
        return service

    server = mcpkit.new_server("miner", instructions=INSTRUCTIONS)

    @mcpkit.tool(server, name="knowledge-miner", annotations=RUN)
    async def knowledge_miner(
        query: Annotated[
            str, Field(min_length=1, max_length=20_000, description="The knowledge mining task")
        ],
        domainTags: Annotated[
            list[str] | None,
            Field(
                max_length=10,
                description="Domain tags such as ['supply_chain', 'general_risk']: lower-case "
                "letters, digits and underscores. Runs with the same tags share memory.",
            ),
        ] = None,
        maxIterations: Annotated[
            int | None,
            Field(
                ge=1,
                le=MAX_ITERATIONS,
                description="Rounds of the mining loop (discovery, enrichment, validation), "
                f"default {DEFAULT_ITERATIONS}",
            ),
        ] = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, MinerOutput]:
        """Multi-agent knowledge miner with long-term memory per domain tag.

        Discovery, enrichment and validation subagents mine the knowledge base, PubMed, the
        biomedical knowledge graph and the web, and propose JSON-LD knowledge assets linked by
        UAL to existing ones, each with a confidence and its breakdown. Publishing waits for a
        person: `pendingApproval` lists what waits.
        """
        principal = mcp_http.http_principal(ctx) if ctx else None
        request = MinerRequest(
            query=query,
            domain_tags=domainTags or [],
            max_iterations=maxIterations or DEFAULT_ITERATIONS,
        )
        output = await miner().run_as(request, principal)
        return mcpkit.tool_result(output.model_dump_json(by_alias=True), structured=output)

    return server


def _default_service(settings: Settings) -> MinerService:
    """The service on the configured database and knowledge base, built at the first run: the
    agent's libraries (deepagents, LangChain) take seconds to import, and the chat starts this
    server with every other one, so its start must not wait for them."""
    from graphwright.db import Database
    from graphwright.knowledge.backends import open_backend
    from graphwright.knowledge.service import KnowledgeService
    from graphwright.miner.service import MinerService

    db = Database(settings.resolved_database_url)
    knowledge = KnowledgeService.from_settings(db, open_backend(settings), settings)
    return MinerService.from_settings(db, settings, knowledge)
