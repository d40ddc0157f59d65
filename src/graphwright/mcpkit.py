"""Shared plumbing for graphwright's MCP servers (official `mcp` SDK, `MCPServer`).

Artifact convention: a tool result carries text for the model plus, per artifact, one MCP-native
`EmbeddedResource` (TextResourceContents: uri `graphwright://artifact/<uuid>`, the artifact's
mimeType, text = its content, `_meta` = {title, metadata?}, audience ["user"]).
"""

from __future__ import annotations

import functools
import inspect
import re
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import orjson
from mcp.server.extension import Extension
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    Annotations,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    EmptyResult,
    SetLevelRequestParams,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel, ConfigDict, ValidationError

from graphwright import __version__
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN
from graphwright.errors import GraphwrightError, problems

ARTIFACT_URI_PREFIX = "graphwright://artifact/"

__all__ = [
    "BIBLIOGRAPHY",
    "KNOWLEDGE_GRAPH",
    "MARKDOWN",
    "Artifact",
    "add_tool",
    "error_result",
    "hints",
    "new_server",
    "run_stdio",
    "tool",
    "tool_result",
]


def new_server(
    name: str, *, instructions: str, extensions: Sequence[Extension] = ()
) -> MCPServer[Any]:
    """An MCPServer named `name` that logs warnings only (stdout is the stdio transport);
    `extensions` such as `mcp_apps.ServerViews` add their resources and capabilities."""
    server = MCPServer(
        name,
        version=__version__,
        instructions=instructions,
        log_level="WARNING",
        extensions=extensions,
    )
    server.middleware.append(_readable_argument_errors)
    # The logging capability (2025-11-25): the SDK re-provides `logging/setLevel` only through
    # the low-level server's handler table, which MCPServer does not expose.
    server._lowlevel_server.add_request_handler(
        "logging/setLevel", SetLevelRequestParams, _set_log_level
    )
    return server


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_session_levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _connection_of(session: Any) -> Any:
    # A ServerSession lives for one request; the level belongs to the client's connection.
    return getattr(session, "_connection", session)


async def _set_log_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
    """Remember the connection's level: `log` sends only messages at or above it."""
    _session_levels[_connection_of(ctx.session)] = params.level
    return EmptyResult()


async def log(ctx: Context, level: str, message: str) -> None:
    """A log notification to the client of this call, if its session's level lets it through
    (every level when the client never set one)."""
    wanted = _session_levels.get(_connection_of(ctx.request_context.session), "debug")
    if LOG_LEVELS.index(level) >= LOG_LEVELS.index(wanted):
        await ctx.request_context.session.send_log_message(  # pyright: ignore[reportDeprecated]
            level=level, data=message, logger=None, related_request_id=ctx.request_id
        )


async def progress(ctx: Context, done: float, total: float, message: str) -> None:
    """Progress of a long call, as MCP progress (sent only if the caller asked for it) and as
    an info log line."""
    await ctx.report_progress(done, total, message)
    await log(ctx, "info", message)


_CRASH = re.compile(r"^Error executing tool (?P<tool>[^:]+)$")
_PYDANTIC_HEADER = re.compile(
    r"^(?:Error executing tool (?P<tool>[^:]+): )?\d+ validation errors? for \S+$"
)
_PYDANTIC_DETAIL = re.compile(
    r"^\s+(?P<msg>.*?)(?: \[type=[^,\]]+(?:, input_value=(?P<value>.*?))?(?:, input_type=\w+)?\])?$"
)


