"""Inputs that once broke or stalled a graph: over-long fields, deep or huge `data`, numbers JSON
cannot round-trip, NUL and lone surrogates, 64-bit numbers in paths. Each gets a 422 that names
the field and the limit, on both backends, and leaves the stored graph readable and unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphwright.errors import InvalidInput
from graphwright.graphmode.limits import GraphLimits
from graphwright.graphmode.schemas import NodeInput
from graphwright.graphmode.service import GraphService

BASE = "/api/graph/c1"


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


def raw_post(client: TestClient, path: str, auth: dict[str, str], body: str) -> Any:
    headers = {**auth, "content-type": "application/json"}
    return client.post(path, headers=headers, content=body.encode("utf-8", "surrogatepass"))


def seeded(client: TestClient, auth: dict[str, str]) -> dict[str, Any]:
    """A graph with two versions, and every read of it as it stands."""
    for node_id in ("A:1", "A:2"):
        response = client.post(
            f"{BASE}/nodes", headers=auth, json={"id": node_id, "label": node_id, "type": "gene"}
        )
        assert response.status_code == 201, response.text
    return readable(client, auth)


def readable(client: TestClient, auth: dict[str, str]) -> dict[str, Any]:
    reads = {}
    for path in ("state", "export", "history", "versions/1", "versions/2", "diff?from=0&to=2"):
        response = client.get(f"{BASE}/{path}", headers=auth)
        assert response.status_code == 200, (path, response.text)
        body = response.json()
        if isinstance(body, dict) and "data" in body:
            body = body["data"]
        if path == "state":
            body["metadata"].pop("lastUpdated")
        reads[path] = body
    return reads


# Each case: a path, a JSON body as text, and words the error message must contain.
LONG_ID = "X:" + "1" * 600
REFUSED = [
    ("nodes", json.dumps({"id": LONG_ID, "label": "a", "type": "gene"}), ["id", "500"]),
    ("nodes", json.dumps({"label": "a" * 10_001, "type": "gene"}), ["label", "10000"]),
    ("nodes", json.dumps({"label": "a", "type": "t" * 201}), ["type", "200"]),
    ("nodes", json.dumps({"label": "a", "type": "g", "data": nested(40)}), ["data", "depth"]),
    ("nodes", json.dumps({"label": "a", "type": "g", "data": nested(256)}), ["data", "depth"]),
    ("nodes", '{"label": "a", "type": "g", "data": {"n": 18446744073709551617}}', ["data.n"]),
    ("nodes", '{"label": "a", "type": "g", "data": {"n": -9223372036854775809}}', ["data.n"]),
    ("nodes", '{"label": "a", "type": "g", "data": {"n": NaN}}', ["data.n"]),
    ("nodes", '{"label": "a", "type": "g", "data": {"n": Infinity}}', ["data.n"]),
    ("nodes", '{"label": "a\\u0000b", "type": "gene"}', ["label", "NUL"]),
    ("nodes", '{"id": "A:\\u00003", "label": "a", "type": "gene"}', ["id", "NUL"]),
    ("nodes", '{"label": "a", "type": "g", "data": {"x\\u0000": 1}}', ["data", "NUL"]),
    ("nodes", '{"label": "a", "type": "g", "data": {"x": ["\\u0000"]}}', ["data.x[0]", "NUL"]),
    ("nodes", '{"label": "a\\ud800", "type": "gene"}', ["label"]),
    ("nodes", '{"label": "a", "type": "g", "data": {"s": "\\udfff"}}', ["data"]),
    ("edges", json.dumps({"source": "A:1", "target": "A:2", "label": "l" * 10_001}), ["label"]),
    ("edges", '{"source": "A:1", "target": "A:2", "label": "x\\u0000"}', ["label", "NUL"]),
    ("edges", json.dumps({"id": "e" * 501, "source": "A:1", "target": "A:2"}), ["id", "500"]),
]


@pytest.mark.parametrize(("path", "body", "words"), REFUSED)
def test_refused_write_names_the_problem_and_leaves_the_graph_as_it_was(
    client: TestClient, auth: dict[str, str], path: str, body: str, words: list[str]
) -> None:
    before = seeded(client, auth)
    response = raw_post(client, f"{BASE}/{path}", auth, body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    for word in words:
        assert word in error["message"], (word, error["message"])
    assert readable(client, auth) == before
    # Undo still reaches the earlier versions, and they stay readable.
    assert client.post(f"{BASE}/undo", headers=auth).status_code == 200
    assert client.get(f"{BASE}/versions/2", headers=auth).status_code == 200


@pytest.mark.parametrize(
    "patch",
    [
        '{"data": {"deep": ' + json.dumps(nested(300)) + "}}",
        '{"data": {"n": 123456789012345678901234567890}}',
        '{"label": "bad\\u0000label"}',
    ],
)
def test_refused_patch_leaves_the_graph_readable(
    client: TestClient, auth: dict[str, str], patch: str
) -> None:
    before = seeded(client, auth)
    headers = {**auth, "content-type": "application/json"}
    response = client.patch(f"{BASE}/nodes/A:1", headers=headers, content=patch.encode())
    assert response.status_code == 422, response.text
    assert readable(client, auth) == before


def test_import_and_batch_are_checked_too(client: TestClient, auth: dict[str, str]) -> None:
    before = seeded(client, auth)
    graph = {"nodes": [{"id": "B:1", "name": "b", "data": nested(300)}], "links": []}
    response = client.post(f"{BASE}/import", headers=auth, json={"graph": graph})
    assert response.status_code == 422, response.text
    long_id = {"nodes": [{"id": "B:" + "9" * 1000, "name": "b"}], "links": []}
    response = client.post(f"{BASE}/import", headers=auth, json={"graph": long_id})
    assert response.status_code == 422 and "500" in response.json()["error"]["message"]
    op = {"op": "addNode", "node": {"label": "x\u0000", "type": "gene"}}
    response = client.post(f"{BASE}/batch", headers=auth, json={"operations": [op]})
    assert response.status_code == 422, response.text
    assert readable(client, auth) == before


def test_limits_are_settings_and_bulk_calls_are_bounded(service: GraphService) -> None:
    service.limits = GraphLimits(max_id_length=10, max_bulk_items=3)
    with pytest.raises(InvalidInput, match=r"id.*10"):
        service.add_node("c", NodeInput(id="A:12345678901", label="a", type="g"), actor="t")
    nodes = [NodeInput(label=f"n{i}", type="g") for i in range(4)]
    with pytest.raises(InvalidInput, match=r"nodes.*3"):
        service.add_nodes("c", nodes, actor="t")
    assert service.add_nodes("c", nodes[:3], actor="t").version == 1


def test_a_huge_id_is_refused_before_it_reaches_the_database(service: GraphService) -> None:
    huge = "A:" + "1" * 40_000_000
    with pytest.raises(InvalidInput, match="500"):
        service.add_node("c", NodeInput(id=huge, label="a", type="g"), actor="t")
    assert service.version("c") == 0


@pytest.mark.parametrize(
    "path",
    [
        "/api/conversations?offset=99999999999999999999",
        "/api/conversations?limit=99999999999999999999",
        f"{BASE}/history/15847726399764563968",
        f"{BASE}/versions/15847726399764563968",
        f"{BASE}/history?offset=99999999999999999999",
        f"{BASE}/state?offset=99999999999999999999",
        f"{BASE}/diff?from=0&to=99999999999999999999",
    ],
)
def test_numbers_past_64_bits_in_paths_and_queries_give_422(
    client: TestClient, auth: dict[str, str], path: str
) -> None:
    seeded(client, auth)
    response = client.get(path, headers=auth)
    assert response.status_code == 422, response.text
    assert response.json()["success"] is False


def test_a_mistyped_conversation_id_with_nul_gives_422(
    client: TestClient, auth: dict[str, str]
) -> None:
    for method, path in (("GET", "/api/graph/a%00b/state"), ("POST", "/api/graph/a%00b/undo")):
        response = client.request(method, path, headers=auth)
        assert response.status_code == 422, (path, response.text)


@pytest.mark.parametrize(
    ("path", "named"),
    [
        (f"{BASE}/state?ids=", "ids"),
        (f"{BASE}/state?ids=,,", "ids"),
        (f"{BASE}/state?nodeTypes=", "nodeTypes"),
        (f"{BASE}/state?edgeTypes=&ids=A:1", "edgeTypes"),
        (f"{BASE}/search?q=A&types=", "types"),
    ],
)
def test_a_list_filter_given_with_nothing_in_it_names_itself(
    client: TestClient, auth: dict[str, str], path: str, named: str
) -> None:
    """`?ids=` filtered by no id at all and answered with an empty graph, as if the graph had
    none: a mistake to say, not a filter to apply (schemathesis's negative_data_rejection)."""
    seeded(client, auth)
    response = client.get(path, headers=auth)
    assert response.status_code == 422, response.text
    assert f"'{named}'" in response.json()["error"]["message"]


@pytest.mark.parametrize("y", [False, True, "3", None])
def test_a_position_takes_numbers_only(client: TestClient, auth: dict[str, str], y: Any) -> None:
    """`"y": false` was stored as 0.0 (schemathesis's negative_data_rejection)."""
    before = seeded(client, auth)
    node = {"label": "n", "type": "gene", "position": {"x": 1, "y": y}}
    for path, body in (
        (f"{BASE}/nodes", node),
        (f"{BASE}/batch", {"operations": [{"op": "addNode", "node": node}]}),
    ):
        response = client.post(path, headers=auth, json=body)
        assert response.status_code == 422, response.text
        assert "position" in response.json()["error"]["message"]
    assert readable(client, auth) == before
    moved = {"label": "m", "type": "gene", "position": {"x": 1, "y": 2.5}}
    assert client.post(f"{BASE}/nodes", headers=auth, json=moved).status_code == 201
