"""The knowledge base through its adapters: REST (with the SPARQL 1.1 Protocol endpoint), MCP
over real client sessions (streamable HTTP and stdio), Graph Mode publishing, and the CLI."""

from __future__ import annotations

import asyncio
import csv
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import httpx
import orjson
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.errors import Unauthorized
from graphwright.knowledge import vocab
from graphwright.knowledge.tools import READER_PURPOSE, READER_SCOPE
from graphwright.settings import Settings
from tests.conftest import free_port
from tests.knowledge.conftest import DRUGS, kb_settings
from tests.mcp.support import http_session, serving, stdio_session, text_of

GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"
PATTERN = vocab.CURRENT_PATTERN
PUBLICATIONS = "https://w3id.org/biolink/vocab/publications"


@pytest.fixture(params=["embedded", "oxigraph-server"])
def settings(request: pytest.FixtureRequest, tmp_path: Path, database_url: str) -> Settings:
    return kb_settings(request.param, tmp_path, database_url, request)


@pytest.fixture
def app(settings: Settings, database: Database) -> FastAPI:
    return create_app(settings, database=database)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def auth(app: FastAPI) -> dict[str, str]:
    return {"Authorization": f"Bearer {app.state.auth_service.mint(label='alice')}"}


def publish(client: TestClient, auth: dict[str, str], content: Any) -> str:
    created = client.post("/api/knowledge/requests", headers=auth, json={"content": content})
    assert created.status_code == 201, created.text
    request_id = created.json()["data"]["id"]
    approved = client.post(f"/api/knowledge/requests/{request_id}/approve", headers=auth)
    assert approved.status_code == 200, approved.text
    assert approved.json()["data"]["decidedBy"] == "alice"
    return approved.json()["data"]["ual"]


def test_every_knowledge_route_needs_a_token(client: TestClient) -> None:
    for method, path in [
        ("GET", "/api/knowledge/assets"),
        ("GET", "/api/knowledge/sparql?query=ASK%7B%7D"),
        ("POST", "/api/knowledge/requests"),
        ("GET", "/api/knowledge/requests"),
        ("POST", "/api/knowledge/requests/x/approve"),
    ]:
        assert client.request(method, path, json={}).status_code == 401, path


def test_publish_get_metadata_and_query_over_rest(client: TestClient, auth: dict[str, str]) -> None:
    ual = publish(client, auth, DRUGS)
    listed = client.get("/api/knowledge/assets", headers=auth).json()["data"]
    assert [item["ual"] for item in listed] == [ual]

    document = client.get(f"/api/knowledge/assets/{ual}/1", headers=auth).json()["data"]
    assert document["name"] == "aspirin"
    nquads = client.get(f"/api/knowledge/assets/{ual}", headers=auth, params={"format": "nquads"})
    assert nquads.headers["content-type"].startswith("application/n-quads")
    assert '"metformin"' in nquads.text

    metadata = client.get(f"/api/knowledge/metadata/{ual}", headers=auth).json()["data"]
    assert metadata["approvedBy"] == "alice" and metadata["knowledgeAssets"][0] == f"{ual}/1"
    assert client.get(f"/api/knowledge/metadata/{ual[:-1]}9", headers=auth).status_code == 404


def test_sparql_protocol_answers_in_each_format(client: TestClient, auth: dict[str, str]) -> None:
    publish(client, auth, DRUGS)
    select = "SELECT ?s ?o WHERE { GRAPH ?g { ?s <http://schema.org/name> ?o } } ORDER BY ?o"
    as_json = client.get("/api/knowledge/sparql", params={"query": select}, headers=auth)
    assert as_json.headers["content-type"].startswith("application/sparql-results+json")
    bindings = as_json.json()["results"]["bindings"]
    assert [b["o"]["value"] for b in bindings] == ["aspirin", "metformin"]

    as_xml = client.post(
        "/api/knowledge/sparql",
        content=select,
        headers={**auth, "Content-Type": "application/sparql-query",
                 "Accept": "application/sparql-results+xml"},
    )  # fmt: skip
    assert len(ElementTree.fromstring(as_xml.content).findall(".//{*}result")) == 2
    as_csv = client.post(
        "/api/knowledge/sparql", data={"query": select}, headers={**auth, "Accept": "text/csv"}
    )
    assert [row["o"] for row in csv.DictReader(io.StringIO(as_csv.text))] == [
        "aspirin",
        "metformin",
    ]
    as_tsv = client.get(
        "/api/knowledge/sparql",
        params={"query": select},
        headers={**auth, "Accept": "text/tab-separated-values"},
    )
    assert as_tsv.text.splitlines()[0] == "?s\t?o"
    ask = client.get("/api/knowledge/sparql", params={"query": "ASK { GRAPH ?g { ?s ?p ?o } }"},
                     headers=auth)  # fmt: skip
    assert ask.json() == {"head": {}, "boolean": True}
    construct = client.get(
        "/api/knowledge/sparql",
        params={"query": "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"},
        headers={**auth, "Accept": "text/turtle"},
    )
    assert (
        construct.headers["content-type"].startswith("text/turtle") and "aspirin" in construct.text
    )


