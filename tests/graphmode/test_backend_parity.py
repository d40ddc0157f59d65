"""SQLite and PostgreSQL give the same answer to the same input: a table of edge cases, sent
through the REST API to one server on each backend, compared status by status and body by body."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.settings import Settings
from tests.conftest import PG_URL, pg_schema_url

pytestmark = pytest.mark.skipif(
    PG_URL is None, reason="parity needs PostgreSQL (GRAPHWRIGHT_TEST_DATABASE_URL)"
)

G = "/api/graph/parity"
# (method, path, body as JSON text or None)
CASES: list[tuple[str, str, str | None]] = [
    ("POST", f"{G}/nodes", '{"id": "A:1", "label": "Äpfel Straße", "type": "gene"}'),
    ("POST", f"{G}/nodes", '{"id": "A:2", "label": "emoji 🧬 label", "type": "gene"}'),
    ("POST", f"{G}/nodes", '{"id": "a:3", "label": "100%_done", "type": "drug"}'),
    ("POST", f"{G}/nodes", '{"id": "A:4", "label": "x", "type": "g", "data": {"": 1}}'),
    (
        "POST",
        f"{G}/nodes",
        '{"id": "A:5", "label": "n", "type": "g", '
        '"data": {"i": 9223372036854775807, "f": 1e308, "m": -0.0}}',
    ),
    (
        "POST",
        f"{G}/nodes",
        '{"id": "A:6", "label": "n", "type": "g", "data": {"i": 9223372036854775808}}',
    ),
    ("POST", f"{G}/nodes", '{"id": "A:7", "label": "nul\\u0000", "type": "gene"}'),
    ("POST", f"{G}/nodes", '{"id": "A:8", "label": "n", "type": "g", "data": {"s": "\\u0000"}}'),
    ("POST", f"{G}/nodes", '{"id": "A:9", "label": "n", "type": "g", "data": {"x": NaN}}'),
    ("POST", f"{G}/nodes", '{"id": "A:1", "label": "duplicate", "type": "gene"}'),
    ("POST", f"{G}/nodes", '{"id": "  ", "label": "blank id", "type": "gene"}'),
    ("POST", f"{G}/nodes", '{"id": "A:10", "label": "tab\\tnewline\\n", "type": "gene"}'),
    ("POST", f"{G}/edges", '{"id": "e1", "source": "A:1", "target": "A:2", "label": "l"}'),
    ("POST", f"{G}/edges", '{"id": "e2", "source": "A:1", "target": "nope:1"}'),
    ("POST", f"{G}/edges", '{"id": "e1", "source": "A:2", "target": "A:1"}'),
    ("POST", f"{G}/edges", '{"source": "A:1", "target": "A:2", "label": "\\u0000"}'),
    ("PATCH", f"{G}/nodes/A:1", '{"data": {"deep": {"a": [1, {"b": null}]}}}'),
    ("PATCH", f"{G}/nodes/A:404", '{"label": "ghost"}'),
    ("GET", f"{G}/search?q=äpfel", None),
    ("GET", f"{G}/search?q=STRASSE", None),
    ("GET", f"{G}/search?q=%25_", None),
    ("GET", f"{G}/search?q=_", None),
    ("GET", f"{G}/search?q=%00", None),
    ("GET", f"{G}/search?q=🧬", None),
    ("GET", f"{G}/nodes/A:1%00", None),
    ("GET", f"{G}/edges/e%00", None),
    ("GET", f"{G}/state?nodeTypes=%00", None),
    ("GET", "/api/graph/a%00b/state", None),
    ("GET", f"{G}/nodes/A%3A2", None),
    ("GET", f"{G}/nodes/a:1", None),
    ("GET", f"{G}/state", None),
    ("GET", f"{G}/history/9223372036854775807", None),
    ("GET", f"{G}/history/9223372036854775808", None),
    ("GET", f"{G}/versions/-1", None),
    ("DELETE", f"{G}/nodes/bulk", '{"minDegree": 9223372036854775808}'),
    ("DELETE", f"{G}/nodes/bulk", '{"degree": 9223372036854775807}'),
    ("DELETE", f"{G}/nodes/bulk", '{"maxDegree": 2147483648, "preview": true}'),
    ("POST", f"{G}/undo", None),
    ("GET", f"{G}/diff?from=0&to=4", None),
    ("GET", f"{G}/export?format=kgx-jsonl", None),
    ("DELETE", f"{G}/nodes/A:1", None),
    ("GET", f"{G}/state", None),
]

VOLATILE = {"createdAt", "updatedAt", "lastUpdated", "created_at", "updated_at"}


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


@contextmanager
def _client(url: str, home: Path) -> Iterator[TestClient]:
    database = Database(url)
    app = create_app(Settings(home=home, database_url=url), database=database)
    with TestClient(app, raise_server_exceptions=False) as client:
        client.headers["Authorization"] = f"Bearer {app.state.auth_service.mint(label='p')}"
        yield client
    database.dispose()


def _answers(client: TestClient) -> list[tuple[int, Any]]:
    answers = []
    for method, path, body in CASES:
        content = body.encode() if body is not None else None
        headers = {"content-type": "application/json"} if body is not None else {}
        response = client.request(method, path, content=content, headers=headers)
        try:
            payload = response.json()
        except json.JSONDecodeError:
            payload = response.text
        if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
            payload = {"error": payload["error"].get("code")}  # wording may name the backend
        answers.append((response.status_code, _stable(payload)))
    return answers


def test_sqlite_and_postgresql_answer_every_edge_case_alike(tmp_path: Path) -> None:
    with _client(f"sqlite:///{tmp_path / 'p.db'}", tmp_path / "a") as client:
        on_sqlite = _answers(client)
    with pg_schema_url() as url, _client(url, tmp_path / "b") as client:
        on_postgres = _answers(client)
    differences = [
        (case[:2], lite, pg)
        for case, lite, pg in zip(CASES, on_sqlite, on_postgres, strict=True)
        if lite != pg
    ]
    assert not differences, json.dumps(differences, indent=1, ensure_ascii=False)[:6000]
    assert all(status < 500 for status, _ in on_sqlite), on_sqlite


# -- NUL in every text field of every route, generated from the OpenAPI document -------------

NUL_TEXT = "a\x00b"
NOT_REST = ("/a2a", "/.well-known/")  # A2A's own NUL rule is tested in tests/a2a


def _resolve(schema: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _text_paths(
    schema: dict[str, Any], document: dict[str, Any], depth: int = 0
) -> Iterator[list[str | int]]:
    """Paths (keys and list indexes) to every string a JSON body of `schema` may hold."""
    schema = _resolve(schema, document)
    if depth > 4:
        return
    for option in schema.get("anyOf", []) + schema.get("oneOf", []):
        yield from _text_paths(option, document, depth + 1)
    if schema.get("type") == "string":
        yield []
    for name, child in schema.get("properties", {}).items():
        for rest in _text_paths(child, document, depth + 1):
            yield [name, *rest]
    if schema.get("type") == "array" and "items" in schema:
        for rest in _text_paths(schema["items"], document, depth + 1):
            yield [0, *rest]


def _holding(path: list[str | int], text: str) -> Any:
    value: Any = text
    for step in reversed(path):
        value = [value] if isinstance(step, int) else {step: value}
    return value


Case = tuple[str, str, str | None, str]


def _text_cases(document: dict[str, Any], text: str = NUL_TEXT) -> list[Case]:
    """(method, url, JSON body, the field named in the refusal) for every text field: `text` in
    each JSON body's field, and a NUL in each path and query parameter."""
    cases = []
    for template, operations in document["paths"].items():
        if template.startswith(NOT_REST):
            continue
        for method, operation in operations.items():
            parameters = operation.get("parameters", [])
            names = [p["name"] for p in parameters if p["in"] == "path"]
            url = template
            for name in names:
                url = url.replace(f"{{{name}}}", "x")
            for name in names:
                cases.append((method, template.replace(f"{{{name}}}", "a%00b"), None, name))
            for parameter in parameters:
                if parameter["in"] == "query" and any(
                    True for _ in _text_paths(parameter.get("schema", {}), document)
                ):
                    name = parameter["name"]
                    cases.append((method, f"{url}?{name}=a%00b", None, name))
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            for path in _text_paths(body.get("schema", {}) if body else {}, document):
                where = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path)
                cases.append((method, url, json.dumps(_holding(path, text)), where.lstrip(".")))
    return cases


