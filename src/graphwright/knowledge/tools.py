"""The `knowledge` MCP server, thin over KnowledgeService: each capability once, under the DKG
node's own tool names (`dkg-get`, `dkg-create`, `dkg-sparql-query`), and seed 001's
`dkg_get_asset_metadata`, which the node has no tool for. The miner keeps seed 001's names
(`dkg_get_asset`, `dkg_sparql`) for its own agents' tools (miner/agent_tools.py).

Queries are read-only, limited in rows and time. `dkg-create` never publishes: it files a
publication request that a person approves in the web UI, the REST API or `graphwright kb approve`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcp_http, mcpkit
from graphwright.auth.service import AuthService
from graphwright.core.words import counted
from graphwright.db import Database
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.schemas import (
    AssetContent,
    AssetMetadata,
    PublicationRequestView,
    QueryAnswer,
)
from graphwright.knowledge.service import KnowledgeService
from graphwright.settings import Settings, get_settings

INSTRUCTIONS = (
    "Read and query the knowledge base of DKG knowledge assets (JSON-LD, addressed by UAL "
    "did:dkg:...). dkg-sparql-query runs read-only SPARQL; current assets are found with "
    "GRAPH <current:graph> { ?g dkg:hasNamedGraph ?ka } GRAPH ?ka { ?s ?p ?o }. "
    "dkg-create files a publication request: nothing is published until a person approves it."
)
MODEL_TEXT_LIMIT = 12_000

UalArg = Annotated[
    str,
    Field(
        min_length=10,
        max_length=300,
        description="A UAL: did:dkg:<chain>:<chainId>/<contract>/<collection>[/<asset>]",
    ),
]
QueryArg = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100_000,
        description="A SPARQL 1.1 SELECT, CONSTRUCT, ASK or DESCRIBE query (no updates, no "
        "SERVICE). Knowledge assets live in named graphs listed in <current:graph>; their "
        "publisher and time are in <metadata:graph>.",
    ),
]
LimitArg = Annotated[
    int | None,
    Field(ge=1, le=100_000, description="Rows at most; the server's own limit still applies."),
]

READ = mcpkit.hints(read_only=True)
FILE_REQUEST = mcpkit.hints(read_only=False, destructive=False, idempotent=False)


def _shorten(text: str) -> str:
    if len(text) <= MODEL_TEXT_LIMIT:
        return text
    return f"{text[:MODEL_TEXT_LIMIT]}\n… ({len(text) - MODEL_TEXT_LIMIT} more characters)"


def _answer_text(answer: QueryAnswer) -> str:
    cut = (
        f"\n(cut at {answer.row_limit} rows: add a LIMIT or a more selective pattern)"
        if answer.truncated
        else ""
    )
    if answer.form == "ask":
        return f"ASK: {str(answer.boolean).lower()}"
    if answer.form == "graph":
        count = len(answer.triples.splitlines()) if answer.triples else 0
        return _shorten(f"{counted(count, 'triple')}:\n{answer.triples or ''}") + cut
    head = f"{counted(len(answer.rows), 'row')}; variables: {', '.join(answer.variables)}"
    rows = "\n".join(
        " | ".join(row[var]["value"] if var in row else "" for var in answer.variables)
        for row in answer.rows
    )
    return _shorten(f"{head}\n{rows}") + cut


# No conversation can have this id (ids start with a letter or digit): a token scoped to it
# reaches the knowledge base's reads and no conversation's graph or artifacts.
READER_SCOPE = "#knowledge-reader"
# It needs no expiry: the subprocesses hold it as long as the server runs, and the server
# revokes it when it stops, or, after a crash, when a server next opens the same store (one
# process at a time holds an embedded store, so a token named for it is a leftover then).
READER_PURPOSE = (
    "the chat's knowledge and miner tools read this server's knowledge base with it; "
    "revoked when the server stops, or when the next one starts after a crash"
)


@dataclass
class KnowledgeReader:
    """How `graphwright mcp knowledge`, started by a running app's chat, reads that app's
    knowledge base. An embedded store is opened by one process only, so the subprocess reads
    through the app's SPARQL endpoint with a token of its own; it files publication requests
    in the shared database as any process does."""

    own_env: dict[str, dict[str, str]]
    revoke: Callable[[], None]

    @classmethod
    def for_app(
        cls, knowledge: KnowledgeService, auth: AuthService, api_base_url: str
    ) -> KnowledgeReader:
        if knowledge.backend.kind != "embedded":
            return cls({}, lambda: None)  # a server or node: the subprocess reaches it too
        label = f"chat: knowledge tools ({knowledge.backend.description})"[:200]
        auth.revoke_named(label, purpose=READER_PURPOSE)
        token = auth.mint(conversation_id=READER_SCOPE, label=label, purpose=READER_PURPOSE)
        env = {
            "GRAPHWRIGHT_SPARQL_URL": f"{api_base_url}/api/knowledge/sparql",
            "GRAPHWRIGHT_SPARQL_UPDATE_URL": "",
            "GRAPHWRIGHT_SPARQL_TOKEN": token,
        }
        # The miner's server reads the same way; its approvals publish in the app itself.
        return cls({"knowledge": env, "miner": env}, lambda: auth.revoke_token(token))


def knowledge_server(
    service: KnowledgeService | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """The knowledge MCP server; by default on the configured database and knowledge base."""
    settings = settings or get_settings()
    knowledge = service or KnowledgeService.from_settings(
        Database(settings.resolved_database_url), open_backend(settings), settings
    )
    server = mcpkit.new_server("knowledge", instructions=INSTRUCTIONS)

    @mcpkit.tool(server, name="dkg-get", annotations=READ)
    async def dkg_get(ual: UalArg) -> Annotated[CallToolResult, AssetContent]:
        """Get a knowledge asset (or a whole collection) by its UAL, as JSON-LD.

        Private triples are never returned. Use dkg_get_asset_metadata for who published it
        and when.
        """
        await knowledge.ensure_started(sample_data=settings.kb_sample_data)
        content = await knowledge.get_asset(ual)
        document = await knowledge.get_jsonld(ual)
        text = _shorten(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
        return mcpkit.tool_result(text, structured=content)

    @mcpkit.tool(server, name="dkg-sparql-query", annotations=READ)
    async def dkg_sparql_query(
        query: QueryArg, limit: LimitArg = None
    ) -> Annotated[CallToolResult, QueryAnswer]:
        """Run a read-only SPARQL query on the knowledge base.

        SELECT gives rows, ASK a boolean, CONSTRUCT and DESCRIBE triples. Answers are cut at a
        row limit and a time limit, and say so when cut.
        """
        await knowledge.ensure_started(sample_data=settings.kb_sample_data)
        answer = await knowledge.query(query, limit=limit)
        return mcpkit.tool_result(_answer_text(answer), structured=answer)

    @mcpkit.tool(server, name="dkg_get_asset_metadata", annotations=READ)
    async def dkg_get_asset_metadata(ual: UalArg) -> Annotated[CallToolResult, AssetMetadata]:
        """Get what the knowledge base records about an asset: publisher, publish time,
        transaction, block, owner, and how many later revisions point back at it.

        There is no stake per asset on the DKG (stake belongs to nodes).
        """
        await knowledge.ensure_started(sample_data=settings.kb_sample_data)
        metadata = await knowledge.metadata(ual)
        text = orjson.dumps(
            metadata.model_dump(mode="json", by_alias=True, exclude_none=True),
            option=orjson.OPT_INDENT_2,
        ).decode()
        return mcpkit.tool_result(text, structured=metadata)

    @mcpkit.tool(server, name="dkg-create", annotations=FILE_REQUEST)
    async def dkg_create(
        jsonld: Annotated[
            Any,
            Field(
                description="The knowledge to publish as JSON-LD: one object, a list, or "
                '{"public": ..., "private": ...}. Give each object an @context (e.g. '
                '"https://schema.org/"), an @id and an @type.'
            ),
        ],
        title: Annotated[str | None, Field(max_length=500, description="A short title")] = None,
        revisionOf: Annotated[
            str | None, Field(description="The UAL this corrects, if any")
        ] = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, PublicationRequestView]:
        """Ask to publish knowledge assets. This files a publication request; a person
        approves or rejects it, and nothing is published before that.

        The JSON-LD is checked now: an error names what does not expand.
        """
        principal = mcp_http.http_principal(ctx) if ctx else None
        request = await knowledge.file_request(
            jsonld,
            requested_by=principal.actor if principal else "mcp",
            title=title,
            revision_of=revisionOf,
            source="mcp tool dkg-create",
            conversation_id=principal.conversation_id if principal else settings.conversation,
        )
        text = (
            f"Publication request {request.id} ('{request.title}') is waiting for a person to "
            "approve it. Nothing is published until then."
        )
        return mcpkit.tool_result(text, structured=request)

    return server
