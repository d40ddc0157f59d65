"""The web UI: NiceGUI pages mounted into the FastAPI app at `/`, and the reusable graph view.

NiceGUI keeps its pages and its app in module-level state, so one process serves one UI: `mount`
is called once, by `create_app(web=True)` (what `graphwright serve` runs).
"""

from __future__ import annotations

import secrets

from fastapi import FastAPI, Request, Response
from nicegui import ui
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import Match, Mount

from graphwright.envelope import failure
from graphwright.web import (
    chat_page,
    conversations,
    graph_page,
    knowledge_pages,
    knowledge_requests,
    knowledge_sparql,
    miner_pages,
    signin,
)
from graphwright.web.context import WebContext

SESSION_COOKIE = "graphwright_session"


def register_pages(context: WebContext) -> None:
    signin.register(context)
    conversations.register(context)
    chat_page.register(context)
    graph_page.register(context)
    knowledge_pages.register(context)
    knowledge_sparql.register(context)
    knowledge_requests.register(context)
    miner_pages.register(context)


def mount(app: FastAPI) -> WebContext:
    """Serve the UI at `/` of `app`; API paths that match no route still answer JSON."""

    @app.api_route(
        "/api/{path:path}",
        methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        include_in_schema=False,
    )
    def no_such_api(request: Request) -> Response:
        # Without this, the UI mounted at / would answer with an HTML page.
        for route in app.router.routes:
            if isinstance(route, Mount) or getattr(route, "endpoint", None) is no_such_api:
                continue
            if route.matches(request.scope)[0] is Match.PARTIAL:
                return failure(
                    405, "method_not_allowed", f"{request.method} is not allowed on this route"
                )
        return failure(404, "not_found", f"No API route {request.url.path}")

    # The session cookie holds only a random browser id, signed; tokens stay on the server.
    # Sessions live in memory, so a new secret per process costs nothing but a new sign-in.
    app.add_middleware(
        SessionMiddleware,
        secret_key=secrets.token_urlsafe(32),
        session_cookie=SESSION_COOKIE,
        same_site="strict",
        https_only=False,
    )
    context = WebContext.of(app.state)
    register_pages(context)
    ui.run_with(
        app,
        title="graphwright",
        language="en-US",  # also <html lang>, which screen readers need to pick a voice
        favicon="🕸️",
        storage_secret=None,
        show_welcome_message=False,
        reconnect_timeout=10.0,
    )
    return context
