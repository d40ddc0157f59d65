"""Turn one MCP tool result into artifact drafts, content for the model, and error notes.

Accepted shapes:
- legacy top-level fields of the seeds' servers: `bibliography`, `grantMarkdown`, `artifacts`
  (`{type, id?, title, content, metadata?}`, content a string or an object) and `binaryOutput`;
  `mcp_types.CallToolResult` drops unknown fields, so a legacy result must be passed as the plain
  dict of its JSON-RPC `result`;
- MCP-native: `EmbeddedResource` items with a `mimeType`, `resource_link` items, and
  `structuredContent` when the tool's `outputSchema` names its media type with the JSON Schema
  keyword `contentMediaType`. (The MCP SDKs give almost every tool an output schema, even one
  that returns a plain string, so a schema alone does not make a result an artifact.)

What no backend stores is shown as U+FFFD, not refused: a NUL or lone surrogate in the result,
and a NUL in JSON it holds (orjson refuses a lone surrogate's escape there, which makes a note).

A malformed artifact never breaks the call: it becomes an `ErrorNote` naming the tool call and the
reason, and everything else is still collected.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import orjson
from mcp_types import CallToolResult
from pydantic import ValidationError

from graphwright.core.artifacts import (
    BIBLIOGRAPHY,
    KNOWLEDGE_GRAPH,
    LANGUAGE_KEY,
    MARKDOWN,
    Artifact,
    Part,
    is_json_type,
    is_textual_type,
)
from graphwright.core.nul import storable

BIBLIOGRAPHY_TITLE = "Article References"
GRANT_TITLE = "NIH Grant Details"
KNOWLEDGE_GRAPH_TITLE = "Knowledge Graph"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Which call a draft or an error came from."""

    tool: str
    call_id: str


@dataclass(frozen=True, slots=True)
class Draft:
    artifact: Artifact
    origin: ToolCall


@dataclass(frozen=True, slots=True)
class ErrorNote:
    """An artifact that could not be used, and why; the turn reports it as an event."""

    origin: ToolCall
    what: str
    reason: str

    @property
    def message(self) -> str:
        return (
            f"Tool call {self.origin.call_id} ({self.origin.tool}): {self.what} was left out: "
            f"{self.reason}"
        )

    def to_json_dict(self) -> dict[str, str]:
        return {
            "tool": self.origin.tool,
            "callId": self.origin.call_id,
            "what": self.what,
            "reason": self.reason,
            "message": self.message,
        }


@dataclass(slots=True)
class Collected:
    model_content: list[dict[str, Any]] = field(default_factory=list)
    drafts: list[Draft] = field(default_factory=list)
    errors: list[ErrorNote] = field(default_factory=list)
    is_error: bool = False


class MalformedArtifact(ValueError):
    """Raised inside the collector for one artifact; turned into an ErrorNote."""


def collect(
    result: CallToolResult | Mapping[str, Any],
    *,
    tool: str,
    call_id: str,
    output_schema: Mapping[str, Any] | None = None,
) -> Collected:
    """Collect one tool result. Results marked `isError` yield model content and no drafts."""
    raw = storable(
        result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(result, CallToolResult)
        else dict(result)
    )
    collector = _Collector(ToolCall(tool, call_id))
    collector.collected.is_error = bool(raw.get("isError"))
    content = raw.get("content") or []
    if not isinstance(content, list):
        collector.note("the result's content", "`content` must be a list of content items")
        content = []
    for index, item in enumerate(content):
        collector.content_item(index, item)
    if not collector.collected.is_error:
        collector.legacy_fields(raw)
        schema = output_schema or {}
        media_type = schema.get("contentMediaType")
        if isinstance(media_type, str) and raw.get("structuredContent") is not None:
            collector.attempt(
                "the structured content",
                lambda: _structured(raw["structuredContent"], media_type, schema, tool),
            )
    return collector.collected


