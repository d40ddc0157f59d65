"""`graphwright serve` starts its chat's MCP servers (with a model configured) and the knowledge
base's query workers ahead, in the background once the app is up, so that the first chat turn
and the first query start no process. An app from `create_app()` starts nothing ahead (the test
suite builds hundreds). SIGTERM while they start still stops the server within 5 s and leaves no
process behind.

Bounds are generous: eight Python processes start on a busy 2-core machine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest
from fastapi.testclient import TestClient

from graphwright import mcp_registry
from graphwright.app import create_app
from graphwright.auth.service import AuthService
from graphwright.core import biolink, ids
from graphwright.db import Database
from graphwright.settings import Settings
from tests.chat.openai_stub import OpenAIStub
from tests.conftest import free_port, serve_in_thread, wait_until_serving

GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"
CHAT_SERVERS = set(mcp_registry.names()) - mcp_registry.NOT_IN_CHAT
EMBEDDED_WORKERS = 2  # EmbeddedStore's default concurrency
STARTED_WITHIN = 120.0


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    stub = OpenAIStub()
    with serve_in_thread(stub.app()) as url:
        stub.url = f"{url}/v1"  # type: ignore[attr-defined]
        yield stub


@pytest.fixture
def model_url(stub: OpenAIStub) -> str:
    return stub.url  # type: ignore[attr-defined]


def mcp_servers(process: psutil.Process) -> dict[str, int]:
    """The MCP servers among `process`'s children (`graphwright mcp NAME`), by name."""
    servers = {}
    for child in process.children():
        with_args = _cmdline(child)
        if len(with_args) >= 2 and with_args[-2] == "mcp":
            servers[with_args[-1]] = child.pid
    return servers


def query_workers(process: psutil.Process) -> set[int]:
    return {
        child.pid
        for child in process.children()
        if "graphwright.knowledge.query_workers" in _cmdline(child)
    }


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:  # it ended meanwhile
        return []


