"""Slash commands: parsing against a tool's input schema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphwright.chat.mcp_manager import ToolSpec
from graphwright.chat.slash import help_text, is_slash_message, parse
from graphwright.errors import InvalidInput


def spec(server: str, name: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(server, name, f"{server}__{name}", f"{name} does things.\nMore.", schema)


NEIGHBORS = spec(
    "kg",
    "queryNeighbors",
    {
        "curieOrName": {"type": "string"},
        "predicate": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "limit": {"type": "integer"},
    },
    ["curieOrName"],
)
ADD_NODE = spec(
    "graph",
    "addNode",
    {"label": {"type": "string"}, "type": {"type": "string"}, "data": {"type": "object"}},
    ["label", "type"],
)
SEARCH = spec(
    "literature",
    "searchPubMed",
    {"query": {"type": "string"}, "maxResults": {"type": "integer"}, "recent": {"type": "boolean"}},
    ["query"],
)
ARTICLES = spec("literature", "getArticles", {"pmids": {"type": "array"}}, ["pmids"])
TOOLS = {f"{s.server}.{s.name}": s for s in (NEIGHBORS, ADD_NODE, SEARCH, ARTICLES)}


def test_positional_and_named_arguments() -> None:
    assert parse("/kg.queryNeighbors TP53", TOOLS).arguments == {"curieOrName": "TP53"}
    call = parse("/graph.addNode label=TP53 type=gene", TOOLS)
    assert call.spec is ADD_NODE
    assert call.arguments == {"label": "TP53", "type": "gene"}
    call = parse('/graph.addNode "Type 2 Diabetes" disease data=\'{"x": 1}\'', TOOLS)
    assert call.arguments == {"label": "Type 2 Diabetes", "type": "disease", "data": {"x": 1}}


def test_values_follow_the_schema_types() -> None:
    call = parse("/literature.searchPubMed TP53 diabetes maxResults=5 recent=yes", TOOLS)
    assert call.arguments == {"query": "TP53 diabetes", "maxResults": 5, "recent": True}
    assert parse("/literature.getArticles 1,2,3", TOOLS).arguments == {"pmids": ["1", "2", "3"]}
    assert parse("/literature.getArticles [1,2]", TOOLS).arguments == {"pmids": [1, 2]}
    assert parse("/kg.queryNeighbors TP53 predicate=treats", TOOLS).arguments == {
        "curieOrName": "TP53",
        "predicate": "treats",
    }


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("/kg.nothing x", "No tool 'kg.nothing'"),
        ("/graph.addNode label=TP53", "needs type"),
        ("/kg.queryNeighbors TP53 colour=red", "no argument 'colour'"),
        ("/literature.searchPubMed TP53 maxResults=many", "not an integer"),
        ("/literature.searchPubMed q recent=perhaps", "true or false"),
        ('/graph.addNode "unclosed type=gene', "quotes"),
        ("plain words", "not a command"),
    ],
)
def test_mistakes_are_explained(line: str, problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem):
        parse(line, TOOLS)


def test_help_lists_every_tool_with_its_arguments() -> None:
    assert parse("/help", TOOLS).spec is None
    text = help_text(list(TOOLS.values()), note="No model.")
    assert "`/kg.queryNeighbors <curieOrName> [predicate=…] [limit=…]`" in text
    assert "`/graph.addNode <label> <type> [data=…]`: addNode does things." in text
    assert text.endswith("No model.")


def test_help_shows_limits_and_object_shapes_and_whole_sentences() -> None:
    budget = spec(
        "graph",
        "getGraphState",
        {
            "tokenBudget": {"type": "integer", "minimum": 500, "maximum": 20000},
            "position": {"anyOf": [{"$ref": "#/$defs/Position"}, {"type": "null"}]},
            "nodes": {"type": "array", "items": {"$ref": "#/$defs/Position"}, "minItems": 1},
        },
        [],
    )
    budget.input_schema["$defs"] = {
        "Position": {"type": "object", "properties": {"x": {}, "y": {}}, "required": ["x"]}
    }
    described = ToolSpec(
        "graph", "t", "graph__t", "Summarise the graph within a\nbudget of tokens.\n\nMore.", {}
    )
    text = help_text([budget, described])
    assert "  - tokenBudget: >= 500, <= 20000" in text
    assert "  - position: {x, y?}" in text
    assert "  - nodes: a list of {x, y?}, at least 1 items" in text
    assert ": Summarise the graph within a budget of tokens." in text


def test_a_slash_message_starts_with_a_command() -> None:
    assert is_slash_message("\n  /help\n/kg.queryNeighbors TP53")
    assert not is_slash_message("what is /help?")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1))
def test_any_text_is_one_string_argument(text: str) -> None:
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    call = parse(f'/kg.queryNeighbors curieOrName="{quoted}"', TOOLS)
    assert call.arguments == {"curieOrName": text}
