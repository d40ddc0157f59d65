"""A request hands the thread pool only the work that blocks: its token check and its route's
database work. Each hand-off waits for a free thread and then for the event loop, and under load
those waits add up to most of an edit's time (benchmarks/load_bench.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import fastapi.concurrency
import fastapi.dependencies.utils
import fastapi.routing
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import graphwright.auth.service
from tests.graphmode.conftest import app, auth, client, token  # noqa: F401


@pytest.fixture
def handed_off(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions FastAPI and the token check run in the thread pool, in order."""
    names: list[str] = []
    real = fastapi.routing.run_in_threadpool

    async def counting(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        names.append(getattr(kwargs.get("function", func), "__name__", repr(func)))
        return await real(func, *args, **kwargs)

    for module in (fastapi.routing, fastapi.dependencies.utils, fastapi.concurrency):
        monkeypatch.setattr(module, "run_in_threadpool", counting)
    monkeypatch.setattr(graphwright.auth.service, "in_worker_thread", counting)
    return names


def test_an_edit_hands_off_its_token_check_and_its_write(
    client: TestClient,  # noqa: F811
    auth: dict[str, str],  # noqa: F811
    handed_off: list[str],
) -> None:
    response = client.post(
        "/api/graph/c1/nodes",
        json={"id": "n1", "label": "TP53", "type": "biolink:Gene"},
        headers={**auth, "If-Match": '"0"'},
    )
    assert response.status_code == 201, response.text
    assert handed_off == ["authenticate", "add_node"]


def test_a_token_checked_before_is_not_handed_off_on_postgresql(
    app: FastAPI,  # noqa: F811
    client: TestClient,  # noqa: F811
    auth: dict[str, str],  # noqa: F811
    handed_off: list[str],
) -> None:
    """PostgreSQL tells every server of a revocation, so a server keeps the tokens it checked;
    SQLite cannot tell, so there every request reads its token (tests/auth/test_checked_tokens)."""
    for index in range(2):
        response = client.post(
            "/api/graph/c1/nodes",
            json={"id": f"n{index}", "label": "TP53", "type": "biolink:Gene"},
            headers=auth,
        )
        assert response.status_code == 201, response.text
    kept = not app.state.database.is_sqlite
    assert handed_off == [
        "authenticate",
        "add_node",
        *([] if kept else ["authenticate"]),
        "add_node",
    ]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/miner/memory", ["authenticate"]),  # an async route: its check only
        ("/api/conversations", ["authenticate", "list_conversations"]),
        ("/api/knowledge/requests", ["authenticate", "list_requests"]),
    ],
)
def test_every_room_hands_off_only_what_blocks(
    client: TestClient,  # noqa: F811
    auth: dict[str, str],  # noqa: F811
    handed_off: list[str],
    path: str,
    expected: list[str],
) -> None:
    response = client.get(path, headers=auth)
    assert response.status_code == 200, response.text
    assert handed_off == expected
