"""The A2A room's pure parts: the `a2aAgents` config, database URLs, parts and admission."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from a2a.types import Message, Part, Role
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from sqlalchemy.engine import make_url

from graphwright.a2a.parts import admit, from_proto, to_proto
from graphwright.a2a.tasks import _asyncpg_url
from graphwright.chat.config import McpConfigError, load_a2a_agents
from graphwright.chat.models import Mode
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, Artifact
from graphwright.core.artifacts import Part as CorePart
from graphwright.settings import Settings


def settings_with(tmp_path: Path, document: dict) -> Settings:
    (tmp_path / "mcp_servers.json").write_text(json.dumps(document))
    return Settings(home=tmp_path)


def test_a2a_agents_load_with_variables_and_skip_disabled_ones(tmp_path: Path) -> None:
    settings = settings_with(
        tmp_path,
        {
            "a2aAgents": {
                "peer": {"url": "https://peer.example/", "headers": {"Authorization": "${TOK}"}},
                "off": {"url": "https://off.example/", "headers": {"X": "${UNSET}"}, "disabled": 1},
            }
        },
    )
    agents = load_a2a_agents(settings, environ={"TOK": "Bearer abc"})
    assert list(agents) == ["peer"]
    assert agents["peer"].headers == {"Authorization": "Bearer abc"}
    with pytest.raises(McpConfigError, match=r"\$\{TOK\}"):
        load_a2a_agents(settings, environ={})


def test_an_agent_named_like_an_mcp_server_or_without_url_is_refused(tmp_path: Path) -> None:
    clash = settings_with(tmp_path, {"a2aAgents": {"kg": {"url": "https://x.example"}}})
    with pytest.raises(McpConfigError, match="kg names both"):
        load_a2a_agents(clash, environ={})
    no_url = settings_with(tmp_path, {"a2aAgents": {"peer": {"headers": {}}}})
    with pytest.raises(McpConfigError, match="url"):
        load_a2a_agents(no_url, environ={})


def test_postgres_url_options_become_asyncpg_server_settings() -> None:
    url, settings = _asyncpg_url(
        make_url(
            "postgresql+psycopg://u@h:5432/db?options=-csearch_path%3Ds1%20-c%20timezone%3DUTC"
        )
    )
    assert url.drivername == "postgresql+asyncpg" and "options" not in url.query
    assert settings == {"search_path": "s1", "timezone": "UTC"}
    plain, none = _asyncpg_url(make_url("postgresql://u@h/db?sslmode=require"))
    assert plain.query == {"sslmode": "require"} and none == {}


def test_artifacts_keep_their_media_types_and_version_in_a2a() -> None:
    graph = Artifact(
        artifact_id="g1",
        name="Knowledge Graph",
        parts=[CorePart(data={"nodes": [], "links": []}, media_type=KNOWLEDGE_GRAPH)],
    )
    proto = to_proto(graph, version=3)
    assert proto.parts[0].media_type == KNOWLEDGE_GRAPH
    assert proto.metadata["version"] == 3
    back = from_proto(proto)
    assert back.parts == graph.parts and back.artifact_id == "g1"
    citations = Artifact(parts=[CorePart(data=[{"pmid": "1"}], media_type=BIBLIOGRAPHY)])
    assert from_proto(to_proto(citations)).parts[0].data == [{"pmid": "1"}]


def message(*parts: Part, context_id: str = "", role: Role = Role.ROLE_USER) -> Message:
    return Message(message_id="m", context_id=context_id, parts=list(parts), role=role)


def test_admit_takes_text_and_graphs_and_names_what_it_refuses() -> None:
    graph = Part(media_type=KNOWLEDGE_GRAPH)
    graph.data.struct_value.update({"nodes": [{"id": "A:1", "name": "a"}], "links": []})
    found = admit(message(Part(text="/help"), graph), {"mode": "graph_mode"})
    assert found.text == "/help" and found.mode is Mode.GRAPH
    assert found.graphs[0]["nodes"][0]["id"] == "A:1"
    with pytest.raises(ContentTypeNotSupportedError, match="Part 2 is a url part"):
        admit(message(Part(text="x"), Part(url="https://x.example/a.pdf")), {})
    broken = Part(media_type=KNOWLEDGE_GRAPH)
    broken.data.struct_value.update({"nodes": [{"name": "no id"}]})
    with pytest.raises(ContentTypeNotSupportedError, match="not a valid knowledge graph"):
        admit(message(broken), {})
    with pytest.raises(InvalidParamsError, match="no text"):
        admit(message(Part(text="  ")), {})
    with pytest.raises(InvalidParamsError, match="contextId"):
        admit(message(Part(text="x"), context_id="a b"), {})
    with pytest.raises(InvalidParamsError, match="ROLE_AGENT"):
        admit(message(Part(text="x"), role=Role.ROLE_AGENT), {})


def test_a_malformed_json_rpc_request_is_logged_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

    from graphwright.a2a.api import ClientErrorsInOneLine

    logger = logging.getLogger(JsonRpcDispatcher.__module__)
    assert any(isinstance(f, ClientErrorsInOneLine) for f in logger.filters)
    with caplog.at_level(logging.WARNING, logger=logger.name):
        try:
            raise ValueError("id should be string or integer")
        except ValueError:
            logger.exception("Failed to validate base JSON-RPC request")
    [record] = caplog.records
    assert record.exc_info is None and record.levelname == "WARNING"
    assert record.getMessage().endswith("id should be string or integer")