@pytest.mark.parametrize(
    ("query", "status"),
    [("SELECT ?x WHERE {", 400), ("DELETE WHERE { ?s ?p ?o }", 400), ("ASK {}", 406)],
)
def test_sparql_protocol_errors(
    client: TestClient, auth: dict[str, str], query: str, status: int
) -> None:
    accept = "image/png" if status == 406 else "application/sparql-results+json"
    response = client.get(
        "/api/knowledge/sparql", params={"query": query}, headers={**auth, "Accept": accept}
    )
    assert response.status_code == status
    assert response.json()["success"] is False


def test_a_scoped_token_files_requests_but_cannot_approve(
    client: TestClient, app: FastAPI, auth: dict[str, str]
) -> None:
    scoped = {"Authorization": f"Bearer {app.state.auth_service.mint(conversation_id='c1')}"}
    created = client.post("/api/knowledge/requests", headers=scoped, json={"content": DRUGS})
    request_id = created.json()["data"]["id"]
    refused = client.post(f"/api/knowledge/requests/{request_id}/approve", headers=scoped)
    assert refused.status_code == 403
    mine = client.get("/api/knowledge/requests", headers=scoped).json()["data"]
    assert [r["id"] for r in mine["requests"]] == [request_id] and mine["total"] == 1
    rejected = client.post(
        f"/api/knowledge/requests/{request_id}/reject", headers=auth, json={"reason": "dupe"}
    )
    assert rejected.json()["data"]["status"] == "rejected"
    again = client.post(f"/api/knowledge/requests/{request_id}/approve", headers=auth)
    assert again.status_code == 409
    listed = client.get("/api/knowledge/requests", headers=auth, params={"status": "rejected"})
    assert listed.json()["data"]["requests"][0]["reason"] == "dupe"
    one = client.get(f"/api/knowledge/requests/{request_id}", headers=scoped)
    assert one.json()["data"]["status"] == "rejected"


def test_private_triples_stay_with_the_conversation_that_published_them(
    client: TestClient, app: FastAPI, auth: dict[str, str]
) -> None:
    """Issue 29, M1: a token limited to conversation A cannot read the private part of an
    asset that conversation B published, in either format; B and an unlimited token can."""
    mint = app.state.auth_service.mint
    a, b = ({"Authorization": f"Bearer {mint(conversation_id=c)}"} for c in ("a", "b"))
    secret = {**DRUGS[0], "description": "internal trial note"}
    created = client.post(
        "/api/knowledge/requests",
        headers=b,
        json={"content": {"public": DRUGS[0], "private": secret}},
    )
    request_id = created.json()["data"]["id"]
    approved = client.post(f"/api/knowledge/requests/{request_id}/approve", headers=auth)
    ual = approved.json()["data"]["ual"]
    for fmt in ("jsonld", "nquads"):
        url, params = f"/api/knowledge/assets/{ual}", {"format": fmt, "includePrivate": "true"}
        refused = client.get(url, headers=a, params=params)
        assert refused.status_code == 403 and "internal trial note" not in refused.text
        assert "internal trial note" not in client.get(url, headers=a, params={"format": fmt}).text
        for reader in (b, auth):
            allowed = client.get(url, headers=reader, params=params)
            assert allowed.status_code == 200 and "internal trial note" in allowed.text


