"""The MCP server list: Claude Desktop's `mcpServers` file, over graphwright's own servers.

The file (`settings.resolved_mcp_config`) has the format Claude Desktop and most MCP clients use:
`{"mcpServers": {name: {command, args, env, cwd, disabled, timeout}}}` for stdio servers and
`{url, transport: "streamable-http" | "sse", headers}` for remote ones. `${VAR}` anywhere in a
value expands from the environment; a variable that is not set stops start-up with an error that
names it. graphwright's own servers are always present; an entry of the same name adjusts one
(`{"kg": {"disabled": true}}` turns it off, `env` or `timeout` add to it).

Remote A2A agents sit beside them in the same file: `{"a2aAgents": {name: {url, headers,
timeout, disabled}}}`; their skills become the chat's tools as MCP servers' tools do.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, SecretStr, ValidationError

from graphwright import mcp_registry
from graphwright.errors import InvalidInput, problems
from graphwright.settings import Settings

DEFAULT_TIMEOUT_SECONDS = 60.0
# A knowledge-miner run is many model calls: it gets longer than one tool call.
OWN_TIMEOUTS = {"miner": 900.0}
SERVERS_KEY = "mcpServers"
AGENTS_KEY = "a2aAgents"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class McpConfigError(InvalidInput):
    """The MCP server file cannot be used as it is."""


class ServerBase(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    timeout: PositiveFloat = Field(
        default=DEFAULT_TIMEOUT_SECONDS, description="Seconds a tool call may take."
    )


class StdioServer(ServerBase):
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class RemoteServer(ServerBase):
    url: str
    transport: Literal["streamable-http", "sse"] = "streamable-http"
    headers: dict[str, str] = Field(default_factory=dict)


ServerConfig = StdioServer | RemoteServer


class A2AAgentConfig(ServerBase):
    """A remote A2A agent: the base URL its card is found under, and headers (a token)."""

    url: str
    headers: dict[str, str] = Field(default_factory=dict)


def load_mcp_servers(
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    *,
    own_env: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, ServerConfig]:
    """Every configured server that is not disabled, graphwright's own first. `own_env` adds
    variables to some of graphwright's own servers, by name (the config file still wins)."""
    environ = os.environ if environ is None else environ
    path = settings.resolved_mcp_config
    raw = _read_entries(path)
    disabled = {name for name, entry in raw.items() if entry.get("disabled")}
    # A disabled server's `${VAR}`s are never expanded, so it needs none of them set.
    entries = {
        name: _expand(entry, environ, where=f"server '{name}' in {path}")
        for name, entry in raw.items()
        if name not in disabled
    }
    servers: dict[str, ServerConfig] = {}
    for name, default in own_servers(settings).items():
        if name in disabled:
            continue
        override = entries.pop(name, {})
        extra = (own_env or {}).get(name, {})
        env = {**default["env"], **extra, **override.get("env", {})}
        servers[name] = _validated(path, name, {**default, **override, "env": env})
    for name, entry in entries.items():
        servers[name] = _validated(path, name, entry)
    return servers


def own_servers(settings: Settings) -> dict[str, dict[str, Any]]:
    """graphwright's own MCP servers, each run as `graphwright mcp NAME` over stdio, with this
    process's settings (which may not come from the environment)."""
    script = Path(sys.executable).with_name("graphwright")
    prefix = [str(script)] if script.exists() else [sys.executable, "-m", "graphwright"]
    env = _settings_env(settings)
    if "PYTHONPATH" in os.environ:  # the servers import the same graphwright as this process
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return {
        name: {
            "command": prefix[0],
            "args": [*prefix[1:], "mcp", name],
            "env": env,
            "timeout": OWN_TIMEOUTS.get(name, DEFAULT_TIMEOUT_SECONDS),
        }
        for name in mcp_registry.names()
        if name not in mcp_registry.NOT_IN_CHAT
    }


def _settings_env(settings: Settings) -> dict[str, str]:
    values = settings.model_dump(exclude_none=True)
    values["home"] = settings.home.resolve()
    values["database_url"] = settings.resolved_database_url
    env = {}
    for name, value in values.items():
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        text = orjson.dumps(value).decode() if isinstance(value, list | dict) else str(value)
        env[f"GRAPHWRIGHT_{name.upper()}"] = text
    return env


def load_a2a_agents(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> dict[str, A2AAgentConfig]:
    """The remote A2A agents of the same file (`a2aAgents`) that are not disabled. Their names
    share the MCP servers' namespace (`name__skill` tools), so a name used by both is refused."""
    environ = os.environ if environ is None else environ
    path = settings.resolved_mcp_config
    raw = _read_entries(path, AGENTS_KEY)
    taken = set(_read_entries(path)) | set(own_servers(settings))
    if clash := sorted(taken & raw.keys()):
        raise McpConfigError(
            f"MCP config {path}: {', '.join(clash)} names both an MCP server and an A2A agent; "
            "rename the agent"
        )
    return {
        name: _validated(
            path, name, _expand(entry, environ, where=f"agent '{name}' in {path}"), A2AAgentConfig
        )
        for name, entry in raw.items()
        if not entry.get("disabled")
    }


def _read_entries(path: Path, key: str = SERVERS_KEY) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    try:
        document = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise McpConfigError(f"MCP config {path} is not valid JSON: {exc}") from None
    entries = document.get(key, {}) if isinstance(document, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
        raise McpConfigError(
            f'MCP config {path} must look like {{"{key}": {{"name": {{...}}}}}}, '
            "one object per entry"
        )
    return entries


def _validated(
    path: Path, name: str, entry: dict[str, Any], model: type[ServerBase] | None = None
) -> Any:
    model = model or (RemoteServer if "url" in entry else StdioServer)
    try:
        return model.model_validate(entry)
    except ValidationError as exc:
        found = "; ".join(problems(exc.errors(), whole="entry"))
        raise McpConfigError(f"MCP config {path}, server '{name}': {found}") from None


def _expand(value: Any, environ: Mapping[str, str], *, where: str) -> Any:
    if isinstance(value, str):
        return _VARIABLE.sub(lambda match: _lookup(match.group(1), environ, where), value)
    if isinstance(value, list):
        return [_expand(item, environ, where=where) for item in value]
    if isinstance(value, dict):
        return {key: _expand(item, environ, where=where) for key, item in value.items()}
    return value


def _lookup(variable: str, environ: Mapping[str, str], where: str) -> str:
    if variable not in environ:
        raise McpConfigError(
            f"{where} uses ${{{variable}}}, but the environment variable {variable} is not set"
        )
    return environ[variable]
