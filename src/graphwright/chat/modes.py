"""Graph Mode routing (seed 004): which servers a conversation may use, how to switch to the
mode that offers a tool, and `databaseContext`.

In Graph Mode the model is offered the graph server's tools and nothing else; in a normal
conversation it gets every other server. The rule holds for slash commands too, because both go
through the same tool list. The orchestrator alone writes the argument that names the
conversation, `databaseContext` of a graph tool call (seed 004): whatever the model (or a slash
command) put there is discarded, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Container, Iterable, Mapping
from typing import Any

from graphwright.chat.models import Mode

logger = logging.getLogger(__name__)

GRAPH_SERVER = "graph"
DATABASE_CONTEXT = "databaseContext"
# The argument of each server that names the conversation. The orchestrator alone fills it in, so
# a model can never reach another conversation's graph.
OWNED_ARGUMENTS = {GRAPH_SERVER: DATABASE_CONTEXT}


def _switch(mode: str) -> str:
    return f'PATCH /api/conversations/<conversationId> with {{"mode": "{mode}"}}'


MODE_HINTS = {
    Mode.GRAPH: "'TOOL' is a graph tool, offered in Graph Mode only; switch this conversation to "
    "Graph Mode first: " + _switch("graph_mode"),
    Mode.NORMAL: "'TOOL' is not offered in Graph Mode, where only the graph tools are; switch "
    "back to the normal mode first: " + _switch("normal"),
}
MODE_HEADINGS = {
    Mode.GRAPH: f"In Graph Mode ({_switch('graph_mode')}):",
    Mode.NORMAL: f"In the normal mode ({_switch('normal')}):",
}


def servers_for(mode: Mode, servers: Iterable[str]) -> list[str]:
    if mode is Mode.GRAPH:
        return [name for name in servers if name == GRAPH_SERVER]
    return [name for name in servers if name != GRAPH_SERVER]


def other_mode(mode: Mode) -> Mode:
    return Mode.NORMAL if mode is Mode.GRAPH else Mode.GRAPH


def mode_hint(
    head: str, mode: Mode, offered: Container[str], servers: Collection[str]
) -> str | None:
    """For `head` (`server.tool`) not `offered` in `mode` but a tool of the other mode's
    `servers`: where it is offered and how to switch there."""
    server = head.split(".", 1)[0]
    if head in offered or server not in servers:
        return None
    other = other_mode(mode)
    if server not in servers_for(other, servers):
        return None
    return MODE_HINTS[other].replace("TOOL", head)


def model_facing_schema(server: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema the model sees: without the argument the orchestrator fills in."""
    owned = OWNED_ARGUMENTS.get(server)
    properties = schema.get("properties") or {}
    if owned is None or owned not in properties:
        return schema
    required = [name for name in schema.get("required") or [] if name != owned]
    trimmed = {name: value for name, value in properties.items() if name != owned}
    return {**schema, "properties": trimmed, "required": required}


def orchestrated(
    server: str, tool: str, arguments: dict[str, Any], owned_values: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments of a call, with the conversation argument set by the orchestrator.

    `owned_values` maps a server to the value of its owned argument in this turn. Whatever the
    model (or a slash command) put there is discarded, with a warning in the log.
    """
    owned = OWNED_ARGUMENTS.get(server)
    if owned is None or server not in owned_values:
        return arguments
    if owned in arguments:
        # The supplied value is not logged: it may hold a token.
        logger.warning(
            "Discarded a %s supplied in a call to %s.%s; the orchestrator sets it",
            owned,
            server,
            tool,
        )
    cleaned = {name: value for name, value in arguments.items() if name != owned}
    return {**cleaned, owned: owned_values[server]}


def redacted(arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments fit to show and store: the injected context without its token."""
    context = arguments.get(DATABASE_CONTEXT)
    if not isinstance(context, dict) or "accessToken" not in context:
        return arguments
    return {**arguments, DATABASE_CONTEXT: {**context, "accessToken": "[redacted]"}}
