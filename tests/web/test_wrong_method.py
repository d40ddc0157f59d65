"""With the web UI mounted at `/`, a path that a route of the app takes, asked with a method that
route does not take, answers 405 with `Allow` naming the methods it does take (RFC 9110), not the
UI's HTML 404, and API paths that match no route still answer a JSON 404."""

from __future__ import annotations

import pytest

from tests.web.conftest import LiveUI


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/health", {"GET"}),
        ("DELETE", "/.well-known/agent-card.json", {"GET"}),
        ("POST", "/openapi.json", {"GET", "HEAD"}),
        ("PUT", "/api/chat", {"POST"}),
        ("DELETE", "/api/conversations", {"GET", "POST"}),
        ("PUT", "/api/graph/some-conversation/undo", {"POST"}),
    ],
)
def test_a_method_the_route_does_not_take_answers_405_naming_those_it_does(
    live_ui: LiveUI, method: str, path: str, allowed: set[str]
) -> None:
    with live_ui.api() as api:
        response = api.request(method, path)
    assert response.status_code == 405, response.text[:200]
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert set(response.headers["allow"].split(", ")) == allowed


def test_paths_no_route_takes_keep_their_answers(live_ui: LiveUI) -> None:
    with live_ui.api() as api:
        missing_api = api.put("/api/no-such-route")
        page = api.get("/", follow_redirects=True)
    assert missing_api.status_code == 404
    assert missing_api.json()["error"]["code"] == "not_found"
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
