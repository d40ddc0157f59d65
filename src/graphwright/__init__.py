"""graphwright: turn AI tool calls into knowledge people can use."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# `graphwright.Client` and friends load on first use: importing graphwright stays cheap.
_CLIENT_NAMES = {
    "Client",
    "KnowledgeGraph",
    "Bibliography",
    "GraphModeGraph",
    "Turn",
    "VersionConflict",
    "NotFound",
    "InvalidRequest",
    "Unauthorized",
    "Conflict",
}


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from graphwright import client

        return getattr(client, name)
    raise AttributeError(f"module 'graphwright' has no attribute {name!r}")
