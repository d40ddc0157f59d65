"""`/docs` (Swagger UI) and `/redoc` served from files installed with the package, never a CDN.

The assets come from the fastapi-offline package. ReDoc's bundle names one image on its CDN (the
logo in its footer): it is served with that address pointed at a local image. A
Content-Security-Policy keeps both pages to this origin besides.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/static-offline-docs"
ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
REDOC_CDN_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self' 'unsafe-inline'; worker-src 'self' blob:; font-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'self'"
)


def install(app: FastAPI) -> None:
    """Add the two pages to an app created with `docs_url=None, redoc_url=None`."""

    @app.get(f"{ASSETS_URL}/redoc.standalone.js", include_in_schema=False)
    def redoc_script() -> Response:
        return Response(_local_redoc(), media_type="text/javascript")

    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="api-docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} · API",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None},
        )
        return _contained(page)

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        page = get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} · API reference",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
        return _contained(page)


def _contained(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = POLICY
    return page


@cache
def _local_redoc() -> bytes:
    script = (ASSETS_DIR / "redoc.standalone.js").read_bytes()
    return script.replace(REDOC_CDN_LOGO, f"{ASSETS_URL}/favicon.png".encode())
