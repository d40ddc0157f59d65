"""`graphwright serve`: the REST API (and, as rooms add them, the UI, MCP and A2A) on uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer
import uvicorn

from graphwright.app import create_app
from graphwright.cli.common import bad_input_exits, console
from graphwright.settings import get_settings


def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000).")] = None,
) -> None:
    """Run the graphwright server until interrupted."""
    settings = get_settings()
    bind_host = host or settings.host
    bind_port = port if port is not None else settings.port
    with bad_input_exits("serve"):
        app = create_app(settings)
    console.print(
        f"graphwright on http://{bind_host}:{bind_port} (data in {settings.home.resolve()}); "
        "API calls need a token: graphwright token create",
        highlight=False,
    )
    uvicorn.run(app, host=bind_host, port=bind_port, log_level="info")
