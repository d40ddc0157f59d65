"""Stand-alone MCP servers (`graphwright mcp knowledge`, `graphwright mcp miner`) beside a running
`graphwright serve`: Oxigraph lets one process open the embedded store, so when a server on the
same home holds it they read it through that server's SPARQL endpoint, as the chat's own MCP
subprocesses do (knowledge.tools.KnowledgeReader). They use GRAPHWRIGHT_TOKEN, or a read token
minted in the shared home and revoked when they stop."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from pydantic import SecretStr

from graphwright.auth.service import AuthService
from graphwright.db import Database
from graphwright.server_record import running_server
from graphwright.settings import Settings

READER_TTL = timedelta(days=1)  # a long MCP session; revoked at exit, expired if killed
READER_PURPOSE = "a stand-alone MCP server read the running server's knowledge base with it"


@contextmanager
def through_running_server(settings: Settings, *, actor: str) -> Iterator[Settings]:
    """`settings`, pointed at the running server's SPARQL endpoint when that server holds the
    embedded store on this home; unchanged otherwise."""
    url = running_server(settings.home)
    if url is None or settings.sparql_url or settings.dkg_node_url:
        yield settings
        return
    db = Database(settings.resolved_database_url)
    minted = None
    if settings.token is not None:
        token = settings.token.get_secret_value()
    else:
        minted = token = AuthService(db).mint(label=actor, ttl=READER_TTL, purpose=READER_PURPOSE)
    try:
        yield settings.model_copy(
            update={
                "sparql_url": f"{url.rstrip('/')}/api/knowledge/sparql",
                "sparql_update_url": None,
                "sparql_token": SecretStr(token),
            }
        )
    finally:
        if minted is not None:
            AuthService(db).revoke_token(minted)
        db.dispose()
