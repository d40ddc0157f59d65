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
from fastapi.testclient import TestClient

from tests.graphmode.conftest import app, auth, client, token  # noqa: F401


@pytest.fixture
def handed_off(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions FastAPI runs in its thread pool, in order."""
    names: list[str] = []
    real = fastapi.routing.run_in_threadpool

    async def counting(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        names.append(getattr(kwargs.get("function", func), "__name__", repr(func)))
        return await real(func, *args, **kwargs)

    for module in (fastapi.routing, fastapi.dependencies.utils, fastapi.concurrency):
        monkeypatch.setattr(module, "run_in_threadpool", counting)
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
    assert handed_off == ["current_principal", "add_node"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/miner/memory", ["current_principal"]),  # an async route: its check only
        ("/api/conversations", ["current_principal", "list_conversations"]),
        ("/api/knowledge/requests", ["current_principal", "list_requests"]),
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
