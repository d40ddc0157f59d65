"""The MCP server file: Claude Desktop's format, ${VAR} expansion, graphwright's own servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphwright import mcp_registry
from graphwright.chat.config import McpConfigError, RemoteServer, StdioServer, load_mcp_servers
from graphwright.chat.mcp_manager import qualified_name
from graphwright.settings import Settings


def settings_with(tmp_path: Path, servers: dict | None = None, raw: str | None = None) -> Settings:
    path = tmp_path / "mcp_servers.json"
    if raw is not None:
        path.write_text(raw)
    elif servers is not None:
        path.write_text(json.dumps({"mcpServers": servers}))
    return Settings(home=tmp_path, mcp_config=path)


def test_own_servers_are_present_without_a_file(tmp_path: Path) -> None:
    servers = load_mcp_servers(settings_with(tmp_path), environ={})
    assert sorted(servers) == [n for n in mcp_registry.names() if n != "artifacts"]
    kg = servers["kg"]
    assert isinstance(kg, StdioServer)
    assert kg.args[-2:] == ["mcp", "kg"]
    assert kg.env["GRAPHWRIGHT_HOME"] == str(tmp_path.resolve())


def test_third_party_servers_expand_variables(tmp_path: Path) -> None:
    settings = settings_with(
        tmp_path,
        {
            "pubmed-mcp": {
                "command": "node",
                "args": ["${MCP_HOME}/pubmed/index.js"],
                "env": {"NCBI_API_KEY": "${KEY}"},
                "timeout": 5,
            },
            "remote": {
                "url": "https://mcp.example.org/${ROUTE}",
                "transport": "sse",
                "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
            },
        },
    )
    environ = {"MCP_HOME": "/opt/mcp", "KEY": "k1", "ROUTE": "mcp", "REMOTE_TOKEN": "t0"}
    servers = load_mcp_servers(settings, environ=environ)
    pubmed = servers["pubmed-mcp"]
    assert isinstance(pubmed, StdioServer)
    assert pubmed.args == ["/opt/mcp/pubmed/index.js"]
    assert pubmed.env == {"NCBI_API_KEY": "k1"}
    assert pubmed.timeout == 5
    remote = servers["remote"]
    assert isinstance(remote, RemoteServer)
    assert remote.url == "https://mcp.example.org/mcp"
    assert remote.transport == "sse"
    assert remote.headers == {"Authorization": "Bearer t0"}


def test_a_missing_variable_is_named(tmp_path: Path) -> None:
    settings = settings_with(
        tmp_path, {"x": {"command": "run", "env": {"K": "${NOT_SET_ANYWHERE}"}}}
    )
    with pytest.raises(McpConfigError, match=r"NOT_SET_ANYWHERE.*not set") as caught:
        load_mcp_servers(settings, environ={})
    assert "'x'" in str(caught.value)


def test_the_file_disables_and_adjusts_own_servers(tmp_path: Path) -> None:
    settings = settings_with(
        tmp_path,
        {
            "grants": {"disabled": True},
            "kg": {"timeout": 7, "env": {"EXTRA": "1"}},
            "off": {"command": "x", "env": {"K": "${UNSET}"}, "disabled": True},
        },
    )
    servers = load_mcp_servers(settings, environ={})
    assert "grants" not in servers and "off" not in servers
    kg = servers["kg"]
    assert isinstance(kg, StdioServer)
    assert kg.timeout == 7
    assert kg.env["EXTRA"] == "1" and "GRAPHWRIGHT_HOME" in kg.env


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"mcpServers": []}', "must look like"),
        ('{"mcpServers": {"x": {"args": ["a"]}}}', "server 'x': command"),
        ('{"mcpServers": {"x": {"url": "http://h", "transport": "ws"}}}', "transport"),
        ('{"mcpServers": {"x": {"command": "c", "timeout": -1}}}', "timeout"),
    ],
)
def test_bad_files_say_what_is_wrong(tmp_path: Path, raw: str, problem: str) -> None:
    with pytest.raises(McpConfigError, match=problem):
        load_mcp_servers(settings_with(tmp_path, raw=raw), environ={})


def test_remote_servers_default_to_streamable_http() -> None:
    server = RemoteServer(url="https://example.org/mcp")
    assert server.transport == "streamable-http" and server.timeout == 60


def test_model_facing_names_are_safe_and_short() -> None:
    assert qualified_name("my server", "get.thing") == "my_server__get_thing"
    assert len(qualified_name("s" * 50, "t" * 50)) == 64
