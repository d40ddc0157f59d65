"""Every response forbids framing by other sites, cookies follow the request's scheme, and a
method no route takes answers 405 (src/graphwright/http_policy.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.http_policy import ResponsePolicy
from graphwright.settings import Settings


def cookie_app(**options: bool) -> Starlette:
    async def sign_in(request: Request) -> PlainTextResponse:
        response = PlainTextResponse("in")
        response.set_cookie("session", "abc", httponly=True, samesite="strict")
        return response

    app = Starlette(routes=[Route("/", sign_in)])
    app.add_middleware(ResponsePolicy, **options)
    return app


@pytest.mark.parametrize(
    ("base_url", "forced", "secure"),
    [
        ("http://testserver", False, False),
        ("https://testserver", False, True),
        ("http://testserver", True, True),
    ],
)
def test_the_session_cookie_is_secure_over_https_or_when_set(
    base_url: str, forced: bool, secure: bool
) -> None:
    response = TestClient(cookie_app(secure_cookies=forced), base_url=base_url).get("/")
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("session=abc")
    assert ("; Secure" in cookie) is secure
    assert cookie.count("Secure") <= 1


def test_every_response_refuses_foreign_frames_and_trace_gets_405(
    tmp_path: Path, database: Database
) -> None:
    app = create_app(
        Settings(home=tmp_path, database_url=database.url, offline=True), database=database
    )
    with TestClient(app) as client:
        health = client.get("/health")
        docs = client.get("/docs")
        missing = client.get("/api/nothing-here")
        traced = client.request("TRACE", "/api/graphs")
        connect = client.request("CONNECT", "/")
    for response in (health, missing, traced, connect):
        assert response.headers["content-security-policy"] == "frame-ancestors 'self'"
    # /docs keeps its own policy, which already says frame-ancestors
    assert docs.headers["content-security-policy"].count("frame-ancestors") == 1
    for response in (traced, connect):
        assert response.status_code == 405
        assert response.json()["error"]["code"] == "method_not_allowed"
        assert "GET" in response.headers["allow"] and "TRACE" not in response.headers["allow"]
