"""The artifact model: an A2A v1.0 view, a chat view, and the part update semantics.

The A2A view (`Artifact`, `Part`) is what is stored and what other agents consume; its JSON uses the
A2A v1.0 field names (artifactId, parts, mediaType...). The chat view (`ChatArtifact`) is what the
chat UI renders, the `{id, artifactId, type, title, content, position}` shape of seed 003.

Updates are expressed as chunks (`Chunk`): a part plus whether its text joins the text before it.
An artifact's parts are the fold of its live chunks (`assemble`), so a store can append in
O(chunk) by adding one row and still give the same result as the pure `apply_update`.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from graphwright.errors import InvalidInput

KNOWLEDGE_GRAPH = "application/vnd.knowledge-graph"
BIBLIOGRAPHY = "application/vnd.bibliography"
MARKDOWN = "text/markdown"
URI_LIST = "text/uri-list"

PartKind = Literal["text", "raw", "url", "data"]
PART_KINDS: tuple[PartKind, ...] = ("text", "raw", "url", "data")

# Chat-view metadata keys that carry A2A fields the chat view has no slot for.
VERSION_ID_KEY = "versionId"
DESCRIPTION_KEY = "description"
FILENAME_KEY = "filename"
EXTENSIONS_KEY = "extensions"
LINKED_MEDIA_TYPE_KEY = "linkedMediaType"
PART_METADATA_KEY = "partMetadata"
LANGUAGE_KEY = "language"


class A2AModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )

    def to_json_dict(self) -> dict[str, Any]:
        """The A2A JSON form: camelCase names, bytes as base64, unset fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Part(A2AModel):
    """One A2A v1.0 part: exactly one of text, raw, url or data, with optional metadata."""

    text: str | None = None
    raw: bytes | None = None
    url: str | None = None
    data: Any = None
    metadata: dict[str, Any] | None = None
    filename: str | None = None
    media_type: str | None = None

    @model_validator(mode="after")
    def _exactly_one_content(self) -> Part:
        present = [name for name in PART_KINDS if getattr(self, name) is not None]
        if len(present) != 1:
            found = ", ".join(present) or "none"
            raise ValueError(
                f"a part holds exactly one of text, raw, url or data (a non-null JSON value); "
                f"found: {found}"
            )
        return self

    @property
    def kind(self) -> PartKind:
        return next(name for name in PART_KINDS if getattr(self, name) is not None)


class Artifact(A2AModel):
    """An A2A v1.0 artifact. `parts` holds at least one part."""

    artifact_id: str = Field(default_factory=lambda: str(uuid.uuid4()), min_length=1)
    name: str | None = None
    description: str | None = None
    parts: list[Part] = Field(min_length=1)
    metadata: dict[str, Any] | None = None
    extensions: list[str] | None = None

    @property
    def media_type(self) -> str | None:
        return next((p.media_type for p in self.parts if p.media_type), None)


class ChatArtifact(A2AModel):
    """The chat view of seed 003: `type` is the MIME type and `content` is always a string."""

    id: str
    artifact_id: str
    type: str
    title: str
    content: str
    position: int = 0
    language: str | None = None
    metadata: dict[str, Any] | None = None


def is_json_type(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base in (KNOWLEDGE_GRAPH, BIBLIOGRAPHY, "application/json") or base.endswith("+json")


def is_textual_type(media_type: str) -> bool:
    """Types whose content is text a person can read, so the chat view carries them verbatim."""
    base = media_type.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/")
        or is_json_type(base)
        or base.endswith("+xml")
        or base
        in (
            "application/xml",
            "application/javascript",
            "application/x-python",
            "application/sql",
            "application/x-yaml",
            "application/yaml",
            "image/svg+xml",
        )
    )


def dumps_json(value: Any) -> str:
    """Compact JSON, the form the seeds' servers produce with JSON.stringify."""
    return orjson.dumps(value).decode()


# --- chat view <-> A2A view ---------------------------------------------------------------------


def to_chat(artifact: Artifact, position: int = 0) -> ChatArtifact:
    """The chat view of a one-part artifact. Raw bytes become base64 content; a url part becomes
    `text/uri-list` content."""
    if len(artifact.parts) != 1:
        raise InvalidInput(
            f"Artifact '{artifact.artifact_id}' has {len(artifact.parts)} parts; the chat view "
            "holds exactly one. Read it through the A2A view instead."
        )
    part = artifact.parts[0]
    metadata = dict(artifact.metadata or {})
    version_id = metadata.pop(VERSION_ID_KEY, artifact.artifact_id)
    language = metadata.pop(LANGUAGE_KEY, None)
    if artifact.description is not None:
        metadata[DESCRIPTION_KEY] = artifact.description
    if artifact.extensions is not None:
        metadata[EXTENSIONS_KEY] = artifact.extensions
    if part.metadata:
        metadata[PART_METADATA_KEY] = part.metadata
    media_type, content = _chat_content(part, metadata)
    return ChatArtifact(
        id=str(version_id),
        artifact_id=artifact.artifact_id,
        type=media_type,
        title=artifact.name or "",
        content=content,
        position=position,
        language=language,
        metadata=metadata or None,
    )


