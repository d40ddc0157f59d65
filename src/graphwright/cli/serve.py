"""`graphwright serve`: the REST API, MCP over streamable HTTP and the chat API on uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from graphwright.cli.common import bad_input_exits, console
from graphwright.settings import get_settings


def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000).")] = None,
) -> None:
    """Run the graphwright server until interrupted."""
    # Imported here: the app pulls in every room, which `graphwright mcp NAME` must not pay for.

    from graphwright.app import create_app
    from graphwright.server_record import recorded
    from graphwright.serving import GraphwrightServer, server_config

    settings = get_settings()
    updates = {key: value for key, value in (("host", host), ("port", port)) if value is not None}
    settings = settings.model_copy(update=updates)
    with bad_input_exits("serve"):
        app = create_app(settings, web=True, warm_start=settings.warm_start)
    console.print(
        f"graphwright on http://{settings.host}:{settings.port} (web UI at /) "
        f"({settings.data_location}); API calls need a token: graphwright token create",
        highlight=False,
    )
    if notice := app.state.model_setup.notice:
        console.print(notice, highlight=False, soft_wrap=True)
    # X-Forwarded-Proto (https, hence Secure cookies) is believed from trusted proxies only.
    proxies = {"proxy_headers": bool(settings.trusted_proxies)}
    if settings.trusted_proxies:
        proxies["forwarded_allow_ips"] = settings.trusted_proxies
    server = GraphwrightServer(
        server_config(app, host=settings.host, port=settings.port, **proxies)
    )
    with recorded(settings.home, settings.api_base_url):  # the CLI beside it finds it here
        server.run()
