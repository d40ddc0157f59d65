"""The web UI: NiceGUI pages mounted into the FastAPI app at `/`, and the reusable graph view.

NiceGUI keeps its pages and its app in module-level state, so one process serves one UI: `mount`
is called once, by `create_app(web=True)` (what `graphwright serve` runs).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from fastapi import FastAPI, Request, Response
from nicegui import core, ui
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from graphwright.envelope import failure
from graphwright.http_policy import wrong_method
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
        refused = wrong_method(routes_of_the_app(), request.scope)
        return refused or failure(404, "not_found", f"No API route {request.url.path}")

    def routes_of_the_app() -> list[BaseRoute]:
        return [r for r in app.router.routes if getattr(r, "endpoint", None) is not no_such_api]

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
    for route in app.router.routes:
        if isinstance(route, Mount) and route.app is core.app:
            route.app = RoutesFirst(core.app, routes_of_the_app)
    return context


class RoutesFirst:
    """The UI, behind a check for a path that a route of the app takes with other methods (PUT
    /health): 405 naming them, where the UI mounted at `/` would answer with its HTML 404."""

    def __init__(self, ui_app: ASGIApp, routes: Callable[[], list[BaseRoute]]) -> None:
        self.ui_app = ui_app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = wrong_method(self.routes(), scope) if scope["type"] == "http" else None
        await (refused or self.ui_app)(scope, receive, send)
