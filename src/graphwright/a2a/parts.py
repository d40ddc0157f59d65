"""graphwright's artifacts and messages in a2a-sdk's protobuf types, both ways.

graphwright's artifact model (`core.artifacts`) already has A2A v1.0's JSON shape, so a protobuf
artifact is parsed from, and read back into, that JSON: the mediaTypes stay as they are
(`application/vnd.knowledge-graph` and `application/vnd.bibliography` on data parts,
`text/markdown` on text parts, any other type passed through).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Artifact as ProtoArtifact
from a2a.types import Message, Part, Role
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from google.protobuf.json_format import MessageToDict, ParseDict
from pydantic import ValidationError

from graphwright.chat.models import CONVERSATION_ID_PATTERN, ChatRequest, Mode
from graphwright.core.artifacts import KNOWLEDGE_GRAPH, Artifact, ChatArtifact, from_chat
from graphwright.core.graph import load_graph
from graphwright.errors import GraphwrightError, InvalidInput

VERSION_KEY = "version"
ANSWER_KEY = "answer"  # marks the artifact that streams the assistant's answer
MODE_KEY = "mode"
_CONVERSATION_ID = re.compile(CONVERSATION_ID_PATTERN)
TEXT_TYPES = ("", "text/plain", "text/markdown")


@dataclass(slots=True)
class MessageInput:
    """What an A2A message asks of a turn: the user's text, any knowledge graphs attached, and
    the conversation mode it asks for (`metadata.mode`)."""

    text: str
    graphs: list[dict[str, Any]] = field(default_factory=list)
    mode: Mode | None = None


def admit(message: Message, metadata: dict[str, Any]) -> MessageInput:
    """The turn an A2A message (with its request's `metadata`) asks for, or the A2A error that
    says why there is none: a role other than the user's, a part graphwright cannot take, text
    the chat would refuse, a contextId that cannot name a conversation, an unknown mode."""
    if message.role != Role.ROLE_USER:
        raise InvalidParamsError(
            message=f"message.role is {Role.Name(message.role)}; a message to graphwright is the "
            "user's (ROLE_USER)"
        )
    if message.context_id and not _CONVERSATION_ID.match(message.context_id):
        raise InvalidParamsError(
            message=f"contextId '{message.context_id}' cannot name a conversation: use letters, "
            "digits and . _ : - (at most 200, starting with a letter or digit)"
        )
    try:
        found = message_input(message)
    except InvalidInput as exc:
        raise ContentTypeNotSupportedError(message=str(exc)) from None
    if not found.text and not found.graphs:
        raise InvalidParamsError(message="The message has no text and no knowledge graph")
    found.mode = _mode({**metadata, **MessageToDict(message.metadata)}.get(MODE_KEY))
    if found.text:
        try:  # the chat's own limits on a message, checked before any task is made
            ChatRequest(message=found.text, mode=found.mode)
        except ValidationError as exc:
            said = "; ".join(error["msg"] for error in exc.errors())
            raise InvalidParamsError(message=f"The message's text: {said}") from None
    return found


def _mode(value: Any) -> Mode | None:
    if value is None:
        return None
    try:
        return Mode(value)
    except ValueError:
        choices = ", ".join(mode.value for mode in Mode)
        raise InvalidParamsError(
            message=f"metadata.mode '{value}' is not a mode; use one of: {choices}"
        ) from None


def to_proto(artifact: Artifact, *, version: int | None = None) -> ProtoArtifact:
    """The A2A artifact; `version` (the stored version) goes in its metadata."""
    body = artifact.to_json_dict()
    if version is not None:
        body["metadata"] = {**body.get("metadata", {}), VERSION_KEY: version}
    return ParseDict(body, ProtoArtifact())


def chat_to_proto(chat: dict[str, Any], *, version: int | None = None) -> ProtoArtifact:
    """A chat-view artifact (as the chat's `done` response lists them) as an A2A artifact."""
    return to_proto(from_chat(ChatArtifact.model_validate(chat)), version=version)


def from_proto(artifact: ProtoArtifact) -> Artifact:
    return Artifact.model_validate(MessageToDict(artifact))


def message_input(message: Message) -> MessageInput:
    """The text parts, joined by new lines, and the knowledge graphs of the data parts.

    Raises InvalidInput for a part graphwright cannot take (a file, a URL, other data)."""
    texts: list[str] = []
    graphs: list[dict[str, Any]] = []
    for position, part in enumerate(message.parts, start=1):
        kind = part.WhichOneof("content")
        if kind == "text" and part.media_type in TEXT_TYPES:
            texts.append(part.text)
        elif kind == "data" and _is_graph(part):
            graphs.append(_graph(part, position))
        else:
            what = f"a {kind} part" + (f" of type {part.media_type}" if part.media_type else "")
            raise InvalidInput(
                f"Part {position} is {what}; graphwright takes text parts and data parts holding "
                f"a knowledge graph ({KNOWLEDGE_GRAPH})"
            )
    return MessageInput("\n".join(texts).strip(), graphs)


def _is_graph(part: Part) -> bool:
    if part.media_type:
        return part.media_type == KNOWLEDGE_GRAPH
    data = MessageToDict(part.data)
    return isinstance(data, dict) and isinstance(data.get("nodes"), list)


def _graph(part: Part, position: int) -> dict[str, Any]:
    try:
        return load_graph(MessageToDict(part.data))
    except (GraphwrightError, ValueError) as exc:
        raise InvalidInput(f"Part {position} is not a valid knowledge graph: {exc}") from None