def processes_of(home: Path) -> list[psutil.Process]:
    """Every live process started for the server whose GRAPHWRIGHT_HOME is `home`, whoever its
    parent is now (an orphan's is init)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() == psutil.STATUS_ZOMBIE or process.pid == os.getpid():
                continue
            if process.environ().get("GRAPHWRIGHT_HOME") == str(home):
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """SQLite only: what starts ahead does not depend on the database, and each of these tests
    starts a real server with eight processes (both backends took 83 s of the suite)."""
    return f"sqlite:///{tmp_path / 'warm.db'}"


def start_serve(tmp_path: Path, database_url: str, **env: str) -> subprocess.Popen[bytes]:
    port = free_port()
    variables = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GRAPHWRIGHT_")},
        "GRAPHWRIGHT_HOME": str(tmp_path / "home"),
        "GRAPHWRIGHT_DATABASE_URL": database_url,
        "GRAPHWRIGHT_PORT": str(port),
        "GRAPHWRIGHT_OFFLINE": "true",
        "GRAPHWRIGHT_KB_SAMPLE_DATA": "false",
        **env,
    }
    if "PYTHONPATH" in os.environ:
        variables["PYTHONPATH"] = os.environ["PYTHONPATH"]
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(
        [str(GRAPHWRIGHT), "serve"], env=variables, stdout=log, stderr=subprocess.STDOUT
    )
    server.url = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
    return server


def wait_for(condition, what: str, server: subprocess.Popen[bytes]) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + STARTED_WITHIN
    while not condition():
        assert server.poll() is None, "serve stopped"
        assert time.monotonic() < deadline, f"{what} not within {STARTED_WITHIN:.0f} s"
        time.sleep(0.2)


def stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def with_model(model_url: str) -> dict[str, str]:
    return {
        "GRAPHWRIGHT_MODEL": "openai:stub-model",
        "GRAPHWRIGHT_MODEL_BASE_URL": model_url,
        "GRAPHWRIGHT_MODEL_API_KEY": "sk-stub",
    }


def test_serve_starts_mcp_servers_and_query_workers_ahead_and_the_first_turn_starts_none(
    database_url: str, tmp_path: Path, stub: OpenAIStub, model_url: str
) -> None:
    database = Database(database_url)
    token = AuthService(database).mint()
    database.dispose()
    server = start_serve(tmp_path, database_url, **with_model(model_url))
    try:
        wait_until_serving(server.url, server, timeout=90)  # type: ignore[attr-defined]
        serve = psutil.Process(server.pid)
        wait_for(lambda: set(mcp_servers(serve)) == CHAT_SERVERS, "the MCP servers", server)
        wait_for(lambda: len(query_workers(serve)) == EMBEDDED_WORKERS, "query workers", server)
        before = {child.pid for child in serve.children()}

        rest = httpx.Client(
            base_url=server.url,  # type: ignore[attr-defined]
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        asked = len(stub.seen)
        turn = rest.post("/api/chat", json={"message": "hello", "stream": False})
        assert turn.status_code == 200, turn.text
        # The turn listed its tools, then asked the model (whose answer, the stub's one
        # non-streamed line, does not matter here).
        assert len(stub.seen) > asked
        query = rest.post("/api/knowledge/query", json={"query": "ASK { ?s ?p ?o }"})
        assert query.status_code == 200, query.text

        assert {child.pid for child in serve.children()} == before
    finally:
        stop(server)
    output = (tmp_path / "serve.log").read_text()
    assert "Traceback" not in output, output


def test_without_a_model_serve_starts_no_mcp_server_ahead(
    database_url: str, tmp_path: Path
) -> None:
    server = start_serve(tmp_path, database_url)
    try:
        wait_until_serving(server.url, server, timeout=90)  # type: ignore[attr-defined]
        serve = psutil.Process(server.pid)
        # The query workers are started ahead all the same: once they run, so would servers.
        wait_for(lambda: len(query_workers(serve)) == EMBEDDED_WORKERS, "query workers", server)
        time.sleep(2)
        assert mcp_servers(serve) == {}
    finally:
        stop(server)


def test_an_app_from_create_app_starts_nothing_ahead(
    database: Database, tmp_path: Path, model_url: str
) -> None:
    settings = Settings(
        home=tmp_path / "home",
        database_url=database.url,
        kb_sample_data=False,
        offline=True,
        model="openai:stub-model",
        model_base_url=model_url,
        model_api_key="sk-stub",  # type: ignore[arg-type]
    )
    me = psutil.Process()
    before = {child.pid for child in me.children()}
    with TestClient(create_app(settings, database=database)) as client:
        assert client.get("/health").status_code == 200
        time.sleep(3)
        assert set(mcp_servers(me).values()) - before == set()
        assert query_workers(me) - before == set()


def test_sigterm_while_starting_ahead_stops_serve_within_5_s_and_leaves_no_process(
    database_url: str, tmp_path: Path, model_url: str
) -> None:
    server = start_serve(tmp_path, database_url, **with_model(model_url))
    home = tmp_path / "home"
    try:
        wait_until_serving(server.url, server, timeout=90)  # type: ignore[attr-defined]
        serve = psutil.Process(server.pid)
        # As soon as the start ahead is under way (eight processes take seconds to start).
        wait_for(lambda: bool(serve.children()), "a process started ahead", server)
        started = time.monotonic()
        server.send_signal(signal.SIGTERM)
        server.wait(30)
        assert time.monotonic() - started < 5
        assert processes_of(home) == []
    finally:
        stop(server)
        for process in processes_of(home):
            process.kill()


def test_serve_reads_the_biolink_model_and_the_prefix_map_before_the_first_request(
    database: Database, tmp_path: Path
) -> None:
    """Read on first use, they cost the first edit of each new server some 0.2 s, holding the
    interpreter and so every other request."""
    settings = Settings(
        home=tmp_path / "home", database_url=database.url, kb_sample_data=False, offline=True
    )
    loaders = (biolink._model, biolink._class_by_key, ids._uri_table, ids._prefix_table)
    for loader in loaders:
        loader.cache_clear()
    with TestClient(create_app(settings, database=database, warm_start=True)):
        assert [loader.cache_info().currsize for loader in loaders] == [1, 1, 1, 1]
