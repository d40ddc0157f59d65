"""Shared fixtures: tests run on SQLite, and also on PostgreSQL when
GRAPHWRIGHT_TEST_DATABASE_URL is set.

On PostgreSQL each test gets its own schema (through `search_path`), dropped afterwards.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import uvicorn
from hypothesis import settings as hypothesis_settings
from sqlalchemy import create_engine, text
from sse_starlette.sse import AppStatus

from graphwright.db import Database
from graphwright.serving import server_config

# The servers the tests start do not start processes ahead (eight per server, most never used in
# a test); tests/test_warm_start.py starts its own with the default.
os.environ.setdefault("GRAPHWRIGHT_WARM_START", "false")

# CI shares two cores with databases and servers: a slow example is not a failing one.
hypothesis_settings.register_profile("graphwright", deadline=None)
hypothesis_settings.load_profile("graphwright")

PG_URL = os.environ.get("GRAPHWRIGHT_TEST_DATABASE_URL")
BACKENDS = ["sqlite", "postgresql"] if PG_URL else ["sqlite"]


def free_port() -> int:
    """A local port no one listens on, for a live uvicorn server."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_serving(url: str, process: subprocess.Popen[Any], timeout: float = 120) -> None:
    """Wait until a `graphwright serve` process answers /health; fail with its output if it
    stops first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"serve stopped: {process.communicate()[0]}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.3)
    raise AssertionError(f"serve did not answer {url}/health in {timeout:.0f} s")


@contextmanager
def serve_in_thread(app: Any, port: int | None = None, **options: Any) -> Iterator[str]:
    """Serve an ASGI app on `graphwright serve`'s uvicorn configuration (lifespan on), in a
    thread of its own, on `port` or a free one; yields its URL once it has started."""
    port = port or free_port()
    config = {"log_level": "warning", "lifespan": "on", **options}
    server = uvicorn.Server(server_config(app, host="127.0.0.1", port=port, **config))
    thread = threading.Thread(target=server.run, name=f"server-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"The server on port {port} did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextmanager
def pg_schema_url() -> Iterator[str]:
    """A URL to a new, empty PostgreSQL schema, dropped afterwards."""
    assert PG_URL
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield f"{PG_URL}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database, once per backend under test."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.db'}"
        return
    with pg_schema_url() as url:
        yield url


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    yield db
    db.dispose()


@pytest.fixture(autouse=True)
def _sse_streams_outlive_earlier_servers() -> None:
    """sse-starlette ends every stream once any uvicorn server in the process has been told to
    exit (a process-global flag, or the SIGTERM handler an earlier in-process server left behind).
    One test process runs many servers, so start each test with neither."""
    AppStatus.should_exit = False
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(scope="module", autouse=True)
def _earlier_objects_frozen() -> None:
    """What the process holds when a module starts (graphwright, its libraries, the test
    modules, what earlier modules left behind) is frozen out of the garbage collector's full
    passes, as `graphwright serve` freezes its startup. Unfrozen, every full pass rescanned it:
    with NiceGUI's two per UI test, such a test cost 4 to 7 s of CPU late in the suite against
    0.5 s in a fresh process (make test's pytest: 14 min 18 s -> 12 min 40 s)."""
    gc.collect()
    gc.freeze()
