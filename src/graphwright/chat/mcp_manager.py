"""MCP client manager: one official-SDK `ClientSession` per configured server, started on first use.

Each server runs in its own background task, because the SDK's transports are anyio context
managers that must be entered and left by the same task, while calls arrive from many. A server
whose connection ends (a crashed stdio process, a dropped HTTP session) is started again on its
next use; the calls that were in flight get a clear error. Every call has the server's timeout.

The model sees tools as `server__tool` (letters, digits, `_` and `-` only, at most 64 characters,
as the large providers require); each `ToolSpec` keeps the server and tool behind its name.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import httpx2
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict

from graphwright.chat.config import RemoteServer, ServerBase, ServerConfig, StdioServer

logger = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 10.0
SEPARATOR = "__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64


class FullCallToolResult(types.CallToolResult):
    """A tool result that keeps fields outside the MCP schema.

    Servers written for charmgpt return `bibliography`, `grantMarkdown` and `artifacts` beside
    `content`; the SDK's own model drops unknown fields, and these are the artifacts.
    """

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    server: str
    name: str
    qualified: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """A finished call: a result from the server, or an error the turn can show and go past."""

    result: FullCallToolResult | None
    error: str | None
    seconds: float


class ServerUnavailable(Exception):
    """A server could not be started or reached; the message says which and why."""


def qualified_name(server: str, tool: str) -> str:
    return _UNSAFE.sub("_", f"{server}{SEPARATOR}{tool}")[:_MAX_NAME]


def describe_exception(exc: BaseException) -> str:
    """One line for a person, flattening the exception groups anyio task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _WatchedReadStream:
    """The transport's read stream, which sets `ended` when the server's side goes away."""

    def __init__(self, stream: Any, ended: asyncio.Event) -> None:
        self._stream = stream
        self._ended = ended

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        # `last_context`, which context-carrying transports expose per message.
        return getattr(self._stream, name)


