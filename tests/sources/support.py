"""Recorded source replies and a local web site serving the recorded grant page.

A plain module rather than conftest.py: tests/mcp imports it too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sources"


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


GRANT_PAGE = (FIXTURES / "grant_page.html").read_text()


class GrantSite(BaseHTTPRequestHandler):
    """Answers every GET with the recorded grant page as UTF-8 HTML."""

    def do_GET(self) -> None:
        body = GRANT_PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve_locally(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """A threaded HTTP server on 127.0.0.1 for the block; yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
