"""Graph Mode routing (seed 004): which servers a conversation may use, and `databaseContext`.

In Graph Mode the model is offered the graph server's tools and nothing else; in a normal
conversation it gets every other server. The rule holds for slash commands too, because both go
through the same tool list. The orchestrator alone writes the argument that names the
conversation: `databaseContext` of a graph tool call (seed 004) and `contextId` of an artifacts
tool call. Whatever the model (or a slash command) put there is discarded, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from graphwright.chat.models import Mode

logger = logging.getLogger(__name__)

GRAPH_SERVER = "graph"
ARTIFACTS_SERVER = "artifacts"
DATABASE_CONTEXT = "databaseContext"
CONTEXT_ID = "contextId"
# The argument of each server that names the conversation. The orchestrator alone fills it in, so
# a model can never reach another conversation's graph or artifacts.
OWNED_ARGUMENTS = {GRAPH_SERVER: DATABASE_CONTEXT, ARTIFACTS_SERVER: CONTEXT_ID}


def servers_for(mode: Mode, servers: Iterable[str]) -> list[str]:
    if mode is Mode.GRAPH:
        return [name for name in servers if name == GRAPH_SERVER]
    return [name for name in servers if name != GRAPH_SERVER]


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
