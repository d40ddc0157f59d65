"""The chat API end to end: real uvicorn, graphwright's MCP servers over stdio, a scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH
from tests.chat.conftest import Live
from tests.chat.fakes import ScriptedChatModel, call, reply

pytestmark = pytest.mark.asyncio(loop_scope="module")


def of(events: list[tuple[str, dict[str, Any]]], kind: str) -> list[dict[str, Any]]:
    return [data for event, data in events if event == kind]


async def test_a_turn_streams_its_events_and_ends_with_one_graph_and_one_bibliography(
    live: Live,
) -> None:
    live.service.model = ScriptedChatModel.with_script(
        [
            reply(
                "Gathering.",
                call("kg__queryNeighbors", curieOrName="TP53"),
                call("kg__queryNeighbors", curieOrName="BRCA1"),
                call("literature__searchPubMed", query="TP53"),
            ),
            reply(
                "",
                call("kg__findPaths", source="TP53", target="BRCA1"),
                call("literature__searchPubMed", query="BRCA1 breast cancer"),
            ),
            reply("TP53 and BRCA1 interact; see the graph and the references."),
        ]
    )
    events = await live.stream(message="How are TP53 and BRCA1 related?")
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "status" and kinds[-1] == "done"
    assert {"token", "tool_call", "tool_result", "artifact"} <= set(kinds)
    assert "error" not in kinds, of(events, "error")
    assert sorted(e["tool"] for e in of(events, "tool_call")) == [
        "kg.findPaths", "kg.queryNeighbors", "kg.queryNeighbors",
        "literature.searchPubMed", "literature.searchPubMed",
    ]  # fmt: skip
    assert len(of(events, "tool_result")) == 5
    artifacts = of(events, "artifact")
    assert [(a["type"], a["position"]) for a in artifacts] == [
        (BIBLIOGRAPHY, 0),
        (KNOWLEDGE_GRAPH, 1),
    ]
    graph = orjson.loads(artifacts[1]["content"])
    ids = {node["id"] for node in graph["nodes"]}
    assert {"NCBIGene:7157", "NCBIGene:672"} <= ids
    citations = orjson.loads(artifacts[0]["content"])
    pmids = [c["pmid"] for c in citations if c.get("pmid")]
    assert len(pmids) == len(set(pmids)) > 0
    done = of(events, "done")[0]
    assert done["status"] == "complete" and done["stopReason"] == "answered"
    assert done["content"].endswith("see the graph and the references.")
    assert done["artifacts"] == artifacts
    assert "".join(e["text"] for e in of(events, "token")) == "Gathering." + (
        "TP53 and BRCA1 interact; see the graph and the references."
    )

    # The next turn makes version 2 of the same graph artifact.
    conversation_id = done["conversationId"]
    live.service.model = ScriptedChatModel.with_script(
        [reply("", call("kg__queryNeighbors", curieOrName="EGFR")), reply("Added EGFR.")]
    )
    second = await live.chat(conversationId=conversation_id, message="And EGFR?")
    [graph2] = [a for a in second["artifacts"] if a["type"] == KNOWLEDGE_GRAPH]
    first_graph = artifacts[1]
    assert graph2["artifactId"] == first_graph["artifactId"]
    assert graph2["id"] != first_graph["id"]
    assert graph2["metadata"]["previousVersionId"] == first_graph["id"]
    assert ids < {node["id"] for node in orjson.loads(graph2["content"])["nodes"]}

    # The model saw the first turn in its history.
    received = live.service.model.received[0]
    assert any("How are TP53 and BRCA1 related?" in str(m.content) for m in received)

    # The conversation reloads with its messages, tool calls, artifacts and their versions.
    body = (await live.client.get(f"/api/conversations/{conversation_id}")).json()["data"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant"]
    first_answer, second_answer = body["messages"][1], body["messages"][3]
    assert len(first_answer["toolCalls"]) == 5
    assert [a["type"] for a in first_answer["artifacts"]] == [BIBLIOGRAPHY, KNOWLEDGE_GRAPH]
    assert first_answer["artifacts"][1]["id"] == first_graph["id"]
    assert orjson.loads(first_answer["artifacts"][1]["content"]) == graph
    assert second_answer["artifacts"][0]["id"] == graph2["id"]
    stored = {a["artifactId"]: a for a in body["artifacts"]}
    assert [v["version"] for v in stored[graph2["artifactId"]]["versions"]] == [1, 2]

    listing = (await live.client.get("/api/conversations")).json()["data"]
    assert listing[0]["id"] == conversation_id
    assert listing[0]["title"] == "How are TP53 and BRCA1 related?"


async def test_slash_commands_work_offline_without_a_model(live: Live) -> None:
    live.service.model = None
    hint = await live.chat(message="What is TP53?")
    assert "GRAPHWRIGHT_MODEL=provider:model" in hint["content"]
    help_reply = await live.chat(conversationId=hint["conversationId"], message="/help")
    assert "`/kg.queryNeighbors <curieOrName>" in help_reply["content"]
    assert "`/literature.searchPubMed <query>" in help_reply["content"]
    # Graph tools are listed too, under Graph Mode, with how to switch there.
    here, graph_mode = help_reply["content"].split("In Graph Mode", 1)
    assert "/graph." not in here and "`/graph.addNode <label> <type>" in graph_mode
    result = await live.chat(
        conversationId=hint["conversationId"],
        message="/kg.queryNeighbors TP53\n/literature.searchPubMed TP53 MDM2\n/kg.nope x",
    )
    assert [c["tool"] for c in result["toolCalls"]] == [
        "kg.queryNeighbors",
        "literature.searchPubMed",
    ]
    assert sorted(a["type"] for a in result["artifacts"]) == [BIBLIOGRAPHY, KNOWLEDGE_GRAPH]
    assert "Neighbours of TP53" in result["content"]
    assert "No tool 'kg.nope'" in result["content"]


async def test_a_crashed_server_is_an_error_event_and_restarts_on_the_next_turn(
    live: Live,
) -> None:
    live.service.model = ScriptedChatModel.with_script(
        [
            reply("", call("flaky__crash"), call("kg__resolveName", name="TP53")),
            reply("The flaky server failed; the rest worked."),
        ]
    )
    events = await live.stream(message="Try both.")
    [error] = of(events, "error")
    assert error["tool"] == "flaky.crash" and "stopped during the call" in error["message"]
    results = {r["tool"]: r for r in of(events, "tool_result")}
    assert results["flaky.crash"]["isError"] and not results["kg.resolveName"]["isError"]
    done = of(events, "done")[0]
    assert done["status"] == "complete"
    assert done["content"] == "The flaky server failed; the rest worked."

    starts = live.service.manager.connections["flaky"].starts
    live.service.model = ScriptedChatModel.with_script(
        [reply("", call("flaky__echo", text="back")), reply("It is back.")]
    )
    again = await live.chat(conversationId=done["conversationId"], message="Again?")
    assert again["toolCalls"] == [
        {"callId": again["toolCalls"][0]["callId"], "tool": "flaky.echo", "isError": False,
         "seconds": again["toolCalls"][0]["seconds"]}
    ]  # fmt: skip
    assert live.service.manager.connections["flaky"].starts == starts + 1


async def test_cancel_stops_a_running_turn_and_stores_it(live: Live) -> None:
    live.service.model = ScriptedChatModel.with_script(
        [reply("Waiting.", call("flaky__sleep", seconds=30)), reply("never")]
    )
    events: list[tuple[str, dict[str, Any]]] = []

    async def consume() -> None:
        events.extend(await live.stream(conversationId="cancel-me", message="Wait a long time."))

    streaming = asyncio.create_task(consume())
    while not live.service._running.get("cancel-me") or not live.service._running["cancel-me"].task:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)
    busy = await live.client.post("/api/chat", json={"conversationId": "cancel-me", "message": "x"})
    assert busy.status_code == 409
    cancelled = await live.client.post("/api/conversations/cancel-me/cancel")
    assert cancelled.json()["data"] == {"cancelled": True}
    await asyncio.wait_for(streaming, 10)
    done = of(events, "done")[0]
    assert done["status"] == "cancelled" and done["content"] == "Waiting."
    body = (await live.client.get("/api/conversations/cancel-me")).json()["data"]
    assert body["messages"][-1]["status"] == "cancelled" and not body["running"]
    idle = await live.client.post("/api/conversations/cancel-me/cancel")
    assert idle.json()["data"] == {"cancelled": False}


async def test_rename_and_enter_graph_mode_seeds_the_graph(live: Live) -> None:
    live.service.model = None
    first = await live.chat(conversationId="seeded", message="/kg.queryNeighbors BRCA1")
    [graph] = [a for a in first["artifacts"] if a["type"] == KNOWLEDGE_GRAPH]
    node_count = len(orjson.loads(graph["content"])["nodes"])
    patched = await live.client.patch(
        "/api/conversations/seeded", json={"title": "BRCA1 map", "mode": "graph_mode"}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["data"]["mode"] == "graph_mode"
    assert patched.json()["data"]["title"] == "BRCA1 map"
    state = await live.client.get("/api/graph/seeded/state")
    assert state.status_code == 200, state.text
    metadata = state.json()["data"]["metadata"]
    assert metadata["nodeCount"] == node_count and metadata["version"] >= 1


async def test_the_api_needs_a_token_and_respects_its_scope(live: Live) -> None:
    anonymous = await live.client.post(
        "/api/chat", json={"message": "/help"}, headers={"Authorization": ""}
    )
    assert anonymous.status_code == 401
    scoped = live.app.state.auth_service.mint(conversation_id="mine")
    headers = {"Authorization": f"Bearer {scoped}"}
    other = await live.client.post(
        "/api/chat", json={"conversationId": "theirs", "message": "/help"}, headers=headers
    )
    assert other.status_code == 403
    live.service.model = None
    own = await live.client.post(
        "/api/chat", json={"message": "/help", "stream": False}, headers=headers
    )
    assert own.json()["data"]["conversationId"] == "mine"
    listing = await live.client.get("/api/conversations", headers=headers)
    assert [c["id"] for c in listing.json()["data"]] == ["mine"]
    assert (await live.client.get("/api/conversations/seeded", headers=headers)).status_code == 403
    missing = await live.client.get("/api/conversations/nothing-here")
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == "No conversation 'nothing-here'"
    bad = await live.client.post("/api/chat", json={"message": ""})
    assert bad.status_code == 422


@pytest.mark.parametrize("stream", [0, 1, "false", "yes", None])
async def test_stream_takes_only_true_or_false(live: Live, stream: Any) -> None:
    """`"stream": 0` was taken as false and the turn ran (schemathesis's negative_data_rejection):
    a client that sends something else has made a mistake, and is told which field."""
    response = await live.client.post("/api/chat", json={"message": "/help", "stream": stream})
    assert response.status_code == 422, response.text
    assert "stream" in response.json()["error"]["message"]


async def test_graph_mode_offers_only_graph_tools_and_versions_the_graph(live: Live) -> None:
    forged = {"conversationId": "victim", "apiBaseUrl": "http://127.0.0.1:9", "accessToken": "x"}
    model = ScriptedChatModel.with_script(
        [
            reply(
                "Adding.",
                call("graph__addNode", label="TP53", type="gene", canonicalId="NCBIGene:7157",
                     databaseContext=forged),
                call("graph__addNode", label="MDM2", type="gene", canonicalId="NCBIGene:4193"),
            ),
            reply("", call("graph__addEdge", source="NCBIGene:4193", target="NCBIGene:7157",
                           label="inhibits")),
            reply("MDM2 inhibits TP53 is in the graph."),
        ]
    )  # fmt: skip
    live.service.model = model
    events = await live.stream(conversationId="gm", mode="graph_mode", message="Build it.")
    assert "error" not in [kind for kind, _ in events], of(events, "error")
    offered = model.offered[0]
    assert offered and all(name.startswith("graph__") for name in offered)
    assert "graph__addNode" in offered and "graph__undo" in offered
    add_node = model.schemas["graph__addNode"]["parameters"]
    assert "databaseContext" not in add_node.get("properties", {})
    assert not of(events, "artifact")
    versions = [e["version"] for e in of(events, "graph_updated")]
    assert versions == sorted(versions) and len(versions) == 2 and versions[0] >= 2
    done = of(events, "done")[0]
    assert done["artifacts"] == [] and done["graph"]["version"] == versions[-1]
    contexts = [c["arguments"]["databaseContext"] for c in of(events, "tool_call")]
    assert [c["conversationId"] for c in contexts] == ["gm", "gm", "gm"]
    assert {c["accessToken"] for c in contexts} == {"[redacted]"}
    state = (await live.client.get("/api/graph/gm/state")).json()["data"]
    assert sorted(n["id"] for n in state["nodes"]) == ["NCBIGene:4193", "NCBIGene:7157"]
    assert [(e["source"], e["target"]) for e in state["edges"]] == [
        ("NCBIGene:4193", "NCBIGene:7157")
    ]
    assert live.app.state.graph_service.version("victim") == 0

    # Offline, a slash command edits the same graph; a later version follows.
    live.service.model = None
    again = await live.chat(conversationId="gm", message="/graph.addNode label=BRCA1 type=gene")
    assert again["graph"]["version"] == versions[-1] + 1 and again["artifacts"] == []
    body = (await live.client.get("/api/conversations/gm")).json()["data"]
    assert body["mode"] == "graph_mode" and body["graphVersion"] == versions[-1] + 1
    assert [m["graphVersion"] for m in body["messages"] if m["role"] == "assistant"] == [
        versions[-1], versions[-1] + 1
    ]  # fmt: skip
