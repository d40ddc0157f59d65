"""Every error in the JSON envelope, on the same uvicorn configuration `graphwright serve` runs:
malformed requests uvicorn refuses itself, a bug's 500 (which keeps the connection), a JSON
syntax error (with its position), TRACE (405 with `Allow`), and `If-Match: *`."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.settings import Settings
from tests.conftest import free_port, serve_in_thread


@pytest.fixture
def server(database: Database, tmp_path: Path) -> Iterator[tuple[str, int, str]]:
    app: FastAPI = create_app(Settings(home=tmp_path, database_url=database.url), database=database)

    @app.get("/boom", include_in_schema=False)
    def boom() -> None:
        raise RuntimeError("a bug")

    port = free_port()
    with serve_in_thread(app, port, log_level="critical"):
        yield "127.0.0.1", port, app.state.auth_service.mint(label="t")


def exchange(sock: socket.socket, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one request and read one response with a Content-Length."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers["content-length"]):
        body += sock.recv(65536)
    return int(lines[0].split()[1]), headers, body


def envelope(body: bytes) -> dict:
    payload = json.loads(body)
    assert payload["success"] is False and payload["error"]["message"], payload
    return payload["error"]


@pytest.mark.parametrize(
    "raw",
    [
        # a request line past h11's 16 KiB, still unfinished when uvicorn gives up on it
        b"GET /api/graph/c/state?q=" + b"x" * 20_000,
        b"GET /health HTTP/1.1\r\nBad\x00Header\xff: y\r\n\r\n",
        b"NOT A REQUEST\r\n\r\n",
    ],
)
def test_requests_uvicorn_refuses_get_the_envelope(
    server: tuple[str, int, str], raw: bytes
) -> None:
    host, port, _ = server
    with socket.create_connection((host, port), timeout=10) as sock:
        status, headers, body = exchange(sock, raw)
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert envelope(body)["code"] == "bad_request"


def test_a_500_is_an_envelope_and_keeps_the_connection(server: tuple[str, int, str]) -> None:
    host, port, _ = server
    with socket.create_connection((host, port), timeout=10) as sock:
        status, headers, body = exchange(sock, b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 500 and headers["content-type"] == "application/json"
        assert envelope(body)["code"] == "internal_error"
        assert "a bug" not in body.decode()  # no internals leak
        status, _, body = exchange(sock, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 200 and json.loads(body)["success"] is True


def test_json_syntax_errors_say_where(server: tuple[str, int, str]) -> None:
    host, port, token = server
    response = httpx.post(
        f"http://{host}:{port}/api/graph/c/nodes",
        headers={"Authorization": f"Bearer {token}", "content-type": "application/json"},
        content=b'{"label": "a",\n  "type": }',
    )
    assert response.status_code == 422
    error = envelope(response.content)
    assert error["position"] == {"line": 2, "column": 11, "offset": 25}
    assert "line 2, column 11" in error["message"]


def test_a_body_that_is_not_utf8_says_where(server: tuple[str, int, str]) -> None:
    host, port, token = server
    response = httpx.post(
        f"http://{host}:{port}/api/graph/c/nodes",
        headers={"Authorization": f"Bearer {token}", "content-type": "application/json"},
        content=b'{"label": "\xff"}',
    )
    assert response.status_code == 422
    error = envelope(response.content)
    assert error["code"] == "invalid_json" and error["position"]["offset"] == 11


def test_trace_is_405_with_allow(server: tuple[str, int, str]) -> None:
    host, port, token = server
    response = httpx.request(
        "TRACE",
        f"http://{host}:{port}/api/graph/c/state",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    assert envelope(response.content)["code"] == "method_not_allowed"


def test_if_match_star_means_any_version(server: tuple[str, int, str]) -> None:
    host, port, token = server
    url = f"http://{host}:{port}/api/graph/c/nodes"
    auth = {"Authorization": f"Bearer {token}"}
    for _ in range(2):
        response = httpx.post(
            url, headers={**auth, "If-Match": "*"}, json={"label": "a", "type": "g"}
        )
        assert response.status_code == 201, response.text
    stale = httpx.post(url, headers={**auth, "If-Match": '"1"'}, json={"label": "a", "type": "g"})
    assert stale.status_code == 409


@pytest.mark.parametrize("value", ["", "abc", '"v1"'])
def test_an_empty_or_malformed_if_match_is_400_naming_the_header(
    server: tuple[str, int, str], value: str
) -> None:
    host, port, token = server
    response = httpx.post(
        f"http://{host}:{port}/api/graph/c/nodes",
        headers={"Authorization": f"Bearer {token}", "If-Match": value},
        json={"label": "a", "type": "g"},
    )
    assert response.status_code == 400, response.text
    error = envelope(response.content)
    assert error["code"] == "bad_request" and "If-Match" in error["message"]
