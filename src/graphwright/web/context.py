"""What the pages share: the app's services, signed-in sessions and the live graphs on screen.

Pages are adapters: they read the services the REST API uses from the FastAPI app's state (the
chat service exists only once the app has started, so it is read when a page asks for it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from graphwright.artifacts.service import ArtifactService
from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.chat.service import ChatService
from graphwright.errors import Unauthorized
from graphwright.graphmode.events import GraphEvents
from graphwright.graphmode.service import GraphService
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.service import MinerService
from graphwright.settings import Settings
from graphwright.web.live_graphs import LiveGraphs


class Sessions:
    """Signed-in browsers: the browser's id (in a signed, HttpOnly session cookie) to its token.

    Tokens stay in this process's memory only: never in the cookie, a URL or a file. A server
    restart signs everyone out, and a revoked token signs its browser out on its next page.
    """

    def __init__(self, auth: AuthService) -> None:
        self._auth = auth
        self._tokens: dict[str, str] = {}
        self._banner_dismissed: set[str] = set()
        self._lock = threading.Lock()

    def sign_in(self, browser_id: str, token: str) -> Principal:
        principal = self._auth.authenticate(token.strip())
        with self._lock:
            self._tokens[browser_id] = token.strip()
        return principal

    def sign_out(self, browser_id: str) -> None:
        with self._lock:
            self._tokens.pop(browser_id, None)

    def dismiss_banner(self, browser_id: str | None) -> None:
        """The no-model banner stays hidden in this browser until the server restarts."""
        if browser_id is not None:
            with self._lock:
                self._banner_dismissed.add(browser_id)

    def banner_dismissed(self, browser_id: str | None) -> bool:
        with self._lock:
            return browser_id in self._banner_dismissed

    def principal(self, browser_id: str | None) -> Principal | None:
        """The signed-in caller, or None (also when the token has been revoked or expired)."""
        if browser_id is None:
            return None
        with self._lock:
            token = self._tokens.get(browser_id)
        if token is None:
            return None
        try:
            return self._auth.authenticate(token)
        except Unauthorized:
            self.sign_out(browser_id)
            return None


@dataclass
class WebContext:
    state: Any  # the FastAPI app's state
    sessions: Sessions
    live: LiveGraphs

    @classmethod
    def of(cls, state: Any) -> WebContext:
        return cls(
            state=state,
            sessions=Sessions(state.auth_service),
            live=LiveGraphs(state.graph_service),
        )

    @property
    def settings(self) -> Settings:
        return self.state.settings

    @property
    def auth(self) -> AuthService:
        return self.state.auth_service

    @property
    def graphs(self) -> GraphService:
        return self.state.graph_service

    @property
    def graph_events(self) -> GraphEvents:
        return self.state.graph_events

    @property
    def artifacts(self) -> ArtifactService:
        return self.state.artifact_service

    @property
    def chat(self) -> ChatService:
        return self.state.chat_service

    @property
    def knowledge(self) -> KnowledgeService:
        return self.state.knowledge_service

    @property
    def miner(self) -> MinerService:
        return self.state.miner_service
