"""Graph Mode routing rules and the Graph Mode seeding diff, as pure functions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphwright.chat.conversations import learned_since
from graphwright.chat.models import Mode
from graphwright.chat.modes import model_facing_schema, orchestrated, redacted, servers_for

CONTEXT = {"conversationId": "c1", "apiBaseUrl": "http://127.0.0.1:8000", "accessToken": "gw_x"}
OWNED = {"graph": CONTEXT}


def test_each_mode_gets_its_servers() -> None:
    servers = ["kg", "graph", "literature", "artifacts"]
    assert servers_for(Mode.GRAPH, servers) == ["graph"]
    assert servers_for(Mode.NORMAL, servers) == ["kg", "literature", "artifacts"]


def test_the_conversation_argument_is_hidden_from_the_model() -> None:
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string"}, "databaseContext": {"type": "object"}},
        "required": ["label", "databaseContext"],
    }
    assert model_facing_schema("graph", schema) == {
        "type": "object",
        "properties": {"label": {"type": "string"}},
        "required": ["label"],
    }
    assert model_facing_schema("kg", schema) is schema


def test_the_orchestrator_sets_the_conversation_argument(
    caplog: pytest.LogCaptureFixture,
) -> None:
    forged = {"conversationId": "other", "accessToken": "stolen"}
    graph_call = orchestrated("graph", "addNode", {"label": "X", "databaseContext": forged}, OWNED)
    assert graph_call == {"label": "X", "databaseContext": CONTEXT}
    assert "Discarded a databaseContext" in caplog.text and "stolen" not in caplog.text
    assert orchestrated("kg", "queryNeighbors", {"curieOrName": "TP53"}, OWNED) == {
        "curieOrName": "TP53"
    }
    assert redacted(graph_call)["databaseContext"]["accessToken"] == "[redacted]"
    assert graph_call["databaseContext"]["accessToken"] == "gw_x"


ids = st.sampled_from("ABCDEFGH")


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, Any]:
    nodes = sorted(draw(st.sets(ids, max_size=8)))
    links: set[tuple[str, str]] = set()
    if nodes:
        endpoint = st.sampled_from(nodes)
        links = draw(st.sets(st.tuples(endpoint, endpoint), max_size=10))
    return {
        "nodes": [{"id": node, "name": node} for node in nodes],
        "links": [{"source": a, "target": b, "label": "r"} for a, b in sorted(links)],
    }


@given(graphs(), graphs())
def test_learned_since_is_what_the_later_graph_adds(
    earlier: dict[str, Any], extra: dict[str, Any]
) -> None:
    later_nodes = {n["id"]: n for n in [*earlier["nodes"], *extra["nodes"]]}
    later_links = {(li["source"], li["target"]): li for li in [*earlier["links"], *extra["links"]]}
    later = {"nodes": list(later_nodes.values()), "links": list(later_links.values())}
    learned = learned_since(earlier, later)
    old_ids = {n["id"] for n in earlier["nodes"]}
    old_links = {(li["source"], li["target"]) for li in earlier["links"]}
    assert {(li["source"], li["target"]) for li in learned["links"]} == set(later_links) - old_links
    learned_ids = {n["id"] for n in learned["nodes"]}
    assert set(later_nodes) - old_ids <= learned_ids
    # every learned link can be imported on its own: its endpoints come with it
    assert {node for li in learned["links"] for node in (li["source"], li["target"])} <= learned_ids
    assert learned_since(later, later) == {"nodes": [], "links": []}