class _Collector:
    def __init__(self, origin: ToolCall) -> None:
        self.origin = origin
        self.collected = Collected()

    def note(self, what: str, reason: str) -> None:
        self.collected.errors.append(ErrorNote(self.origin, what, reason))

    def attempt(self, what: str, build: Callable[[], Artifact]) -> Artifact | None:
        try:
            artifact = build()
        except (MalformedArtifact, ValidationError) as exc:
            self.note(what, _reason(exc))
            return None
        self.collected.drafts.append(Draft(artifact, self.origin))
        return artifact

    def content_item(self, index: int, item: Any) -> None:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            self.note(f"content item {index}", "a content item must be an object with a `type`")
            return
        if item["type"] == "resource" and not self.collected.is_error:
            self.embedded_resource(index, item)
            return
        if item["type"] == "resource_link" and not self.collected.is_error:
            self.attempt(f"resource link {index}", lambda: _resource_link(item))
        self.collected.model_content.append(item)

    def embedded_resource(self, index: int, item: dict[str, Any]) -> None:
        resource = item.get("resource")
        if not isinstance(resource, dict) or not resource.get("mimeType"):
            self.collected.model_content.append(item)
            return
        artifact = self.attempt(f"embedded resource {index}", lambda: _embedded(resource))
        if artifact is not None:
            # The model gets a short pointer, not the payload (a whole graph would flood it).
            self.collected.model_content.append(
                {"type": "text", "text": artifact_pointer(artifact.name, resource["mimeType"])}
            )

    def legacy_fields(self, raw: Mapping[str, Any]) -> None:
        if raw.get("bibliography") is not None:
            self.attempt("the bibliography", lambda: _bibliography(raw["bibliography"]))
        if raw.get("grantMarkdown") is not None:
            self.attempt("the grant markdown", lambda: _grant_markdown(raw["grantMarkdown"]))
        if raw.get("binaryOutput") is not None:
            self.attempt("the binary output", lambda: _binary_output(raw["binaryOutput"]))
        artifacts = raw.get("artifacts")
        if artifacts is None:
            return
        if not isinstance(artifacts, list):
            self.note("the `artifacts` field", "it must be a list of artifacts")
            return
        for index, item in enumerate(artifacts):
            self.attempt(_legacy_label(index, item), lambda item=item: _legacy_artifact(item))


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "artifact"
        return f"{where}: {first['msg']}"
    return str(exc)


def _legacy_label(index: int, item: Any) -> str:
    if isinstance(item, dict):
        title = item.get("title") or item.get("type") or "untitled"
        return f"artifact {index} ('{title}')"
    return f"artifact {index}"


def _parse_json(content: Any, what: str) -> Any:
    if not isinstance(content, str | bytes):
        return content
    try:
        return storable(orjson.loads(content))
    except orjson.JSONDecodeError as exc:
        raise MalformedArtifact(f"{what} is not valid JSON ({exc})") from exc


def _graph(content: Any) -> Any:
    graph = _parse_json(content, "the knowledge-graph content")
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise MalformedArtifact("a knowledge graph must be an object with a `nodes` list")
    return graph


def _citations(content: Any) -> list[Any]:
    citations = _parse_json(content, "the bibliography")
    if not isinstance(citations, list) or not all(isinstance(c, dict) for c in citations):
        raise MalformedArtifact("a bibliography must be a list of citation objects")
    return citations


def _bibliography(content: Any) -> Artifact:
    return Artifact(
        name=BIBLIOGRAPHY_TITLE,
        parts=[Part(data=_citations(content), media_type=BIBLIOGRAPHY)],
    )


def _grant_markdown(value: Any) -> Artifact:
    if not isinstance(value, dict):
        raise MalformedArtifact("`grantMarkdown` must be an object with a `content` string")
    content = value.get("content")
    if not isinstance(content, str):
        raise MalformedArtifact("`grantMarkdown.content` must be a string of markdown")
    metadata = dict(value.get("metadata") or {})
    metadata[LANGUAGE_KEY] = "markdown"
    return Artifact(
        name=value.get("title") or GRANT_TITLE,
        parts=[Part(text=content, media_type=value.get("type") or MARKDOWN)],
        metadata=metadata,
    )


def _binary_output(value: Any) -> Artifact:
    if not isinstance(value, dict):
        raise MalformedArtifact("`binaryOutput` must be an object with `type` and base64 `data`")
    media_type = value.get("type") or value.get("mimeType")
    if not isinstance(media_type, str):
        raise MalformedArtifact("`binaryOutput` needs a MIME `type`")
    raw = _base64(value.get("data"), "`binaryOutput.data`")
    filename = value.get("filename") or value.get("name")
    return Artifact(
        name=value.get("title") or filename or f"Output ({media_type})",
        parts=[Part(raw=raw, media_type=media_type, filename=filename)],
        metadata=value.get("metadata") or None,
    )