class ServerConnection:
    """One configured server: starts it, watches it, and restarts it after it ends."""

    def __init__(self, name: str, config: ServerConfig) -> None:
        self.name = name
        self.config = config
        self.starts = 0
        self._lock = asyncio.Lock()
        self._session: ClientSession | None = None
        self._tools: list[types.Tool] = []
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[tuple[ClientSession, list[types.Tool]]] | None = None
        self._stop = asyncio.Event()
        self._ended = asyncio.Event()

    @property
    def running(self) -> bool:
        return self._session is not None and not self._ended.is_set()

    async def session(self) -> ClientSession:
        async with self._lock:
            if not self.running:
                await self._start()
            assert self._session is not None
            return self._session

    async def tools(self) -> list[types.Tool]:
        await self.session()
        return self._tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> FullCallToolResult:
        session = await self.session()
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(name=tool, arguments=arguments)
        )
        result = await session.send_request(
            request, FullCallToolResult, request_read_timeout_seconds=self.config.timeout
        )
        if not result.is_error:
            await session.validate_tool_result(tool, result)
        return result

    async def stop(self) -> None:
        async with self._lock:
            await self._stop_task()

    async def _start(self) -> None:
        await self._stop_task()
        if self.starts:
            logger.warning("MCP server '%s' ended; starting it again", self.name)
        self.starts += 1
        self._stop, self._ended = asyncio.Event(), asyncio.Event()
        self._ready = ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready), name=f"mcp-server-{self.name}")
        try:
            async with asyncio.timeout(START_TIMEOUT_SECONDS):
                self._session, self._tools = await asyncio.shield(ready)
        except TimeoutError:
            await self._stop_task()
            raise ServerUnavailable(
                f"MCP server '{self.name}' did not start within {START_TIMEOUT_SECONDS:.0f} s"
            ) from None
        except Exception as exc:
            await self._stop_task()
            raise ServerUnavailable(
                f"MCP server '{self.name}' could not start: {describe_exception(exc)}"
            ) from None

    async def _serve(self, ready: asyncio.Future[tuple[ClientSession, list[types.Tool]]]) -> None:
        """Own the transport and session from start to stop, in this one task."""
        try:
            async with self._transport() as (read, write):
                watched = _WatchedReadStream(read, self._ended)
                async with ClientSession(watched, write) as session:
                    await session.initialize()
                    tools = await _list_all_tools(session)
                    ready.set_result((session, tools))
                    await _first_of(self._stop.wait(), self._ended.wait())
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not self._stop.is_set():
                logger.warning("MCP server '%s' ended: %s", self.name, describe_exception(exc))
        finally:
            self._ended.set()
            self._session = None

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        async with AsyncExitStack() as stack:
            if isinstance(config, StdioServer):
                params = StdioServerParameters(
                    command=config.command, args=config.args, env=config.env, cwd=config.cwd
                )
                yield await stack.enter_async_context(stdio_client(params))
            elif isinstance(config, RemoteServer) and config.transport == "sse":
                yield await stack.enter_async_context(sse_client(config.url, config.headers))
            else:
                assert isinstance(config, RemoteServer)
                client = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        headers=config.headers, timeout=httpx2.Timeout(30.0, read=300.0)
                    )
                )
                yield await stack.enter_async_context(
                    streamable_http_client(config.url, http_client=client)
                )

    async def _stop_task(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._ready is not None and not self._ready.done():
            # Still starting, so not watching `_stop`: the transport's exit stops the process.
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return
        self._stop.set()
        try:
            async with asyncio.timeout(STOP_TIMEOUT_SECONDS):
                await task
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


class ToolSource(Protocol):
    """What the manager needs of a source of tools: an MCP server, or a remote A2A agent whose
    skills it offers as tools (`graphwright.a2a.client`)."""

    @property
    def config(self) -> ServerBase: ...

    async def tools(self) -> list[types.Tool]: ...

    async def call(self, tool: str, arguments: dict[str, Any]) -> FullCallToolResult: ...

    async def stop(self) -> None: ...


class McpManager:
    """Every configured server, by name, and the `server__tool` names the model sees.
    `sources` adds other tool sources (remote A2A agents) under their own names."""

    def __init__(
        self, servers: dict[str, ServerConfig], sources: Mapping[str, ToolSource] | None = None
    ) -> None:
        self.connections: dict[str, ToolSource] = {
            name: ServerConnection(name, cfg) for name, cfg in servers.items()
        }
        if clash := sorted(self.connections.keys() & (sources or {}).keys()):
            raise ValueError(f"Tool sources {clash} are named like MCP servers")
        self.connections.update(sources or {})
        self._owners: dict[str, tuple[str, str]] = {}

    async def tools(
        self, servers: Iterable[str] | None = None
    ) -> tuple[list[ToolSpec], dict[str, str]]:
        """The tools of `servers` (default: all), starting any that is not running.

        Returns the tools and, for each server that could not be started, why.
        """
        names = list(self.connections if servers is None else servers)
        listings = await asyncio.gather(
            *(self.connections[name].tools() for name in names), return_exceptions=True
        )
        specs: list[ToolSpec] = []
        failures: dict[str, str] = {}
        for name, listing in zip(names, listings, strict=True):
            if isinstance(listing, BaseException):
                failures[name] = describe_exception(listing)
                continue
            specs.extend(self._specs(name, listing))
        return specs, failures

    async def start_servers(self) -> dict[str, str]:
        """Start every MCP server that is not running (not the other tool sources, remote
        agents that start nothing); returns, for each that could not be started, why."""
        names = [name for name, c in self.connections.items() if isinstance(c, ServerConnection)]
        _, failures = await self.tools(names)
        return failures

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        started = time.perf_counter()
        connection = self.connections.get(server)
        if connection is None:
            return CallOutcome(None, f"No MCP server named '{server}' is configured", 0.0)
        try:
            result = await connection.call(tool, arguments)
        except ServerUnavailable as exc:
            return CallOutcome(None, str(exc), time.perf_counter() - started)
        except MCPError as exc:
            return CallOutcome(
                None, _call_error(server, tool, exc, connection), time.perf_counter() - started
            )
        except Exception as exc:
            message = f"Tool '{server}.{tool}' failed: {describe_exception(exc)}"
            return CallOutcome(None, message, time.perf_counter() - started)
        return CallOutcome(result, None, time.perf_counter() - started)

    async def aclose(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()))

    def _specs(self, server: str, tools: list[types.Tool]) -> list[ToolSpec]:
        specs = []
        for tool in tools:
            qualified = qualified_name(server, tool.name)
            owner = self._owners.setdefault(qualified, (server, tool.name))
            if owner != (server, tool.name):
                logger.warning(
                    "Tool '%s.%s' is hidden: its name '%s' is taken by '%s.%s'",
                    server, tool.name, qualified, *owner,
                )  # fmt: skip
                continue
            description = tool.description or ""
            specs.append(
                ToolSpec(
                    server, tool.name, qualified, description, tool.input_schema, tool.output_schema
                )
            )
        return specs


def _call_error(server: str, tool: str, exc: MCPError, connection: ToolSource) -> str:
    if exc.error.code == types.REQUEST_TIMEOUT:
        return (
            f"Tool '{server}.{tool}' did not answer within {connection.config.timeout:g} s "
            "(the server's `timeout` setting)"
        )
    if exc.error.code == types.CONNECTION_CLOSED:
        return (
            f"MCP server '{server}' stopped during the call to '{tool}'; "
            "it will be started again on its next use"
        )
    return f"Tool '{server}.{tool}' failed: {exc.error.message}"


async def _list_all_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def _first_of(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
