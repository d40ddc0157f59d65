"""Slash commands: call a tool directly, without a model (`/kg.queryNeighbors TP53`).

A message whose first line starts with `/` is a list of commands, one per line, run in order as one
turn. Arguments go by position (the required ones first, in the tool's schema order) or as
`name=value`; values are shell-quoted (`label="Type 2 Diabetes"`) and converted to the type the
tool's input schema declares (numbers, booleans, JSON arrays and objects, or `a,b,c` for a list).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from graphwright.errors import InvalidInput

if TYPE_CHECKING:  # the terminal chat reads commands from text, without the MCP client
    from graphwright.chat.mcp_manager import ToolSpec

HELP = "help"
# A command as `dotted` names it, in running text (`/kg.queryNeighbors`, not a path's `a/b.c`).
_NAMED = re.compile(r"(?<![\w/])/[A-Za-z][\w-]*\.[A-Za-z][\w-]*")
_TRUE = {"true", "yes", "y", "1", "on"}
_FALSE = {"false", "no", "n", "0", "off"}


@dataclass(frozen=True, slots=True)
class SlashCall:
    line: str
    spec: ToolSpec | None  # None for /help
    arguments: dict[str, Any]


def is_slash_message(text: str) -> bool:
    return next((line for line in text.splitlines() if line.strip()), "").lstrip().startswith("/")


def command_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def split_command(line: str) -> tuple[str, str]:
    """A command line's `server.tool` (or `help`), and its arguments' text."""
    head, _, rest = line[1:].partition(" ")
    return head, rest


def servers_named(commands: list[str], servers: list[str]) -> list[str]:
    """Of `servers`, those whose tools `commands` call (`/server.tool`), in their order; all of
    them when a command asks for help, which lists every tool."""
    heads = {split_command(line)[0] for line in commands}
    if HELP in heads:
        return servers
    named = {head.partition(".")[0] for head in heads}
    return [server for server in servers if server in named]


def dotted(spec: ToolSpec) -> str:
    return f"{spec.server}.{spec.name}"


def slash_words(text: str) -> set[str]:
    """The slash commands (`/server.tool`) that `text` names, for completion."""
    return set(_NAMED.findall(text))


def parse(line: str, tools: dict[str, ToolSpec]) -> SlashCall:
    """One command line; `tools` maps `server.tool` to the tools on offer."""
    if not line.startswith("/"):
        raise InvalidInput(
            f"'{line}' is not a command: in a message of slash commands every line starts "
            "with '/' (type /help to list them)"
        )
    head, rest = split_command(line)
    if head == HELP:
        return SlashCall(line, None, {})
    spec = tools.get(head)
    if spec is None:
        raise InvalidInput(f"No tool '{head}' here; type /help to list the tools you can call")
    return SlashCall(line, spec, arguments(spec, rest))


def arguments(spec: ToolSpec, text: str) -> dict[str, Any]:
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise InvalidInput(f"/{dotted(spec)}: {exc} (check the quotes)") from None
    properties: dict[str, Any] = spec.input_schema.get("properties") or {}
    required: list[str] = [n for n in spec.input_schema.get("required") or [] if n in properties]
    named: dict[str, str] = {}
    positional: list[str] = []
    for token in tokens:
        key, sep, value = token.partition("=")
        if sep and key in properties:
            named[key] = value
        elif sep and key.isidentifier() and properties:
            raise InvalidInput(
                f"/{dotted(spec)} has no argument '{key}'; it takes: {', '.join(properties)}"
            )
        else:
            positional.append(token)
    _place_positional(spec, positional, named, required, properties)
    missing = [name for name in required if name not in named]
    if missing:
        raise InvalidInput(f"/{dotted(spec)} needs {', '.join(missing)}: {usage(spec)}")
    return {name: _convert(spec, name, value, properties[name]) for name, value in named.items()}


def _place_positional(
    spec: ToolSpec,
    positional: list[str],
    named: dict[str, str],
    required: list[str],
    properties: dict[str, Any],
) -> None:
    open_required = [name for name in required if name not in named]
    open_optional = [name for name in properties if name not in named and name not in required]
    # Surplus words join the last required text argument, so `/literature.searchPubMed TP53
    # diabetes` searches for "TP53 diabetes".
    if (
        open_required
        and len(positional) > len(open_required)
        and _json_type(properties[open_required[-1]]) == "string"
    ):
        keep = len(open_required) - 1
        positional = [*positional[:keep], " ".join(positional[keep:])]
    slots = open_required + open_optional
    if len(positional) > len(slots):
        raise InvalidInput(f"/{dotted(spec)} got too many arguments: {usage(spec)}")
    named.update(zip(slots, positional, strict=False))


def _json_type(schema: dict[str, Any]) -> str | None:
    if isinstance(schema.get("type"), str):
        return schema["type"]
    if isinstance(schema.get("type"), list):
        return next((t for t in schema["type"] if t != "null"), None)
    for option in schema.get("anyOf") or schema.get("oneOf") or []:
        kind = _json_type(option)
        if kind not in (None, "null"):
            return kind
    return None


def _convert(spec: ToolSpec, name: str, value: str, schema: dict[str, Any]) -> Any:
    kind = _json_type(schema)
    problem = f"/{dotted(spec)}: {name}={value!r} is not"
    if kind == "string":
        return value
    if kind in ("integer", "number"):
        try:
            return int(value) if kind == "integer" else float(value)
        except ValueError:
            article = "an integer" if kind == "integer" else "a number"
            raise InvalidInput(f"{problem} {article}") from None
    if kind == "boolean":
        if value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise InvalidInput(f"{problem} true or false")
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        if kind == "array":
            return [item.strip() for item in value.split(",") if item.strip()]
        if kind == "object":
            raise InvalidInput(f"{problem} a JSON object") from None
        return value
    if kind == "array" and not isinstance(parsed, list):
        return [parsed]
    return parsed


def usage(spec: ToolSpec) -> str:
    properties: dict[str, Any] = spec.input_schema.get("properties") or {}
    required = [n for n in spec.input_schema.get("required") or [] if n in properties]
    words = [f"/{dotted(spec)}", *(f"<{name}>" for name in required)]
    words += [f"[{name}=…]" for name in properties if name not in required]
    return " ".join(words)


def summary(description: str) -> str:
    """The description's first paragraph on one line: whole sentences, never cut mid-way."""
    paragraph = description.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def argument_notes(spec: ToolSpec) -> list[str]:
    """Limits (minimum, maximum, lengths, choices) and the shapes of object arguments."""
    properties: dict[str, Any] = spec.input_schema.get("properties") or {}
    definitions: dict[str, Any] = spec.input_schema.get("$defs") or {}
    notes = []
    for name, schema in properties.items():
        described = _describe(_resolved(schema, definitions), definitions)
        if described:
            notes.append(f"{name}: {described}")
    return notes


