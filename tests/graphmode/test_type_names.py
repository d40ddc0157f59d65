"""Node types in one spelling, their Biolink class name, whoever writes them (issue 31, point 10).

`gene` and `Gene` used to make two legend entries. The service now stores every node type as its
Biolink class name, for REST, MCP tools and imports alike, and a migration tidies stored types.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from fastapi import FastAPI
from fastapi.testclient import TestClient

from graphwright.core.biolink import type_name
from graphwright.db import MIGRATIONS_DIR, Database
from tests.mcp.support import http_session, serving, text_of

BASE = "/api/graph/c1"
NOW = "2026-01-01 00:00:00"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("gene", "Gene"),
        ("Gene", "Gene"),
        ("biolink:Gene", "Gene"),
        (" gene ", "Gene"),
        ("GENE", "Gene"),
        ("small molecule", "SmallMolecule"),
        ("SmallMolecule", "SmallMolecule"),
        ("biolink:SmallMolecule", "SmallMolecule"),
        ("small_molecule", "SmallMolecule"),
        ("chemical entity", "ChemicalEntity"),
        ("other", "Other"),
        ("my custom thing", "MyCustomThing"),
        ("myCustom", "MyCustom"),
    ],
)
def test_type_name_is_the_biolink_class_or_tidy_pascal_case(raw: str, expected: str) -> None:
    assert type_name(raw) == expected


def test_every_rest_writer_stores_one_spelling(client: TestClient, auth: dict[str, str]) -> None:
    def add(node: dict) -> None:
        response = client.post(f"{BASE}/nodes", headers=auth, json=node)
        assert response.status_code == 201, response.text

    add({"id": "A:1", "label": "TP53", "type": "gene"})
    add({"id": "A:2", "label": "MYC", "type": "Gene"})
    add({"id": "A:3", "label": "aspirin", "type": "small molecule"})
    bulk = client.post(
        f"{BASE}/nodes/bulk",
        headers=auth,
        json={"nodes": [{"id": "A:4", "label": "EGFR", "type": "biolink:Gene"},
                        {"id": "A:5", "label": "ibuprofen", "type": "SmallMolecule"}]},
    )  # fmt: skip
    assert bulk.status_code == 201, bulk.text
    patched = client.patch(f"{BASE}/nodes/A:3", headers=auth, json={"type": " small_molecule "})
    assert patched.json()["data"]["type"] == "SmallMolecule"
    graph = {
        "nodes": [{"id": "A:6", "name": "KRAS", "category": ["biolink:Gene"]},
                  {"id": "A:7", "name": "glucose", "category": "biolink:SmallMolecule"},
                  {"id": "A:8", "name": "HeLa", "category": "cell line"}],
        "links": [],
    }  # fmt: skip
    imported = client.post(f"{BASE}/import", headers=auth, json={"graph": graph})
    assert imported.status_code == 200, imported.text
    blank = client.post(f"{BASE}/nodes", headers=auth, json={"label": "x", "type": "  "})
    assert blank.status_code == 422 and "type" in blank.text

    summary = client.get(f"{BASE}/summary", headers=auth).json()["data"]
    assert summary["nodeTypes"] == {"Gene": 4, "SmallMolecule": 3, "CellLine": 1}
    # A filter in any spelling finds the nodes of that type.
    genes = client.get(f"{BASE}/state?nodeTypes=gene", headers=auth).json()["data"]
    assert sorted(n["id"] for n in genes["nodes"]) == ["A:1", "A:2", "A:4", "A:6"]
    # Merging keeps the one spelling too.
    merged = client.post(
        f"{BASE}/merge-nodes", headers=auth, json={"keep": "A:1", "remove": ["A:2"]}
    )
    assert merged.json()["data"]["type"] == "Gene"


async def test_mcp_tools_store_one_spelling(tmp_path: Path, app: FastAPI) -> None:
    token = app.state.auth_service.mint(conversation_id="conv-mcp", label="chat")
    async with serving(app) as base, http_session(f"{base}/mcp/graph", token) as session:
        context = {"conversationId": "conv-mcp", "apiBaseUrl": base, "accessToken": token}
        for label, kind in (
            ("TP53", "gene"),
            ("MYC", "biolink:Gene"),
            ("aspirin", "small molecule"),
        ):
            result = await session.call_tool(
                "addNode", {"label": label, "type": kind, "databaseContext": context}
            )
            assert not result.is_error, text_of(result)
        many = await session.call_tool(
            "addMultipleNodes",
            {"nodes": [{"label": "EGFR", "type": " GENE "}], "databaseContext": context},
        )
        assert not many.is_error, text_of(many)
    summary = app.state.graph_service.summary("conv-mcp")
    assert summary.node_types == {"Gene": 3, "SmallMolecule": 1}


def test_migration_tidies_stored_types(database_url: str) -> None:
    database = Database(database_url, migrate=False)
    try:
        with database.engine.begin() as conn:
            config = Config()
            config.set_main_option("script_location", str(MIGRATIONS_DIR))
            config.attributes["connection"] = conn
            command.upgrade(config, "graphmode_0001")
            conn.execute(
                sa.text(
                    "INSERT INTO graph_projects (id, conversation_id, version, created_at, "
                    "updated_at) VALUES (1, 'c1', 1, :now, :now)"
                ),
                {"now": NOW},
            )
            kinds = ["gene", "Gene", "biolink:Gene", " gene ", "small molecule",
                     "biolink:SmallMolecule", "cell line"]  # fmt: skip
            for index, kind in enumerate(kinds):
                conn.execute(
                    sa.text(
                        "INSERT INTO graph_nodes (project_id, id, label, type, data, "
                        "created_version, created_at, updated_at) VALUES "
                        "(1, :id, :id, :type, '{}', 1, :now, :now)"
                    ),
                    {"id": f"N:{index}", "type": kind, "now": NOW},
                )
            conn.execute(
                sa.text(
                    "INSERT INTO graph_node_stash (project_id, stash_version, id, label, "
                    "type, data, created_version, created_at, updated_at) VALUES "
                    "(1, 1, 'S:1', 'S', 'gene', '{}', 1, :now, :now)"
                ),
                {"now": NOW},
            )
        database.migrate()
        with database.engine.connect() as conn:
            stored = conn.execute(
                sa.text("SELECT type, count(*) FROM graph_nodes GROUP BY type")
            ).all()
            stashed = conn.execute(sa.text("SELECT type FROM graph_node_stash")).scalars().all()
    finally:
        database.dispose()
    assert dict(stored) == {"Gene": 4, "SmallMolecule": 2, "CellLine": 1}
    assert stashed == ["Gene"]