def _chat_content(part: Part, metadata: dict[str, Any]) -> tuple[str, str]:
    match part.kind:
        case "text":
            return part.media_type or "text/plain", part.text or ""
        case "data":
            return part.media_type or "application/json", dumps_json(part.data)
        case "raw":
            if part.filename is not None:
                metadata[FILENAME_KEY] = part.filename
            raw = part.raw or b""
            return part.media_type or "application/octet-stream", base64.b64encode(raw).decode()
        case _:
            if part.media_type is not None:
                metadata[LINKED_MEDIA_TYPE_KEY] = part.media_type
            return URI_LIST, part.url or ""


def from_chat(chat: ChatArtifact) -> Artifact:
    """The A2A view of a chat artifact; `to_chat(from_chat(c), c.position) == c` for our types."""
    metadata = dict(chat.metadata or {})
    description = metadata.pop(DESCRIPTION_KEY, None)
    extensions = metadata.pop(EXTENSIONS_KEY, None)
    part = _part_from_chat(chat, metadata)
    if chat.id != chat.artifact_id:
        metadata[VERSION_ID_KEY] = chat.id
    if chat.language is not None:
        metadata[LANGUAGE_KEY] = chat.language
    return Artifact(
        artifact_id=chat.artifact_id,
        name=chat.title,
        description=description,
        parts=[part],
        metadata=metadata or None,
        extensions=extensions,
    )


def _part_from_chat(chat: ChatArtifact, metadata: dict[str, Any]) -> Part:
    part_metadata = metadata.pop(PART_METADATA_KEY, None)
    if chat.type == URI_LIST and _is_single_url(chat.content):
        linked = metadata.pop(LINKED_MEDIA_TYPE_KEY, None)
        return Part(url=chat.content, media_type=linked, metadata=part_metadata)
    if is_json_type(chat.type):
        try:
            data = orjson.loads(chat.content)
        except orjson.JSONDecodeError:
            data = None
        if data is not None and dumps_json(data) == chat.content:
            return Part(data=data, media_type=chat.type, metadata=part_metadata)
    if is_textual_type(chat.type) or chat.language is not None:
        return Part(text=chat.content, media_type=chat.type, metadata=part_metadata)
    try:
        raw = base64.b64decode(chat.content, validate=True)
    except binascii.Error as exc:
        raise InvalidInput(
            f"Chat artifact '{chat.id}' of type {chat.type} must carry base64 content: {exc}"
        ) from exc
    filename = metadata.pop(FILENAME_KEY, None)
    return Part(raw=raw, media_type=chat.type, filename=filename, metadata=part_metadata)


def _is_single_url(content: str) -> bool:
    return "://" in content and not any(ch.isspace() for ch in content)


# --- part update semantics ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chunk:
    """One stored piece of an artifact. A joining text chunk extends the last text part."""

    part: Part
    joins: bool = False


@dataclass(frozen=True, slots=True)
class UpdatePlan:
    """What an update does: drop every live chunk of `drop_kinds`, then add `chunks` in order."""

    drop_kinds: frozenset[PartKind]
    chunks: tuple[Chunk, ...]


def concatenate_text_runs(parts: Sequence[Part]) -> list[Part]:
    """Consecutive text parts become one (the first one's mediaType and metadata are kept)."""
    result: list[Part] = []
    for part in parts:
        previous = result[-1] if result else None
        if previous is not None and previous.kind == "text" and part.kind == "text":
            result[-1] = previous.model_copy(update={"text": (previous.text or "") + part.text})
        else:
            result.append(part)
    return result


def plan_update(parts: Sequence[Part], *, append: bool) -> UpdatePlan:
    """Replace: every kind present in `parts` replaces all parts of that kind; other kinds stay.
    Append: text joins the existing text; data, raw and url parts are added as separate parts."""
    if not parts:
        raise InvalidInput("An artifact update needs at least one part")
    merged = concatenate_text_runs(parts)
    if append:
        return UpdatePlan(frozenset(), tuple(Chunk(p, joins=p.kind == "text") for p in merged))
    return UpdatePlan(frozenset(p.kind for p in merged), tuple(Chunk(p) for p in merged))


def assemble(chunks: Iterable[Chunk]) -> list[Part]:
    """The parts an ordered run of live chunks stands for."""
    parts: list[Part] = []
    texts: dict[int, list[str]] = {}
    last_text: int | None = None
    for chunk in chunks:
        if chunk.part.kind == "text":
            if chunk.joins and last_text is not None:
                texts[last_text].append(chunk.part.text or "")
                continue
            last_text = len(parts)
            texts[last_text] = [chunk.part.text or ""]
        parts.append(chunk.part)
    for index, pieces in texts.items():
        if len(pieces) > 1:
            parts[index] = parts[index].model_copy(update={"text": "".join(pieces)})
    return parts


def apply_update(existing: Sequence[Part], parts: Sequence[Part], *, append: bool) -> list[Part]:
    """The parts after one update, as a store must compute them."""
    plan = plan_update(parts, append=append)
    kept = [Chunk(p) for p in existing if p.kind not in plan.drop_kinds]
    return assemble([*kept, *plan.chunks])
