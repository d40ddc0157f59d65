"""Graph Mode routing (seed 004): which servers a conversation may use, and `databaseContext`.

In Graph Mode the model is offered the graph server's tools and nothing else; in a normal
conversation it gets every other server. The rule holds for slash commands too, because both go
through the same tool list. The orchestrator alone writes `databaseContext` into a graph tool call:
whatever the model (or a slash command) put there is discarded, with a warning in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from graphwright.chat.models import Mode

logger = logging.getLogger(__name__)

GRAPH_SERVER = "graph"
DATABASE_CONTEXT = "databaseContext"


def servers_for(mode: Mode, servers: Iterable[str]) -> list[str]:
    if mode is Mode.GRAPH:
        return [name for name in servers if name == GRAPH_SERVER]
    return [name for name in servers if name != GRAPH_SERVER]


def model_facing_schema(server: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema the model sees: never a `databaseContext` it could fill in itself."""
    properties = schema.get("properties") or {}
    if server != GRAPH_SERVER or DATABASE_CONTEXT not in properties:
        return schema
    required = [name for name in schema.get("required") or [] if name != DATABASE_CONTEXT]
    trimmed = {name: value for name, value in properties.items() if name != DATABASE_CONTEXT}
    return {**schema, "properties": trimmed, "required": required}


def with_database_context(
    server: str, tool: str, arguments: dict[str, Any], context: dict[str, Any]
) -> dict[str, Any]:
    """The arguments of a graph tool call, with the orchestrator's `databaseContext`."""
    if server != GRAPH_SERVER:
        return arguments
    if DATABASE_CONTEXT in arguments:
        # The supplied value is not logged: it may hold a token.
        logger.warning(
            "Discarded a databaseContext supplied in a call to %s.%s; the orchestrator sets it",
            server,
            tool,
        )
    cleaned = {name: value for name, value in arguments.items() if name != DATABASE_CONTEXT}
    return {**cleaned, DATABASE_CONTEXT: context}


def redacted(arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments fit to show and store: the injected context without its token."""
    context = arguments.get(DATABASE_CONTEXT)
    if not isinstance(context, dict) or "accessToken" not in context:
        return arguments
    return {**arguments, DATABASE_CONTEXT: {**context, "accessToken": "[redacted]"}}