def readable_tool_error(text: str) -> str:
    """pydantic's validation report, as MCP SDKs pass it on, worded one line per field:
    `Invalid arguments for sleep:` then `- seconds: Input should be a valid number (got 'abc')`.
    The SDK's bare `Error executing tool NAME` (its text for a crash, whose details stay in the
    server log) says what happened instead. Any other text comes back as it was."""
    if crash := _CRASH.match(text):
        return (
            f"{crash.group('tool')} failed on an unexpected error in the server, not on a problem "
            "found in the arguments; the server log has the details"
        )
    lines = text.splitlines()
    header = _PYDANTIC_HEADER.match(lines[0]) if lines else None
    if header is None:
        return text
    problems, field = [], "arguments"
    for line in lines[1:]:
        if "errors.pydantic.dev" in line:
            continue
        if not line.startswith(" "):
            field = line.strip() or "arguments"
            continue
        detail = _PYDANTIC_DETAIL.match(line)
        if detail is None:
            continue
        value = detail.group("value")
        got = f" (got {value})" if value and len(value) <= 80 else ""
        problems.append(f"- {field}: {detail.group('msg')}{got}")
    tool = header.group("tool")
    return "\n".join([f"Invalid arguments{f' for {tool}' if tool else ''}:", *problems])


async def _readable_argument_errors(ctx: Any, call_next: Any) -> Any:
    """Tool errors worded by `readable_tool_error` (the result arrives as its JSON dict)."""
    result = await call_next(ctx)
    if ctx.method == "tools/call" and isinstance(result, dict) and result.get("isError"):
        for item in result.get("content") or []:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                item["text"] = readable_tool_error(item["text"])
    return result


def hints(
    *,
    read_only: bool,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    title: str | None = None,
) -> ToolAnnotations:
    """Tool annotations with every hint stated, so clients never fall back to the spec defaults.

    `open_world` is True for tools that reach external services (PubMed, RePORTER, the web).
    A read-only tool is always idempotent and never destructive.
    """
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=False if read_only else destructive,
        idempotent_hint=True if read_only else idempotent,
        open_world_hint=open_world,
    )


@dataclass(frozen=True)
class Artifact:
    """One artifact for the person: a knowledge graph, a bibliography or a document."""

    mime_type: str
    title: str
    content: str | dict[str, Any] | list[Any]
    metadata: dict[str, Any] | None = None
    id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def uri(self) -> str:
        return f"{ARTIFACT_URI_PREFIX}{self.id}"

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return orjson.dumps(self.content).decode()

    def to_resource(self) -> EmbeddedResource:
        meta: dict[str, Any] = {"title": self.title}
        if self.metadata:
            meta["metadata"] = self.metadata
        contents = TextResourceContents(
            uri=self.uri, mime_type=self.mime_type, text=self.text(), _meta=meta
        )
        return EmbeddedResource(resource=contents, annotations=Annotations(audience=["user"]))


def tool_result(
    text: str,
    *,
    structured: BaseModel | dict[str, Any] | None = None,
    artifacts: Sequence[Artifact] = (),
) -> CallToolResult:
    """A successful result: `text` for the model, optional structuredContent and artifacts."""
    content: list[ContentBlock] = [TextContent(text=text)]
    content.extend(artifact.to_resource() for artifact in artifacts)
    if isinstance(structured, BaseModel):
        structured = structured.model_dump(mode="json", by_alias=True)
    return CallToolResult(content=content, structured_content=structured)


def error_result(message: str) -> CallToolResult:
    """A tool error (isError: true) whose text is the message, for the model to act on."""
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


def _refusal(exc: GraphwrightError | ValidationError) -> CallToolResult:
    """The error result for what a tool refused. A ValidationError comes from a model the tool
    built from its arguments (a service's input, with the limits the REST API checks too), so
    it is worded as the REST API words it: `label: String should have at most 10000
    characters`."""
    if isinstance(exc, ValidationError):
        return error_result("; ".join(problems(exc.errors(), whole="arguments")))
    return error_result(str(exc))


def _catch_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a GraphwrightError or ValidationError raised by `fn` into an error result; keep
    fn's signature."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except (GraphwrightError, ValidationError) as exc:
                return _refusal(exc)

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (GraphwrightError, ValidationError) as exc:
            return _refusal(exc)

    return wrapper


