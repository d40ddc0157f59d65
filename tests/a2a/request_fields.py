"""Every string an A2A request can carry, from a2a-sdk's protobuf descriptors: a field added to
the A2A types is covered by the tests that use these paths without a change to them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from google.protobuf.descriptor import Descriptor, FieldDescriptor

# The methods graphwright serves (push notifications and the extended card are not offered).
SERVED = ["SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
          "SubscribeToTask"]  # fmt: skip
JSON_VALUE_TYPES = {"google.protobuf.Struct", "google.protobuf.Value"}
NUL_TEXT = "a\x00b"


def string_fields(
    descriptor: Descriptor, seen: frozenset[str] = frozenset()
) -> Iterator[list[FieldDescriptor | str]]:
    """Paths to every string a request of this type can carry: its string fields, and the keys
    and string values of its JSON (Struct, Value) fields, through nested messages."""
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            yield [field]
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            name = field.message_type.full_name
            if name in JSON_VALUE_TYPES:
                yield [field, "value"]
                if name == "google.protobuf.Struct":
                    yield [field, "key"]
            elif name not in seen and not name.startswith("google.protobuf."):
                for path in string_fields(field.message_type, seen | {descriptor.full_name}):
                    yield [field, *path]


def with_nul(base: dict[str, Any], path: list[FieldDescriptor | str]) -> dict[str, Any]:
    """`base` (a valid request as JSON) with NUL in the string at `path`."""
    body = json.loads(json.dumps(base))
    fields = [step for step in path if isinstance(step, FieldDescriptor)]
    in_json = path[-1] if isinstance(path[-1], str) else None
    node = body
    for field in fields:
        if field.containing_oneof is not None:  # one member of a oneof at a time
            for sibling in field.containing_oneof.fields:
                node.pop(sibling.json_name, None)
        if field is fields[-1]:
            break
        child = node.get(field.json_name) or ([{}] if field.is_repeated else {})
        node[field.json_name] = child
        node = child[0] if field.is_repeated else child
    leaf = fields[-1]
    value: Any = {"key": {NUL_TEXT: "v"}, "value": {"k": NUL_TEXT}}.get(in_json or "", NUL_TEXT)
    node[leaf.json_name] = [value] if leaf.is_repeated and in_json is None else value
    return body


def field_name(path: list[FieldDescriptor | str]) -> str:
    return ".".join(step.json_name for step in path if isinstance(step, FieldDescriptor))


def nul_cases() -> Iterator[tuple[str, list[FieldDescriptor | str]]]:
    for method in SERVED:
        for path in string_fields(JsonRpcDispatcher.METHOD_TO_MODEL[method].DESCRIPTOR):
            yield method, path


NUL_CASES = list(nul_cases())