def _text_answers(client: TestClient, cases: list[Case]) -> list[Any]:
    answers = []
    for method, url, body, _ in cases:
        headers = {"content-type": "application/json"} if body is not None else {}
        response = client.request(method, url, content=body, headers=headers)
        answers.append((response.status_code, response.json()))
    return answers


def _on_both_backends(
    tmp_path: Path, cases_of: Callable[[dict[str, Any]], list[Case]]
) -> tuple[list[Case], list[Any], list[Any]]:
    """The cases made from the OpenAPI document, and the answers of SQLite and PostgreSQL."""
    with _client(f"sqlite:///{tmp_path / 'p.db'}", tmp_path / "a") as client:
        cases = cases_of(client.app.openapi())
        on_sqlite = _text_answers(client, cases)
    with pg_schema_url() as url, _client(url, tmp_path / "b") as client:
        on_postgres = _text_answers(client, cases)
    return cases, on_sqlite, on_postgres


def test_a_nul_in_any_text_field_of_any_route_is_refused_alike(tmp_path: Path) -> None:
    cases, on_sqlite, on_postgres = _on_both_backends(tmp_path, _text_cases)
    assert len(cases) > 100  # every route's fields, not a sample
    assert on_sqlite == on_postgres
    wrong = [
        (case, answer)
        for case, answer in zip(cases, on_sqlite, strict=True)
        if answer[0] != 422
        or "NUL" not in answer[1]["error"]["message"]
        or f"'{case[3]}'" not in answer[1]["error"]["message"]
    ]
    assert not wrong, json.dumps(wrong[:20], indent=1)


# -- lone surrogates in every text field of every JSON body -----------------------------------

SURROGATE_TEXT = "a\ud800b"  # JSON spells it "a\\ud800b": no Unicode text, so not UTF-8


def _surrogate_cases(document: dict[str, Any]) -> list[Case]:
    return [case for case in _text_cases(document, SURROGATE_TEXT) if case[2] is not None]


def test_a_lone_surrogate_in_any_text_field_of_any_body_is_refused_alike(tmp_path: Path) -> None:
    """PostgreSQL refuses text that is not UTF-8, as it refuses NUL: no door may hand it over."""
    cases, on_sqlite, on_postgres = _on_both_backends(tmp_path, _surrogate_cases)
    assert len(cases) > 50
    differences = [
        (case[:2], case[3], lite, pg)
        for case, lite, pg in zip(cases, on_sqlite, on_postgres, strict=True)
        if lite != pg
    ]
    assert not differences, json.dumps(differences[:20], indent=1)
    # Refused before anything is stored (by the body's parser or the route's own check), or
    # answered as the rest of the request deserves; never a database error.
    assert all(status < 500 for status, _ in on_sqlite), on_sqlite
