"""The seeds' knowledge-graph JSON, read through `load_graph` and written as indented JSON."""

from __future__ import annotations

from typing import Any

import orjson

from graphwright.core.graph import load_graph


def read(data: str | bytes) -> dict[str, Any]:
    return load_graph(data)


def write(graph: dict[str, Any]) -> str:
    return orjson.dumps(graph, option=orjson.OPT_INDENT_2).decode()