def _base64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise MalformedArtifact(f"{what} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error as exc:
        raise MalformedArtifact(f"{what} is not valid base64 ({exc})") from exc


def _legacy_artifact(item: Any) -> Artifact:
    if not isinstance(item, dict):
        raise MalformedArtifact("an artifact must be an object with `type` and `content`")
    media_type = item.get("type")
    if not isinstance(media_type, str) or not media_type:
        raise MalformedArtifact("an artifact needs a MIME `type`")
    if "content" not in item or item["content"] is None:
        raise MalformedArtifact("an artifact needs `content`")
    metadata = dict(item.get("metadata") or {})
    if item.get("language"):
        metadata[LANGUAGE_KEY] = item["language"]
    return Artifact(
        name=item.get("title") or _default_title(media_type),
        parts=[_legacy_part(media_type, item["content"])],
        metadata=metadata or None,
    )


def _default_title(media_type: str) -> str:
    return {
        KNOWLEDGE_GRAPH: KNOWLEDGE_GRAPH_TITLE,
        BIBLIOGRAPHY: BIBLIOGRAPHY_TITLE,
    }.get(media_type, media_type)


def _legacy_part(media_type: str, content: Any) -> Part:
    if media_type == KNOWLEDGE_GRAPH:
        return Part(data=_graph(content), media_type=media_type)
    if media_type == BIBLIOGRAPHY:
        return Part(data=_citations(content), media_type=media_type)
    if is_json_type(media_type):
        return Part(data=_parse_json(content, "the JSON content"), media_type=media_type)
    if not isinstance(content, str):
        return Part(data=content, media_type=media_type)
    if is_textual_type(media_type):
        return Part(text=content, media_type=media_type)
    return Part(raw=_base64(content, "the binary content"), media_type=media_type)


def _embedded(resource: dict[str, Any]) -> Artifact:
    media_type = resource["mimeType"]
    uri = resource.get("uri")
    meta = resource.get("_meta") or {}
    declared = meta.get("metadata") if isinstance(meta, dict) else None
    metadata = {**({"source": uri} if uri else {}), **(declared or {})} or None
    if "text" in resource:
        part = _legacy_part(media_type, resource["text"])
    elif "blob" in resource:
        raw = _base64(resource["blob"], "the resource blob")
        part = Part(raw=raw, media_type=media_type, filename=_filename(uri))
    else:
        raise MalformedArtifact("an embedded resource needs `text` or `blob`")
    return Artifact(name=_resource_title(resource, media_type), parts=[part], metadata=metadata)


def _resource_title(resource: Mapping[str, Any], media_type: str) -> str:
    meta = resource.get("_meta") or {}
    if isinstance(meta, dict) and isinstance(meta.get("title"), str):
        return meta["title"]
    return (
        _default_title(media_type)
        if media_type in (KNOWLEDGE_GRAPH, BIBLIOGRAPHY)
        else (_filename(resource.get("uri")) or media_type)
    )


def _filename(uri: Any) -> str | None:
    if not isinstance(uri, str):
        return None
    name = urlparse(uri).path.rsplit("/", 1)[-1]
    return name or None


def _resource_link(item: dict[str, Any]) -> Artifact:
    uri = item.get("uri")
    if not isinstance(uri, str) or not uri:
        raise MalformedArtifact("a resource link needs a `uri`")
    return Artifact(
        name=item.get("title") or item.get("name") or uri,
        description=item.get("description"),
        parts=[Part(url=uri, media_type=item.get("mimeType"))],
        metadata={"source": uri},
    )


def _structured(value: Any, media_type: str, schema: Mapping[str, Any], tool: str) -> Artifact:
    part = _legacy_part(media_type, value)
    if media_type in (KNOWLEDGE_GRAPH, BIBLIOGRAPHY):
        return Artifact(name=_default_title(media_type), parts=[part])
    return Artifact(name=schema.get("title") or tool, parts=[part])


TOOL_RESULT_KEYS = frozenset({"content", "artifacts", "bibliography", "grantMarkdown",
                              "structuredContent", "binaryOutput"})  # fmt: skip


@dataclass(slots=True)
class Knowledge:
    """The knowledge graphs and citations one tool result holds, and what could not be used."""

    graphs: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ErrorNote] = field(default_factory=list)


def is_tool_result(document: Any) -> bool:
    """Whether a JSON document is an MCP tool result (of any shape `collect` takes)."""
    return (
        isinstance(document, Mapping)
        and bool(TOOL_RESULT_KEYS & document.keys())
        and ("nodes" not in document)
    )


def knowledge_in(result: Mapping[str, Any], *, name: str) -> Knowledge:
    """The graphs and citations in a tool result, by the same rules as a chat turn."""
    collected = collect(result, tool=name, call_id=name)
    found = Knowledge(errors=list(collected.errors))
    for draft in collected.drafts:
        for part in draft.artifact.parts:
            if part.media_type == KNOWLEDGE_GRAPH and isinstance(part.data, dict):
                found.graphs.append(part.data)
            elif part.media_type == BIBLIOGRAPHY and isinstance(part.data, list):
                found.citations.extend(part.data)
    return found


POINTER_END = " is shown to the user as an artifact.]"


def artifact_pointer(name: str, media_type: str) -> str:
    """The line that tells the model an artifact is on the person's screen."""
    return f"[{name} ({media_type}){POINTER_END}"


def without_pointers(text: str) -> str:
    """`text` less the lines written for the model only (`artifact_pointer`'s): the person sees
    the artifact itself."""
    lines = text.split("\n")
    kept = [line for line in lines if not (line.startswith("[") and line.endswith(POINTER_END))]
    return "\n".join(kept)