def test_a_graph_mode_graph_publishes_and_queries_back(
    client: TestClient, auth: dict[str, str]
) -> None:
    base = "/api/graph/conv1"
    for node in (
        {"id": "NCBIGene:7157", "label": "TP53", "type": "biolink:Gene"},
        {"id": "MONDO:0007254", "label": "breast cancer", "type": "biolink:Disease"},
        {"id": "CHEBI:15365", "label": "aspirin", "type": "biolink:Drug"},
    ):
        assert client.post(f"{base}/nodes", headers=auth, json=node).status_code == 201
    edge = {
        "source": "NCBIGene:7157",
        "target": "MONDO:0007254",
        "label": "associated with",
        "type": "biolink:gene_associated_with_condition",
        "data": {"evidence": ["PMID:123"]},
    }
    assert client.post(f"{base}/edges", headers=auth, json=edge).status_code == 201

    created = client.post(
        "/api/knowledge/requests/from-graph/conv1",
        headers=auth,
        json={"nodeIds": ["NCBIGene:7157", "MONDO:0007254"]},
    )
    assert created.status_code == 201, created.text
    request = created.json()["data"]
    assert request["source"] == "graph mode" and request["status"] == "pending"
    approved = client.post(f"/api/knowledge/requests/{request['id']}/approve", headers=auth)
    assert approved.status_code == 200, approved.text

    query = """SELECT ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } FILTER(CONTAINS(STR(?s), "7157")) }"""
    rows = client.get("/api/knowledge/sparql", params={"query": query}, headers=auth).json()
    values = {b["o"]["value"] for b in rows["results"]["bindings"]}
    assert "TP53" in values
    assert any("MONDO" in value for value in values), values  # the edge, as a property
    evidence = client.get(
        "/api/knowledge/sparql",
        params={"query": f"SELECT ?e WHERE {{ GRAPH ?g {{ ?st <{PUBLICATIONS}> ?e }} }}"},
        headers=auth,
    ).json()["results"]["bindings"]
    assert [b["e"]["value"] for b in evidence] and "123" in evidence[0]["e"]["value"]
    assert not any("CHEBI" in value for value in values)  # not selected, not published


async def test_mcp_tools_over_streamable_http(app: FastAPI) -> None:
    token = app.state.auth_service.mint(label="model")
    async with serving(app) as url, http_session(f"{url}/mcp/knowledge", token) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"dkg-get", "dkg-create", "dkg-sparql-query",
                              "dkg_get_asset_metadata"}  # fmt: skip
        for name, tool in tools.items():
            assert tool.output_schema is not None, name
            assert tool.annotations and tool.annotations.read_only_hint is (name != "dkg-create")

        created = await session.call_tool("dkg-create", {"jsonld": DRUGS, "title": "drugs"})
        assert not created.is_error, text_of(created)
        assert "waiting for a person" in text_of(created)
        request_id = created.structured_content["id"]
        empty = await session.call_tool("dkg-sparql-query", {"query": PATTERN})
        assert empty.structured_content["rows"] == []  # nothing published by the model

        service = app.state.knowledge_service
        published = await service.approve(request_id, approver="alice")
        answer = await session.call_tool("dkg-sparql-query", {"query": PATTERN, "limit": 2})
        assert (
            len(answer.structured_content["rows"]) == 2 and answer.structured_content["truncated"]
        )
        assert "cut at 2 rows" in text_of(answer)
        got = await session.call_tool("dkg-get", {"ual": f"{published.ual}/1"})
        assert '"aspirin"' in text_of(got)
        meta = await session.call_tool("dkg_get_asset_metadata", {"ual": published.ual})
        assert meta.structured_content["approvedBy"] == "alice"
        bad = await session.call_tool(
            "dkg-sparql-query", {"query": "INSERT DATA { <a:b> <a:c> <a:d> }"}
        )
        assert bad.is_error and "update" in text_of(bad)
        bad_jsonld = await session.call_tool("dkg-create", {"jsonld": {"name": "x"}})
        assert bad_jsonld.is_error and "no triple" in text_of(bad_jsonld)


def _env(settings: Settings) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "GRAPHWRIGHT_HOME": str(settings.home),
        "GRAPHWRIGHT_DATABASE_URL": settings.resolved_database_url,
        "GRAPHWRIGHT_KB_SAMPLE_DATA": "false",
    }
    if settings.sparql_url:
        env["GRAPHWRIGHT_SPARQL_URL"] = settings.sparql_url
        env["GRAPHWRIGHT_SPARQL_UPDATE_URL"] = settings.sparql_update_url or ""
    return env


