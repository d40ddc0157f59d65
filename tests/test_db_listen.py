"""The PostgreSQL listener: once started it never holds its caller again (graph events start it
on the event loop for every SSE stream), and it says when it hears and when it does not."""

from __future__ import annotations

import socket
import time

from graphwright.db_listen import PostgresListener


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_listener_that_cannot_connect_holds_only_its_first_start() -> None:
    url = f"postgresql+psycopg://nobody@127.0.0.1:{closed_port()}/none?connect_timeout=2"
    hearing: list[bool] = []
    listener = PostgresListener(url, "nowhere", lambda _notice: None, hearing.append)
    try:
        started = time.perf_counter()
        listener.start(wait=0.5)
        assert time.perf_counter() - started >= 0.5
        started = time.perf_counter()
        listener.start(wait=0.5)
        assert time.perf_counter() - started < 0.1
        assert True not in hearing and listener.backend_pid is None
    finally:
        listener.close()
