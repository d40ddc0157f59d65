"""`graphwright.Client`: chat, Graph Mode and the knowledge base from Python, over the REST API
of a server, or of the app run in this process (`Client.local`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import quote

from graphwright.client.graph import GraphModeGraph
from graphwright.client.objects import Event, Turn
from graphwright.client.transport import Transport

if TYPE_CHECKING:
    import pandas as pd

LOCAL_URL = "http://graphwright.local"  # the in-process app's base URL; no port is opened


class Client:
    """A graphwright server, as the holder of a bearer token.

    >>> client = Client("http://127.0.0.1:8000", "gw_...")
    >>> turn = client.chat("/kg.queryNeighbors TP53")
    >>> turn.artifacts[0].to_networkx()
    """

    def __init__(self, url: str, token: str) -> None:
        self._transport = Transport(url, token)
        self._on_close: list[Any] = []
        self._live = True
        self.kb = KnowledgeBase(self._transport)

    @classmethod
    def from_env(cls) -> Client:
        """The server and token of GRAPHWRIGHT_API_URL and GRAPHWRIGHT_TOKEN (the CLI's
        settings; the URL defaults to this host's server)."""
        from graphwright.settings import get_settings

        settings = get_settings()
        if settings.token is None:
            from graphwright.errors import Unauthorized

            raise Unauthorized("Set GRAPHWRIGHT_TOKEN (mint one with `graphwright token create`)")
        return cls(settings.api_base_url, settings.token.get_secret_value())

    @classmethod
    def local(cls, home: str | Path | None = None) -> Client:
        """graphwright in this process, with no server: the app of `home` (default:
        GRAPHWRIGHT_HOME) called through its REST API in memory. A token minted for this client
        is revoked on `close()`.

        >>> with Client.local(home="/tmp/gw") as client:
        ...     client.chat("/help").text
        """
        import httpx

        from graphwright.app import create_app
        from graphwright.settings import Settings

        settings = Settings(home=Path(home)) if home is not None else Settings()
        app = create_app(settings)
        auth = app.state.auth_service
        token = auth.mint(label="python client (local)", purpose="Client.local, revoked on close")
        client = cls.__new__(cls)
        client._transport = Transport(
            LOCAL_URL,
            token,
            transport=httpx.ASGITransport(app=app),
            lifespan=lambda: app.router.lifespan_context(app),
        )
        client._on_close = [lambda: auth.revoke_token(token)]
        client._live = False  # a notebook's view cannot reach an in-process app's events
        client.kb = KnowledgeBase(client._transport)
        return client

    @property
    def token(self) -> str | None:
        return self._transport.token

    def close(self) -> None:
        """Stop talking to the server (for `local`, revoke its token and stop the app)."""
        for step in self._on_close:
            step()
        self._on_close = []
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- chat -----------------------------------------------------------------------------

    def chat(self, message: str, conversation: str | None = None, graph_mode: bool = False) -> Turn:
        """Run one turn and return it, with its text, tool calls and artifacts. A new
        conversation unless `conversation` names one; `graph_mode` runs it in Graph Mode.
        Slash commands (`/kg.queryNeighbors TP53`) call a tool without a model.

        >>> turn = client.chat("/kg.queryNeighbors TP53")
        >>> turn.conversation_id, [a.title for a in turn.artifacts]
        """
        body = self._chat_body(message, conversation, graph_mode, stream=False)
        return Turn.from_json(self._transport.call("POST", "/api/chat", json=body))

    def stream(
        self, message: str, conversation: str | None = None, graph_mode: bool = False
    ) -> Iterator[Event]:
        """The turn's events as they happen (`status`, `token`, `tool_call`, `artifact`...,
        `done` last, whose data is the whole turn).

        >>> for event in client.stream("/help"):
        ...     print(event.type)
        """
        body = self._chat_body(message, conversation, graph_mode, stream=True)
        for kind, data in self._transport.events("POST", "/api/chat", json=body):
            yield Event(kind, data)

    @staticmethod
    def _chat_body(
        message: str, conversation: str | None, graph_mode: bool, *, stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"message": message, "stream": stream}
        if conversation is not None:
            body["conversationId"] = conversation
        if graph_mode:
            body["mode"] = "graph_mode"
        return body

    def conversations(self, limit: int = 50) -> list[dict[str, Any]]:
        """Conversations, the most recently active first."""
        return self._transport.call("GET", "/api/conversations", params={"limit": limit})

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        """A conversation with its messages, tool calls and artifacts."""
        return self._transport.call("GET", f"/api/conversations/{quote(conversation_id)}")

    def graph_mode(self, conversation_id: str, on: bool = True) -> GraphModeGraph:
        """Switch a conversation into Graph Mode (seeding its graph from its artifacts), or out
        of it with `on=False`; returns its graph."""
        mode = "graph_mode" if on else "normal"
        path = f"/api/conversations/{quote(conversation_id)}"
        self._transport.call("PATCH", path, json={"mode": mode})
        return self.graph(conversation_id)

    def graph(self, conversation_id: str) -> GraphModeGraph:
        """The Graph Mode graph of a conversation."""
        return GraphModeGraph(self._transport, conversation_id, live=self._live)


class KnowledgeBase:
    """The knowledge base: SPARQL, assets, and publication requests a person approves."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def query(self, sparql: str, limit: int | None = None) -> pd.DataFrame:
        """A read-only SPARQL SELECT as a DataFrame, one column per variable (values as text).

        >>> client.kb.query("SELECT ?s WHERE { ?s ?p ?o } LIMIT 5")
        """
        import pandas as pd

        body = {"query": sparql} | ({"limit": limit} if limit else {})
        answer = self._transport.call("POST", "/api/knowledge/query", json=body)
        columns = answer.get("variables") or []
        rows = [{c: _term(row.get(c)) for c in columns} for row in answer.get("rows") or []]
        return pd.DataFrame(rows, columns=columns)

    def get(self, ual: str, include_private: bool = False) -> dict[str, Any]:
        """A collection or asset by its UAL, as JSON-LD."""
        params = {"includePrivate": "true"} if include_private else None
        return self._transport.call("GET", f"/api/knowledge/assets/{ual}", params=params)

    def request_publication(
        self, jsonld: dict[str, Any] | list[Any], title: str | None = None
    ) -> dict[str, Any]:
        """Ask to publish JSON-LD; nothing is published before a person approves."""
        body: dict[str, Any] = {"content": jsonld}
        if title:
            body["title"] = title
        return self._transport.call("POST", "/api/knowledge/requests", json=body)

    def requests(self, status: str | None = None) -> list[dict[str, Any]]:
        params = {"status": status} if status else None
        return self._transport.call("GET", "/api/knowledge/requests", params=params)["requests"]

    def approve(self, request_id: str) -> dict[str, Any]:
        """Approve a request and publish it (a person's token: not one limited to a
        conversation)."""
        path = f"/api/knowledge/requests/{quote(request_id)}/approve"
        return self._transport.call("POST", path)

    def reject(self, request_id: str, reason: str) -> dict[str, Any]:
        path = f"/api/knowledge/requests/{quote(request_id)}/reject"
        return self._transport.call("POST", path, json={"reason": reason})


def _term(value: Any) -> Any:
    return value.get("value") if isinstance(value, dict) else value
