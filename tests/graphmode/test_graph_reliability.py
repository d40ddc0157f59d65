"""Reliability through a real server: concurrent writers, and SIGKILL in the middle of an import."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from graphwright.auth.service import AuthService
from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.ops import MemoryGraph
from graphwright.graphmode.service import GraphService
from tests.conftest import free_port

WRITERS = 8
# 400 writes race plenty; each If-Match increment retries against 7 busy writers, so it is slow.
OPS_PER_WRITER = 50
BASE = "/api/graph/busy"


def writer(url: str, token: str, number: int, errors: list[str]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as http:
        previous = None
        for i in range(OPS_PER_WRITER):
            node = f"W{number}:{i}"
            if i % 10 == 9:
                increment_counter(http)
                continue
            if i % 10 == 5 and previous:
                response = http.delete(f"{BASE}/nodes/{previous}")
                previous = None
            elif i % 2 and previous:
                response = http.post(
                    f"{BASE}/edges", json={"source": previous, "target": "HUB:0", "label": "to"}
                )
            else:
                response = http.post(f"{BASE}/nodes", json={"id": node, "label": node, "type": "w"})
                previous = node
            if response.status_code >= 300:
                errors.append(response.text)


def increment_counter(http: httpx.Client) -> None:
    """Read-modify-write with If-Match, retried on 409: the classic lost-update trap."""
    while True:
        state = http.get(f"{BASE}/state?ids=HUB:0").json()
        version = state["data"]["metadata"]["version"]
        count = state["data"]["nodes"][0]["data"]["count"]
        response = http.patch(
            f"{BASE}/nodes/HUB:0",
            json={"data": {"count": count + 1}},
            headers={"If-Match": f'"{version}"'},
        )
        if response.status_code == 200:
            return
        assert response.status_code == 409, response.text
        assert response.json()["error"]["currentVersion"] >= version


def test_concurrent_writers_lose_nothing(database_url: str, tmp_path: Path) -> None:
    database = Database(database_url)
    token = AuthService(database).mint()
    service = GraphService(database, create_graph_events(database))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(server_env(database_url, tmp_path), port)
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as http:
            hub = {"id": "HUB:0", "label": "hub", "type": "hub", "data": {"count": 0}}
            assert http.post(f"{BASE}/nodes", json=hub).status_code == 201
        errors: list[str] = []
        threads = [
            threading.Thread(target=writer, args=(url, token, n, errors)) for n in range(WRITERS)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert errors == []

    state = service.state("busy")
    assert state.metadata.version == 1 + WRITERS * OPS_PER_WRITER
    hub_node = next(n for n in state.nodes if n.id == "HUB:0")
    assert hub_node.data["count"] == WRITERS * OPS_PER_WRITER // 10
    history = service.history("busy", limit=1000)
    versions = [item.version for item in history.items]
    versions += [i.version for i in service.history("busy", offset=1000, limit=1000).items]
    assert sorted(versions) == list(range(1, state.metadata.version + 1))

    replayed = MemoryGraph({}, {}, lambda _v: ([], []))
    for version in range(1, state.metadata.version + 1):
        replayed.apply(service.changeset("busy", version).forward)
    assert sorted(replayed.nodes) == [n.id for n in state.nodes]
    assert sorted(replayed.edges) == sorted(e.id for e in state.edges)
    assert replayed.nodes["HUB:0"]["data"]["count"] == hub_node.data["count"]
    database.dispose()


def server_env(database_url: str, home: Path) -> dict[str, str]:
    return {**os.environ, "GRAPHWRIGHT_HOME": str(home), "GRAPHWRIGHT_DATABASE_URL": database_url}


def start_server(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "graphwright", "serve", "--port",
         str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    pytest.fail("graphwright serve did not start within 90 s")


def big_graph(nodes: int, links_per_node: int) -> dict:
    return {
        "nodes": [{"id": f"BIG:{i}", "name": f"n{i}", "category": "gene"} for i in range(nodes)],
        "links": [
            {"source": f"BIG:{i}", "target": f"BIG:{(i * 7 + k + 1) % nodes}", "label": f"r{k}"}
            for i in range(nodes)
            for k in range(links_per_node)
        ],
    }


def test_sigkill_during_import_is_all_or_nothing(database_url: str, tmp_path: Path) -> None:
    database = Database(database_url)
    token = AuthService(database).mint()
    service = GraphService(database, create_graph_events(database))
    headers = {"Authorization": f"Bearer {token}"}
    env = server_env(database_url, tmp_path)
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/graph/kill"
    server = start_server(env, port)
    try:
        seed = {"id": "SEED:1", "label": "seed", "type": "gene"}
        assert httpx.post(f"{url}/nodes", json=seed, headers=headers).status_code == 201
        outcome: list[object] = []

        def send_import() -> None:
            try:
                outcome.append(
                    httpx.post(
                        f"{url}/import",
                        json={"graph": big_graph(20_000, 4)},
                        headers=headers,
                        timeout=120,
                    ).status_code
                )
            except httpx.TransportError as exc:
                outcome.append(exc)

        sender = threading.Thread(target=send_import)
        sender.start()
        wait_until_rows_are_written(database_url)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
        sender.join(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()

    server = start_server(env, port)
    try:
        state = httpx.get(f"{url}/state?limit=10", headers=headers).json()["data"]
        history = httpx.get(f"{url}/history", headers=headers).json()["data"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    imported = state["metadata"]["nodeCount"] > 1
    assert state["metadata"]["nodeCount"] in (1, 20_001)
    assert state["metadata"]["edgeCount"] == (80_000 if imported else 0)
    assert [item["command"] for item in history["items"]] == (
        ["import", "addNode"] if imported else ["addNode"]
    )
    assert state["metadata"]["version"] == history["version"] == len(history["items"])
    assert service.state_at("kill", 1).metadata.node_count == 1
    database.dispose()
    assert isinstance(outcome[0], httpx.TransportError)  # the server died before answering


def wait_until_rows_are_written(database_url: str) -> None:
    """Return once the import is inserting rows inside its transaction (not merely parsing)."""
    deadline = time.monotonic() + 120
    if database_url.startswith("sqlite"):
        wal = Path(make_url(database_url).database + "-wal")  # type: ignore[operator]
        while not (wal.exists() and wal.stat().st_size > 2_000_000):
            assert time.monotonic() < deadline, "the import never started writing"
            time.sleep(0.01)
        return
    engine = create_engine(database_url, isolation_level="AUTOCOMMIT")  # a fresh snapshot per poll
    query = text(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
        "AND query LIKE 'COPY graph_edges%'"
    )
    try:
        with engine.connect() as conn:
            while not conn.execute(query).scalar():
                assert time.monotonic() < deadline, "the import never started writing"
                time.sleep(0.01)
    finally:
        engine.dispose()
