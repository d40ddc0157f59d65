"""The `artifacts` MCP server: the LLM's A2A artifact tools, thin over `ArtifactService`.

Which conversation (A2A context) a call acts on comes from its `contextId` argument, else (over
HTTP) from the conversation the caller's token is scoped to, else from the server's
`GRAPHWRIGHT_CONVERSATION`; a scoped token reaches no other conversation. Storage is the embedded
SQL store on the configured database, or the service passed in (the app's own, in `serve`).
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcp_http, mcpkit
from graphwright.artifacts.models import ArtifactSummary, StoredArtifact
from graphwright.artifacts.service import (
    ArtifactService,
    ArtifactUpdateInput,
    DeleteArtifactInput,
    DeletedArtifact,
    GetArtifactInput,
    ListArtifactsInput,
)
from graphwright.artifacts.store import ArtifactWrite, SqlArtifactStore
from graphwright.core.artifacts import A2AModel, Artifact, Part
from graphwright.core.words import counted
from graphwright.db import Database
from graphwright.settings import Settings, get_settings

MODEL_TEXT_LIMIT = 12_000  # characters of an artifact's content shown to the model
MAX_VERSION = 2**31 - 1  # versions are 32-bit integer columns

INSTRUCTIONS = (
    "Keep documents, data and files for the person (and other agents) as A2A artifacts of this "
    "conversation. Write with artifact_update: replace parts, or append text in pieces and close "
    "the artifact with lastChunk. Read with list_artifacts and get_artifact."
)

ContextId = Annotated[
    str | None,
    Field(
        min_length=1,
        description="The conversation (A2A contextId) the artifacts belong to. Leave it out to "
        "use this session's own conversation.",
    ),
]


class ArtifactList(A2AModel):
    context_id: str
    artifacts: list[ArtifactSummary]


def _describe_part(part: Part) -> str:
    media = f" ({part.media_type})" if part.media_type else ""
    match part.kind:
        case "text":
            return part.text or ""
        case "data":
            return f"Data{media}:\n{orjson.dumps(part.data).decode()}"
        case "url":
            return f"Link{media}: {part.url}"
        case _:
            name = f" '{part.filename}'" if part.filename else ""
            return f"File{name}{media}, {len(part.raw or b'')} bytes"


def _shorten(text: str) -> str:
    if len(text) <= MODEL_TEXT_LIMIT:
        return text
    return (
        f"{text[:MODEL_TEXT_LIMIT]}\n\n… ({len(text) - MODEL_TEXT_LIMIT} more characters; "
        "structuredContent holds the whole artifact)"
    )


def _stored_text(stored: StoredArtifact) -> str:
    artifact = stored.artifact
    title = f"'{artifact.name}' " if artifact.name else ""
    state = "closed" if stored.closed else "open"
    head = (
        f"Artifact {title}(artifactId '{artifact.artifact_id}'), version {stored.version}, {state}."
    )
    if artifact.description:
        head += f"\n{artifact.description}"
    body = "\n\n".join(_describe_part(part) for part in artifact.parts)
    return f"{head}\n\n{_shorten(body)}"


def _write_text(write: ArtifactWrite) -> str:
    done = {"create": "Created", "replace": "Replaced parts of", "append": "Appended to"}
    text = f"{done[write.operation]} artifact '{write.artifact_id}' (version {write.version})."
    if write.closed:
        text += " It is closed: further appends will be refused."
    return text


def _summary_line(summary: ArtifactSummary) -> str:
    name = f" — {summary.name}" if summary.name else ""
    media = f" ({summary.media_type})" if summary.media_type else ""
    task = f", task {summary.task_id}" if summary.task_id else ""
    state = ", closed" if summary.closed else ""
    return f"- {summary.artifact_id}{name}{media}: version {summary.version}{state}{task}"


def artifacts_server(
    service: ArtifactService | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """The artifacts MCP server; by default on the configured database and conversation."""
    settings = settings or get_settings()
    artifacts = service or ArtifactService(
        SqlArtifactStore(Database(settings.resolved_database_url))
    )
    server = mcpkit.new_server("artifacts", instructions=INSTRUCTIONS)

    def conversation(context_id: str | None, ctx: Context) -> str:
        principal = mcp_http.http_principal(ctx)
        return artifacts.context_for(context_id, principal=principal, default=settings.conversation)

    @mcpkit.tool(server, name="artifact_update", annotations=mcpkit.hints(read_only=False))
    def artifact_update(
        artifact: Annotated[
            Artifact,
            Field(
                description="The artifact: artifactId (reuse it to update; leave it out to create "
                "a new one), optional name and description, and parts. Each part holds exactly "
                "one of text, data (JSON), url or raw (base64 bytes), with optional mediaType "
                "(e.g. text/markdown) and filename."
            ),
        ],
        append: Annotated[
            bool,
            Field(
                description="false: each kind of part sent replaces all parts of that kind. "
                "true: text is added to the end of the existing text; data, url and raw parts "
                "are added beside the existing ones."
            ),
        ] = False,
        lastChunk: Annotated[
            bool,
            Field(description="true closes the artifact: later appends are refused."),
        ] = False,
        taskId: Annotated[
            str | None,
            Field(min_length=1, description="The A2A task (e.g. the chat turn) that made it."),
        ] = None,
        contextId: ContextId = None,
        *,
        ctx: Context,
    ) -> Annotated[CallToolResult, ArtifactWrite]:
        """Create or update an artifact that the person and other agents can use: a document,
        a table of data, a file or a link. An unknown artifactId creates the artifact.

        Replace (append=false, the default): every kind of part you send (text, data, url, raw)
        replaces all the artifact's parts of that kind; consecutive text parts are joined; kinds
        you do not send stay as they are.
        Append (append=true): text is joined onto the end of the existing text, so a long
        document can be written in pieces; data, url and raw parts are added as separate parts.
        lastChunk=true marks the final piece and closes the artifact: a later append is refused
        (a replace still works). Returns the new version number and whether it is closed.
        """
        request = ArtifactUpdateInput(artifact=artifact, append=append, last_chunk=lastChunk)
        write = artifacts.artifact_update(
            request, context_id=conversation(contextId, ctx), task_id=taskId
        )
        return mcpkit.tool_result(_write_text(write), structured=write.to_json_dict())

    @mcpkit.tool(server, name="get_artifact", annotations=mcpkit.hints(read_only=True))
    def get_artifact(
        artifactId: Annotated[str, Field(min_length=1, description="The artifact's id.")],
        version: Annotated[
            int | None,
            Field(
                ge=1,
                le=MAX_VERSION,
                description="An earlier version to read (1 is the first write).",
            ),
        ] = None,
        contextId: ContextId = None,
        *,
        ctx: Context,
    ) -> Annotated[CallToolResult, StoredArtifact]:
        """Read one artifact of the conversation: its name, parts and state (version, closed).

        By default the latest version; every update made a new version, and each one can be
        read back. Long content is shortened in the text; structuredContent has all of it.
        """
        request = GetArtifactInput(artifact_id=artifactId, version=version)
        stored = artifacts.get_artifact(request, context_id=conversation(contextId, ctx))
        return mcpkit.tool_result(_stored_text(stored), structured=stored.to_json_dict())

    @mcpkit.tool(server, name="list_artifacts", annotations=mcpkit.hints(read_only=True))
    def list_artifacts(
        taskId: Annotated[
            str | None, Field(min_length=1, description="Only the artifacts of this A2A task.")
        ] = None,
        contextId: ContextId = None,
        *,
        ctx: Context,
    ) -> Annotated[CallToolResult, ArtifactList]:
        """List the conversation's artifacts, oldest first: id, name, media type, version and
        whether each is closed, without their content (read one with get_artifact)."""
        context_id = conversation(contextId, ctx)
        listed = artifacts.list_artifacts(ListArtifactsInput(task_id=taskId), context_id=context_id)
        if listed:
            lines = "\n".join(_summary_line(summary) for summary in listed)
            text = f"{counted(len(listed), 'artifact')} in conversation '{context_id}':\n{lines}"
        else:
            text = f"No artifacts in conversation '{context_id}'."
        result = ArtifactList(context_id=context_id, artifacts=listed)
        return mcpkit.tool_result(text, structured=result.to_json_dict())

    @mcpkit.tool(
        server,
        name="delete_artifact",
        annotations=mcpkit.hints(read_only=False, destructive=True, idempotent=False),
    )
    def delete_artifact(
        artifactId: Annotated[str, Field(min_length=1, description="The artifact's id.")],
        contextId: ContextId = None,
        *,
        ctx: Context,
    ) -> Annotated[CallToolResult, DeletedArtifact]:
        """Delete an artifact of the conversation with all its versions. This cannot be undone;
        the person loses it too, so delete only what they asked to remove or what you made in
        error."""
        request = DeleteArtifactInput(artifact_id=artifactId)
        deleted = artifacts.delete_artifact(request, context_id=conversation(contextId, ctx))
        text = f"Deleted artifact '{artifactId}' and its versions."
        return mcpkit.tool_result(text, structured=deleted.to_json_dict())

    return server