def _resolved(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return definitions.get(ref.removeprefix("#/$defs/"), schema)
    for option in schema.get("anyOf") or []:
        if option.get("type") != "null":
            return _resolved(option, definitions)
    return schema


def _describe(schema: dict[str, Any], definitions: dict[str, Any]) -> str:
    words = []
    bounds = [("minimum", ">= {}"), ("maximum", "<= {}"), ("minLength", "at least {} characters"),
              ("maxLength", "at most {} characters"), ("minItems", "at least {} items"),
              ("maxItems", "at most {} items")]  # fmt: skip
    for key, wording in bounds:
        if key in schema:
            words.append(wording.format(schema[key]))
    if isinstance(schema.get("enum"), list):
        words.append("one of " + ", ".join(str(v) for v in schema["enum"]))
    shape = _shape(schema, definitions)
    if shape:
        words.insert(0, shape)
    return ", ".join(words)


def _shape(schema: dict[str, Any], definitions: dict[str, Any]) -> str:
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        inner = _shape(_resolved(schema["items"], definitions), definitions)
        return f"a list of {inner}" if inner else ""
    properties = schema.get("properties")
    if schema.get("type") == "object" and isinstance(properties, dict) and properties:
        required = set(schema.get("required") or [])
        fields = [name if name in required else f"{name}?" for name in properties]
        return "{" + ", ".join(fields) + "}"
    return ""


def help_text(
    tools: list[ToolSpec],
    *,
    note: str | None = None,
    other_tools: list[ToolSpec] | None = None,
    other_heading: str | None = None,
) -> str:
    lines = ["Tools you can call, one command per line:", ""]
    lines += _tool_lines(tools)
    if other_tools:
        lines += ["", other_heading or "In the other mode:", ""]
        lines += _tool_lines(other_tools)
    lines += [
        "",
        'Give arguments in order or as name=value; quote values with spaces (label="Type 2 '
        'Diabetes"); lists as a,b,c or JSON.',
    ]
    if note:
        lines += ["", note]
    return "\n".join(lines)


def _tool_lines(tools: list[ToolSpec]) -> list[str]:
    lines = []
    for spec in sorted(tools, key=dotted):
        told = summary(spec.description)
        lines.append(f"- `{usage(spec)}`" + (f": {told}" if told else ""))
        lines += [f"  - {note}" for note in argument_notes(spec)]
    return lines