def _cli(
    env: dict[str, str], *args: str, input_file: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GRAPHWRIGHT), "kb", *args], env=env, capture_output=True, text=True, timeout=120
    )


async def test_stdio_server_and_cli_share_the_knowledge_base(
    settings: Settings, tmp_path: Path
) -> None:
    env = _env(settings)
    source = tmp_path / "drugs.jsonld"
    source.write_bytes(orjson.dumps(DRUGS))
    published = _cli(env, "publish", str(source), "--title", "two drugs")
    assert published.returncode == 0, published.stderr
    ual = published.stdout.strip().splitlines()[-1]
    assert ual.startswith(f"did:dkg:{vocab.LOCAL_CHAIN}/")

    got = _cli(env, "get", f"{ual}/2")
    assert orjson.loads(got.stdout)["name"] == "metformin"
    query = _cli(env, "query", PATTERN, "--json")
    assert len(orjson.loads(query.stdout)["results"]["bindings"]) == 6
    meta = _cli(env, "metadata", ual)
    assert orjson.loads(meta.stdout)["approvedBy"].startswith("cli:")
    export = _cli(env, "export", "-o", str(tmp_path / "kb.nq"))
    assert export.returncode == 0 and f"<{ual}/1/public>" in (tmp_path / "kb.nq").read_text()
    bad = _cli(env, "query", "DROP ALL")
    assert bad.returncode == 2 and "update" in bad.stderr
    missing = _cli(env, "get", f"{ual[:-1]}77")
    assert missing.returncode == 2 and "No knowledge collection" in missing.stderr

    async with stdio_session("knowledge", env) as session:
        created = await session.call_tool("dkg-create", {"jsonld": DRUGS[0]})
        request_id = created.structured_content["id"]
        answer = await session.call_tool("dkg-sparql-query", {"query": PATTERN})
        assert len(answer.structured_content["rows"]) == 6

    listed = _cli(env, "requests")
    assert request_id in listed.stdout
    approved = _cli(env, "approve", request_id)
    assert approved.returncode == 0, approved.stderr
    again = _cli(env, "approve", request_id)
    assert again.returncode == 2 and "already published" in again.stderr


def test_sample_data_answers_offline(tmp_path: Path, database: Database) -> None:
    settings = Settings(home=tmp_path / "home", database_url=database.url)
    app = create_app(settings, database=database)
    with TestClient(app) as client:
        auth = {"Authorization": f"Bearer {app.state.auth_service.mint()}"}
        listed = client.get("/api/knowledge/assets", headers=auth).json()["data"]
        assert len(listed) == 3 and all(item["synthetic"] for item in listed)
        drugs = client.get(
            "/api/knowledge/sparql",
            params={"query": "SELECT ?n WHERE { GRAPH ?g { ?d a <http://schema.org/Drug> ; "
                             "<http://schema.org/name> ?n } }"},
            headers=auth,
        ).json()["results"]["bindings"]  # fmt: skip
        assert len(drugs) == 10


async def test_the_chat_reads_the_running_apps_embedded_store(
    tmp_path: Path, database: Database
) -> None:
    """The chat runs `graphwright mcp knowledge` as a subprocess, which cannot open the store the
    app holds: it reads through the app's SPARQL endpoint instead, and files requests."""
    port = free_port()
    settings = Settings(home=tmp_path / "home", database_url=database.url, port=port, offline=True)
    app = create_app(settings, database=database)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.02)
        token = app.state.auth_service.mint(label="alice")
        first = f"did:dkg:{vocab.LOCAL_CHAIN}/{vocab.LOCAL_CONTRACT}/1"
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        ) as client:
            answer = await client.post(
                "/api/chat",
                json={"message": f"/knowledge.dkg_get_asset_metadata ual={first}", "stream": False},
            )
            assert answer.status_code == 200, answer.text
            text = orjson.dumps(answer.json()["data"]).decode()
            assert "graphwright sample data" in text, text
    finally:
        server.should_exit = True
        await task


