"""The Python client: `Client(url, token)` over the REST API, or `Client.local(home=...)`."""

from graphwright.client.client import Client, KnowledgeBase
from graphwright.client.errors import (
    Conflict,
    Forbidden,
    GraphwrightError,
    InvalidRequest,
    NotFound,
    Unauthorized,
    VersionConflict,
)
from graphwright.client.graph import GraphModeGraph
from graphwright.client.objects import Artifact, Bibliography, Event, KnowledgeGraph, ToolCall, Turn

__all__ = [
    "Artifact",
    "Bibliography",
    "Client",
    "Conflict",
    "Event",
    "Forbidden",
    "GraphModeGraph",
    "GraphwrightError",
    "InvalidRequest",
    "KnowledgeBase",
    "KnowledgeGraph",
    "NotFound",
    "ToolCall",
    "Turn",
    "Unauthorized",
    "VersionConflict",
]
