"""What the chat page's `User`-simulation tests share: the tiny `flaky` test server as the only
MCP server (a page's tool list then starts one small process instead of seven), a conversation,
and an artifact stored in it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from graphwright.artifacts.service import ArtifactUpdateInput
from graphwright.chat.models import ConversationCreate
from graphwright.core.artifacts import Artifact, Part
from graphwright.mcp_registry import names as own_servers
from tests.web.conftest import Simulated

FLAKY = Path(__file__).parents[1] / "fixtures" / "chat" / "flaky_server.py"


def flaky_only() -> dict[str, Any]:
    """The MCP servers' configuration: graphwright's own disabled, `flaky` added."""
    return {
        **{name: {"disabled": True} for name in own_servers()},
        "flaky": {"command": sys.executable, "args": [str(FLAKY)], "timeout": 120},
    }


def conversation(simulated: Simulated, cid: str) -> None:
    simulated.app.state.chat_service.create_conversation(
        ConversationCreate(id=cid, title=f"Conversation {cid}"), actor="t"
    )


def store_artifact(
    simulated: Simulated, cid: str, artifact_id: str, name: str, media_type: str, text: str
) -> int:
    """Create the artifact, or store `text` as its next version; returns the version."""
    artifact = Artifact(
        artifact_id=artifact_id, name=name, parts=[Part(text=text, media_type=media_type)]
    )
    written = simulated.app.state.artifact_service.artifact_update(
        ArtifactUpdateInput(artifact=artifact), context_id=cid
    )
    return written.version
