"""Artifact rules for the adapters: the LLM's artifact tools, event subscription, and turns.

The tool functions take pydantic input models whose JSON schema can serve as the MCP input schema
as it is (A2A field names: artifactId, lastChunk...). The conversation (A2A context) is passed
separately, because the adapter, not the model, knows which conversation a call belongs to.

Who may touch which conversation: `context_for` picks the conversation of a call and refuses one
that the caller's token is not scoped to.

A turn's artifacts are persisted with `save_turn`, all in one transaction. With carry-over on,
`start_turn` seeds the next turn with the latest stored knowledge graph and bibliography of the
conversation, and `save_turn` writes the new turn's graph and bibliography as new versions of the
same artifacts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

from pydantic import Field

from graphwright.artifacts import diff
from graphwright.artifacts.events import ArtifactEvent
from graphwright.artifacts.models import ArtifactSummary, ArtifactVersion, StoredArtifact
from graphwright.artifacts.store import ArtifactStore, ArtifactWrite
from graphwright.artifacts.turn import CARRIED_TYPES, TurnArtifacts
from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.core.artifacts import A2AModel, Artifact, ChatArtifact, from_chat, to_chat
from graphwright.errors import InvalidInput, NotFound

NO_CONVERSATION = (
    "No conversation selected: pass contextId (the A2A context id of the conversation), or "
    "start the server with GRAPHWRIGHT_CONVERSATION set"
)


class ArtifactUpdateInput(A2AModel):
    """Create or update an artifact. With append=false, each kind of part sent (text, raw, url,
    data) replaces all parts of that kind; with append=true, text is concatenated onto the
    existing text and other parts are added. lastChunk=true closes the artifact to appends."""

    artifact: Artifact
    append: bool = False
    last_chunk: bool = False


class GetArtifactInput(A2AModel):
    """Read one artifact, by default its latest version."""

    artifact_id: str = Field(min_length=1)
    version: int | None = Field(default=None, ge=1)


class ListArtifactsInput(A2AModel):
    """List the conversation's artifacts (no content), optionally only those of one task."""

    task_id: str | None = None


class DeleteArtifactInput(A2AModel):
    """Delete an artifact and its versions."""

    artifact_id: str = Field(min_length=1)


class DeletedArtifact(A2AModel):
    artifact_id: str
    deleted: bool = True


class ArtifactService:
    def __init__(self, store: ArtifactStore) -> None:
        self.store = store

    @staticmethod
    def context_for(
        requested: str | None, *, principal: Principal | None, default: str | None = None
    ) -> str:
        """The conversation a call acts on: the one requested, else the one the caller's token
        is scoped to, else `default`. A scoped token may act on its own conversation only;
        `principal` None is a trusted local caller (stdio)."""
        scoped = principal.conversation_id if principal else None
        chosen = requested or scoped or default
        if not chosen:
            raise InvalidInput(NO_CONVERSATION)
        if principal is not None:
            AuthService.authorize(principal, chosen)
        return chosen

    def artifact_update(
        self, request: ArtifactUpdateInput, *, context_id: str, task_id: str | None = None
    ) -> ArtifactWrite:
        """Creates the artifact in this conversation if it does not exist yet."""
        return self.store.update(
            request.artifact,
            append=request.append,
            last_chunk=request.last_chunk,
            context_id=context_id,
            task_id=task_id,
        )

    def get_artifact(self, request: GetArtifactInput, *, context_id: str) -> StoredArtifact:
        return self.store.get(request.artifact_id, version=request.version, context_id=context_id)

    def list_artifacts(
        self, request: ListArtifactsInput, *, context_id: str
    ) -> list[ArtifactSummary]:
        return self.store.list(context_id=context_id, task_id=request.task_id)

    def delete_artifact(self, request: DeleteArtifactInput, *, context_id: str) -> DeletedArtifact:
        self.store.delete(request.artifact_id, context_id=context_id)
        return DeletedArtifact(artifact_id=request.artifact_id)

    def versions(self, artifact_id: str, *, context_id: str) -> list[ArtifactVersion]:
        return self.store.versions(artifact_id, context_id=context_id)

    def compare(
        self, artifact_id: str, from_version: int, to_version: int, *, context_id: str
    ) -> dict[str, Any]:
        """What changed from one version of a one-part artifact to another (artifacts.diff)."""
        before, after = (
            to_chat(
                self.get_artifact(
                    GetArtifactInput(artifact_id=artifact_id, version=v), context_id=context_id
                ).artifact
            )
            for v in (from_version, to_version)
        )
        return {"fromVersion": from_version, "toVersion": to_version, **diff.compare(before, after)}

    def subscribe(
        self,
        context_id: str,
        *,
        after_sequence: int = 0,
        artifact_id: str | None = None,
        from_version: int | None = None,
    ) -> AsyncIterator[ArtifactEvent]:
        """The context's events after `after_sequence`, or from `from_version` of `artifact_id`
        on (that version's event included), then live ones."""
        if from_version is not None:
            if artifact_id is None:
                raise NotFound("Replaying from a version needs the artifact's id")
            after_sequence = self._sequence_before(artifact_id, from_version, context_id)
        return self.store.subscribe(context_id, after_sequence=after_sequence)

    def _sequence_before(self, artifact_id: str, version: int, context_id: str) -> int:
        for record in self.versions(artifact_id, context_id=context_id):
            if record.version == version:
                return record.sequence - 1
        raise NotFound(f"Artifact '{artifact_id}' has no version {version}")

    def start_turn(self, context_id: str, *, carry_over: bool) -> TurnArtifacts:
        """A fresh turn; with carry-over, seeded with the conversation's latest knowledge graph
        and bibliography."""
        if not carry_over:
            return TurnArtifacts()
        previous = [to_chat(stored.artifact) for stored in self.latest(context_id, CARRIED_TYPES)]
        return TurnArtifacts(previous=previous)

    def latest(self, context_id: str, media_types: Collection[str]) -> list[StoredArtifact]:
        """The conversation's most recently updated artifact of each of `media_types` it has."""
        latest: dict[str, ArtifactSummary] = {}
        for summary in self.store.list(context_id=context_id):
            if summary.media_type in media_types:
                known = latest.get(summary.media_type)
                if known is None or summary.updated_at >= known.updated_at:
                    latest[summary.media_type] = summary
        return [
            self.store.get(summary.artifact_id, context_id=context_id)
            for summary in latest.values()
        ]

    def save_turn(
        self,
        context_id: str,
        artifacts: Sequence[ChatArtifact],
        *,
        task_id: str | None = None,
    ) -> list[ArtifactWrite]:
        """Store a turn's chat artifacts in one transaction, all or none; a carried artifact
        becomes its next stored version."""
        drafts = [from_chat(chat) for chat in artifacts]
        return self.store.update_many(drafts, append=False, context_id=context_id, task_id=task_id)
