"""The sizes a graph write may have, and the checks that keep what is stored readable.

Every adapter (REST, MCP, chat, import, CLI) reaches the graph through GraphService, and the
service runs these checks before it takes the write lock, so a refused write costs no lock time
and leaves nothing behind. Each refusal names the field and the limit (the settings named in
docs/api.md).

Beyond sizes, stored values must read back on both backends: no NUL (PostgreSQL text and JSONB
refuse it), no lone surrogates (not UTF-8), integers within 64 bits and finite floats (what
orjson and JSON itself round-trip).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from graphwright.errors import InvalidInput
from graphwright.graphmode.schemas import (
    AddEdgeOp,
    AddNodeOp,
    BatchOperation,
    EdgeInput,
    EdgePatch,
    NodeInput,
    NodePatch,
    Position,
    UpdateEdgeOp,
    UpdateNodeOp,
)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_VERSION = 2**31 - 1  # versions are 32-bit integer columns


class LimitExceeded(InvalidInput):
    """A value is larger than a configured limit."""

    def __init__(self, message: str, *, field: str, limit: int, setting: str) -> None:
        super().__init__(f"{message}; the limit is {limit} (GRAPHWRIGHT_{setting.upper()})")
        self.field = field
        self.limit = limit


@dataclass(frozen=True)
class GraphLimits:
    max_id_length: int = 500
    max_label_length: int = 10_000
    max_type_length: int = 200
    max_data_depth: int = 32
    max_data_bytes: int = 1_000_000
    max_bulk_items: int = 10_000

    @classmethod
    def from_settings(cls, settings: Any) -> GraphLimits:
        return cls(**{name: getattr(settings, name) for name in cls.__dataclass_fields__})

    def id(self, value: str, field: str) -> str:
        return self._text(value, field, self.max_id_length, "max_id_length")

    def label(self, value: str | None, field: str) -> str | None:
        return self._text(value, field, self.max_label_length, "max_label_length")

    def type(self, value: str | None, field: str) -> str | None:
        return self._text(value, field, self.max_type_length, "max_type_length")

    def count(self, items: Any, field: str) -> None:
        if len(items) > self.max_bulk_items:
            raise LimitExceeded(
                f"{field} has {len(items)} items",
                field=field,
                limit=self.max_bulk_items,
                setting="max_bulk_items",
            )

    def data(self, value: Mapping[str, Any] | None, field: str = "data") -> None:
        """Depth, size and every value of a JSON object bound for storage."""
        if value is None:
            return
        _check_json(value, field, self.max_data_depth)
        size = len(orjson.dumps(value))
        if size > self.max_data_bytes:
            raise LimitExceeded(
                f"{field} is {size} bytes as JSON",
                field=field,
                limit=self.max_data_bytes,
                setting="max_data_bytes",
            )

    def node(self, node: NodeInput | NodePatch, where: str = "") -> None:
        if isinstance(node, NodeInput) and node.id is not None:
            self.id(node.id, f"{where}id")
        self.label(node.label, f"{where}label")
        self.type(node.type, f"{where}type")
        self.data(node.data, f"{where}data")
        self._position(node.position, f"{where}position")

    def edge(self, edge: EdgeInput | EdgePatch, where: str = "") -> None:
        if getattr(edge, "id", None) is not None:
            self.id(edge.id, f"{where}id")  # type: ignore[union-attr]
        for end in ("source", "target"):
            value = getattr(edge, end)
            if value is not None:
                self.id(value, f"{where}{end}")
        self.label(edge.label, f"{where}label")
        self.type(edge.type, f"{where}type")
        self.data(edge.data, f"{where}data")

    def nodes(self, nodes: Sequence[NodeInput], field: str = "nodes") -> None:
        self.count(nodes, field)
        for index, node in enumerate(nodes):
            self.node(node, f"{field}[{index}].")

    def edges(self, edges: Sequence[EdgeInput | EdgePatch], field: str = "edges") -> None:
        self.count(edges, field)
        for index, edge in enumerate(edges):
            self.edge(edge, f"{field}[{index}].")

    def ids(self, ids: Sequence[str], field: str = "ids") -> None:
        self.count(ids, field)
        for index, value in enumerate(ids):
            self.id(value, f"{field}[{index}]")

    def batch(self, operations: Sequence[BatchOperation]) -> None:
        self.count(operations, "operations")
        for index, operation in enumerate(operations):
            where = f"operations[{index}]."
            match operation:
                case AddNodeOp(node=node):
                    self.node(node, f"{where}node.")
                case AddEdgeOp(edge=edge):
                    self.edge(edge, f"{where}edge.")
                case UpdateNodeOp(patch=patch):
                    self.id(operation.id, f"{where}id")
                    self.node(patch, f"{where}patch.")
                case UpdateEdgeOp(patch=patch):
                    self.id(operation.id, f"{where}id")
                    self.edge(patch, f"{where}patch.")
                case _:
                    self.id(operation.id, f"{where}id")

    def seed_graph(self, graph: Mapping[str, Any]) -> None:
        """A graph to import, in seed form: its columns, and the rest as `data`."""
        for part, ends, label_keys, type_keys in (
            ("nodes", ("id",), ("name", "label"), ("category", "type", "entityType")),
            ("links", ("id", "source", "target"), ("label",), ("type",)),
        ):
            items = graph.get(part)
            if not isinstance(items, list):
                continue
            for index, item in enumerate(items):
                if not isinstance(item, dict):
                    continue
                where = f"{part}[{index}]"
                for key in ends:
                    if isinstance(item.get(key), str):
                        self.id(item[key], f"{where}.{key}")
                for key in label_keys:
                    if isinstance(item.get(key), str):
                        self.label(item[key], f"{where}.{key}")
                for key in type_keys:
                    if isinstance(item.get(key), str):
                        self.type(item[key], f"{where}.{key}")
                self.data(item, where)

    def _position(self, position: Position | None, field: str) -> None:
        if position is not None:
            _check_json(position.model_dump(), field, 1)

    @staticmethod
    def _text(value: str | None, field: str, limit: int, setting: str) -> Any:
        if value is None:
            return None
        if len(value) > limit:
            raise LimitExceeded(
                f"{field} has {len(value)} characters", field=field, limit=limit, setting=setting
            )
        check_text(value, field)
        return value


def check_text(value: str, field: str) -> str:
    """Refuse what either backend cannot store or read back: NUL and lone surrogates."""
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL character (\\u0000), which cannot be stored")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{field} contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode"
        ) from None
    return value


def _check_json(value: Any, field: str, max_depth: int) -> None:
    # An explicit stack: a hostile value may be nested deeper than Python's recursion limit.
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= max_depth:
                raise LimitExceeded(
                    f"{where} is nested more than {max_depth} deep (depth)",
                    field=where,
                    limit=max_depth,
                    setting="max_data_depth",
                )
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise InvalidInput(f"{where} has a key that is not a string: {key!r}")
                    check_text(key, f"{where} key {key[:40]!r}")
                    stack.append((child, f"{where}.{key}", depth + 1))
            else:
                stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(item))
        elif isinstance(item, str):
            check_text(item, where)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not INT64_MIN <= item <= INT64_MAX:
                raise InvalidInput(
                    f"{where} is an integer past 64 bits, which JSON readers cannot round-trip; "
                    "send it as a string"
                )
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidInput(f"{where} is {item}, which JSON cannot represent")
        else:
            raise InvalidInput(f"{where} holds a {type(item).__name__}, which is not JSON")
