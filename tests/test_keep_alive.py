"""A connection a client keeps for its next request stays open longer than clients keep them.

With uvicorn's default (5 s, as long as httpx keeps an idle connection), a client could send its
next request just as the server closed the connection: the request was lost (the load benchmark
saw "ReadError" on an edit). The server must be the side that waits longer.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from tests.conftest import serve_in_thread

# httpx keeps an idle connection 5 s; Node's agents and most load balancers keep one up to 60 s.
CLIENT_IDLE_SECONDS = 6


def _get(connection: socket.socket) -> bytes:
    connection.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
    answer = b""
    while not answer.endswith(b"ok"):
        chunk = connection.recv(4096)
        if not chunk:
            break
        answer += chunk
    return answer


def test_an_idle_connection_is_still_open_when_the_client_sends_its_next_request() -> None:
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok"))])
    with serve_in_thread(app) as url:
        address = urlsplit(url)
        with socket.create_connection((address.hostname, address.port), timeout=10) as connection:
            assert _get(connection).startswith(b"HTTP/1.1 200")
            time.sleep(CLIENT_IDLE_SECONDS)
            assert _get(connection).startswith(b"HTTP/1.1 200"), "the server closed it"