class ToolView(Protocol):
    """An MCP Apps view a tool's results are shown in (`mcp_apps.ViewLink`)."""

    def bind(self, tool_name: str) -> dict[str, Any]:
        """Link the tool to the view; returns the tool's `_meta`."""
        ...


def add_tool(
    server: MCPServer[Any],
    fn: Callable[..., Any],
    *,
    annotations: ToolAnnotations,
    name: str | None = None,
    description: str | None = None,
    view: ToolView | None = None,
) -> None:
    """Register `fn` as a tool whose GraphwrightErrors and ValidationErrors become tool errors,
    which refuses unknown arguments, and whose integer arguments must all be bounded.

    Declare the return type `Annotated[CallToolResult, SomeModel]` to publish SomeModel as the
    outputSchema (the SDK validates structuredContent against it), or `CallToolResult` for text.
    The description defaults to the docstring: write it for the model. `view` shows the tool's
    results in an MCP Apps view (hosts without MCP Apps read the content as ever).
    """
    description = description or inspect.cleandoc(fn.__doc__ or "")
    meta = view.bind(name or fn.__name__) if view is not None else None
    server.add_tool(
        _catch_errors(fn), name=name, description=description, annotations=annotations, meta=meta
    )
    registered = server._tool_manager.get_tool(name or fn.__name__)
    if registered is not None:
        _require_bounded_integers(registered.name, registered.parameters)
        _refuse_unknown_arguments(registered)


def _require_bounded_integers(tool_name: str, schema: dict[str, Any]) -> None:
    """Refuse to register a tool taking an integer without a minimum and a maximum: JSON
    integers have no size, and an unbounded one reaches the database, which fails past 64
    bits (each backend differently) where the caller should have been told the range."""
    unbounded = sorted(_unbounded_integers(schema, schema.get("$defs") or {}, "", set()))
    if unbounded:
        raise TypeError(
            f"Tool {tool_name}: give {', '.join(unbounded)} a minimum and a maximum "
            "(Field(ge=..., le=...))"
        )


def _unbounded_integers(
    schema: Any, defs: Mapping[str, Any], where: str, seen: set[str]
) -> Iterator[str]:
    if not isinstance(schema, dict):
        return
    if ref := schema.get("$ref"):
        name = str(ref).rsplit("/", 1)[-1]
        if name not in seen:  # a recursive model is walked once
            yield from _unbounded_integers(defs.get(name), defs, where, seen | {name})
    kinds = schema.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        low = "minimum" in schema or "exclusiveMinimum" in schema
        high = "maximum" in schema or "exclusiveMaximum" in schema
        if not (low and high):
            yield where or "the argument"
    for key, sub in (schema.get("properties") or {}).items():
        yield from _unbounded_integers(sub, defs, f"{where}.{key}" if where else key, seen)
    for combined in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(combined) or []:
            yield from _unbounded_integers(sub, defs, where, seen)
    yield from _unbounded_integers(schema.get("items"), defs, f"{where}[]", seen)
    yield from _unbounded_integers(schema.get("additionalProperties"), defs, f"{where}{{}}", seen)


def _refuse_unknown_arguments(registered: Any) -> None:
    """An argument the tool does not take is an error naming it, not silently dropped: the
    SDK's argument model ignores extras, and MCPServer has no option for it, so its tool
    record gets a model that forbids them (and a schema that says so)."""
    metadata = registered.fn_metadata
    forbidding = type(
        metadata.arg_model.__name__,
        (metadata.arg_model,),
        {"model_config": ConfigDict(extra="forbid"), "__module__": __name__},
    )
    metadata.arg_model = forbidding
    registered.parameters["additionalProperties"] = False


def tool(
    server: MCPServer[Any],
    *,
    annotations: ToolAnnotations,
    name: str | None = None,
    description: str | None = None,
    view: ToolView | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form of `add_tool`."""

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        add_tool(server, fn, annotations=annotations, name=name, description=description, view=view)
        return fn

    return decorator


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` over stdin/stdout until the client closes the pipe."""
    anyio.run(server.run_stdio_async)