def test_errors_come_when_the_request_is_made_not_later(
    client: TestClient, auth: dict[str, str]
) -> None:
    """Issue 29, low: an unknown revisionOf is refused when the request is filed (it used to
    fail at approval), and the metadata of an asset its collection does not hold is 404."""
    ual = publish(client, auth, DRUGS)
    never = ual.rsplit("/", 1)[0] + "/999"
    body = {"content": DRUGS[0], "revisionOf": never}
    refused = client.post("/api/knowledge/requests", headers=auth, json=body)
    assert refused.status_code == 422 and f"revisionOf: {never} names no collection" in refused.text
    revised = client.post("/api/knowledge/requests", headers=auth, json={**body, "revisionOf": ual})
    assert revised.status_code == 201, revised.text
    assert client.get(f"/api/knowledge/metadata/{ual}/2", headers=auth).status_code == 200
    missing = client.get(f"/api/knowledge/metadata/{ual}/3", headers=auth)
    assert missing.status_code == 404 and "holds 2 assets" in missing.text


def test_a_killed_servers_reader_token_is_revoked_when_the_next_one_starts(
    app: FastAPI, settings: Settings
) -> None:
    """Issue 29, low: a SIGKILLed server cannot revoke the token its knowledge tools read
    with; the next server on the same store does, so none is left active for good."""
    if settings.sparql_url:
        pytest.skip("only a server with the embedded store gives its tools a reader token")
    auth = app.state.auth_service
    label = f"chat: knowledge tools ({app.state.knowledge_service.backend.description})"
    leftover = auth.mint(conversation_id=READER_SCOPE, label=label, purpose=READER_PURPOSE)

    def readers() -> list[str]:
        now = datetime.now(UTC)
        tokens = auth.list_tokens(everything=True)
        return [t.state(now) for t in tokens if t.purpose == READER_PURPOSE]

    with TestClient(app):
        with pytest.raises(Unauthorized):
            auth.authenticate(leftover)
        assert sorted(readers()) == ["active", "revoked"]
    assert readers() == ["revoked", "revoked"]


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("@id", "http://example.org/<aspirin>", "Invalid IRI code point '<'"),
        ("name", {"@value": "aspirin", "@language": "en_US!"}, '"aspirin"@en_us!'),
        ("name", {"@value": "aspirin", "@language": "12-ab"}, "language code"),
    ],
)
def test_json_ld_that_n_quads_refuses_is_a_clear_422(
    client: TestClient, auth: dict[str, str], field: str, value: Any, named: str
) -> None:
    """Issue 29, low: an @id or a language tag that N-Quads refuses answered 500."""
    content = {**DRUGS[0], field: value}
    refused = client.post("/api/knowledge/requests", headers=auth, json={"content": content})
    assert refused.status_code == 422, refused.text
    assert named in refused.json()["error"]["message"]


def test_delete_sample_data_removes_the_sample_collections_only(
    app: FastAPI, client: TestClient, auth: dict[str, str]
) -> None:
    """Issue 31, point 17: the user removes the sample data; their own aspirin stays."""
    service = app.state.knowledge_service
    assert client.portal is not None
    assert client.portal.call(service.load_sample_data) == 3
    ours = publish(client, auth, DRUGS)
    scoped = app.state.auth_service.mint(conversation_id="c1", label="model")
    refused = client.delete(
        "/api/knowledge/sample-data", headers={"Authorization": f"Bearer {scoped}"}
    )
    assert refused.status_code == 403 and "Removing the sample data needs an unscoped token" in (
        refused.text
    )

    removed = client.delete("/api/knowledge/sample-data", headers=auth)
    assert removed.status_code == 200, removed.text
    titles = [c["title"] for c in removed.json()["data"]["removed"]]
    assert titles == [
        "Sample drugs and their targets",
        "Sample human genes",
        "Sample diseases and drugs used for them",
    ]
    assets = client.get("/api/knowledge/assets", headers=auth).json()["data"]
    assert [a["ual"] for a in assets] == [ours]
    page = client.get("/api/knowledge/requests?status=removed", headers=auth).json()["data"]
    assert page["total"] == 3 and {r["status"] for r in page["requests"]} == {"removed"}
    again = client.delete("/api/knowledge/sample-data", headers=auth)
    assert again.status_code == 200 and again.json()["data"]["removed"] == []
