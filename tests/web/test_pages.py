"""Page logic through NiceGUI's `User` simulation, on real services and a real database."""

from __future__ import annotations

import pytest
from nicegui import ui

from graphwright.chat.models import ChatRequest, ConversationCreate, Mode
from tests.web.conftest import Simulated


async def test_pages_need_sign_in_and_a_bad_token_is_refused(simulated: Simulated) -> None:
    user = simulated.user
    await user.open("/")
    await user.should_see("Sign in to graphwright")
    user.find(marker="token").type("gw_not-a-token")
    user.find(marker="sign-in").click()
    await user.should_see("The bearer token is not valid")
    await user.should_not_see("Signed in as")


async def test_sign_in_then_sign_out(simulated: Simulated) -> None:
    await simulated.sign_in(label="ada")
    await simulated.user.should_see("Signed in as ada")
    await simulated.user.should_see("No conversations yet.")
    simulated.user.find(marker="sign-out").click()
    await simulated.user.should_see("Sign in to graphwright")
    await simulated.user.open("/")
    await simulated.user.should_see("Sign in to graphwright")


async def test_a_revoked_token_signs_the_browser_out(simulated: Simulated) -> None:
    token = await simulated.sign_in(label="bob")
    simulated.app.state.auth_service.revoke_token(token)
    await simulated.user.open("/")
    await simulated.user.should_see("Sign in to graphwright")


async def test_conversations_list_search_rename_delete(simulated: Simulated) -> None:
    chat = simulated.app.state.chat_service
    chat.create_conversation(ConversationCreate(id="c-one", title="TP53 and diabetes"), actor="t")
    chat.create_conversation(
        ConversationCreate(id="c-two", title="BRCA1 graph", mode=Mode.GRAPH), actor="t"
    )
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.should_see("TP53 and diabetes")
    await user.should_see("BRCA1 graph")
    await user.should_see("Graph Mode")  # the mode of c-two
    user.find(marker="search").type("brca")
    await user.should_see("BRCA1 graph")
    await user.should_not_see("TP53 and diabetes")
    user.find(marker="search").clear()
    await user.should_see("TP53 and diabetes")

    with user.scope(marker="conversation-c-one"):
        user.find(marker="rename").click()
    await user.should_see(marker="rename-title")
    user.find(marker="rename-title").clear().type("TP53 in metabolism")
    user.find(marker="rename-save").click()
    await user.should_see(kind=ui.link, content="TP53 in metabolism")
    assert chat.get_conversation("c-one")["title"] == "TP53 in metabolism"

    with user.scope(marker="conversation-c-two"):
        user.find(marker="delete").click()
    await user.should_see(marker="delete-confirm")
    user.find(marker="delete-confirm").click()
    await user.should_not_see(kind=ui.link, content="BRCA1 graph")
    assert [c["id"] for c in chat.list_conversations()] == ["c-one"]


async def test_a_token_scoped_to_one_conversation_sees_only_it(simulated: Simulated) -> None:
    chat = simulated.app.state.chat_service
    for cid in ("mine", "theirs"):
        chat.create_conversation(ConversationCreate(id=cid, title=f"title {cid}"), actor="t")
    await simulated.sign_in(conversation_id="mine", label="scoped")
    await simulated.user.should_see("title mine")
    await simulated.user.should_not_see("title theirs")
    await simulated.user.open("/c/theirs")
    await simulated.user.should_see("Your token does not give access to this conversation.")


async def test_create_opens_the_chat_with_the_model_banner_and_help(simulated: Simulated) -> None:
    await simulated.sign_in(label="ada")
    user = simulated.user
    user.find(marker="new-title").type("First look")
    user.find(marker="create").click()
    await user.should_see(marker="message-input", retries=20)
    await user.should_see("First look")
    await user.should_see("GRAPHWRIGHT_MODEL=provider:model")
    user.find(marker="message-input").type("/help")
    user.find(marker="send").click()
    # /help lists every MCP server's tools: each server is a subprocess that a loaded machine
    # can take many seconds to start.
    await user.should_see("Tools you can call", retries=600)
    await user.should_see("/kg.queryNeighbors", retries=50)


@pytest.mark.parametrize("path", ["/c/nope"])
async def test_an_unknown_conversation_says_so(simulated: Simulated, path: str) -> None:
    await simulated.sign_in(label="ada")
    await simulated.user.open(path)
    await simulated.user.should_see("No conversation 'nope'.")


async def test_the_graph_editor_adds_undoes_and_shows_history(simulated: Simulated) -> None:
    chat = simulated.app.state.chat_service
    chat.create_conversation(ConversationCreate(id="g", title="G", mode=Mode.GRAPH), actor="t")
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/g/graph")
    await user.should_see("Graph · version 0 · 0 nodes, 0 edges")
    user.find(marker="node-label").type("CDKN1A")
    user.find(marker="add-node").click()
    await user.should_see("Graph · version 1 · 1 nodes, 0 edges", retries=50)
    graphs = simulated.app.state.graph_service
    assert [n.label for n in graphs.state("g").nodes] == ["CDKN1A"]

    user.find(marker="undo").click()
    await user.should_see("Graph · version 2 · 0 nodes, 0 edges", retries=50)
    user.find(marker="undo").click()
    await user.should_see("Nothing to undo in this graph", retries=50)  # a notification

    user.find("History").click()
    await user.should_see(marker="version-1", retries=50)
    await user.should_see("added node CDKN1A")  # in words, with its undo under it
    await user.should_see("undid: added node CDKN1A")
    await user.should_not_see("addNode")


async def test_slash_hints_list_matching_commands(simulated: Simulated) -> None:
    simulated.app.state.chat_service.create_conversation(
        ConversationCreate(id="s", title="S"), actor="t"
    )
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/s")
    await user.should_see(marker="message-input")
    # typed before the tool list has arrived (the MCP servers start on first use)
    user.find(marker="message-input").type("/kg.query")
    await user.should_see(content="/kg.queryNeighbors <curieOrName>", retries=200)


async def test_a_knowledge_graph_artifact_opens_in_graph_mode(simulated: Simulated) -> None:
    chat = simulated.app.state.chat_service
    chat.create_conversation(ConversationCreate(id="kg", title="KG"), actor="t")
    turn = await chat.start_turn(
        ChatRequest(conversation_id="kg", message="/kg.queryNeighbors TP53"), actor="t"
    )
    assert (await turn.response())["status"] == "complete"
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/kg")
    await user.should_see(marker="open-graph-mode", retries=100)
    await user.should_see(marker="graph-chart")
    user.find(marker="open-graph-mode").click()
    await user.should_see(marker="graph-editor", retries=100)
    assert chat.get_conversation("kg")["mode"] == "graph_mode"
    labels = {n.label for n in simulated.app.state.graph_service.state("kg").nodes}
    assert "TP53" in labels


async def test_a_scoped_token_sees_its_requests_but_cannot_decide(simulated: Simulated) -> None:
    knowledge = simulated.app.state.knowledge_service
    aspirin = {"@context": "https://schema.org/", "@id": "urn:t:a", "@type": "Drug", "name": "a"}
    knowledge.request_publication(aspirin, requested_by="t", title="mine", conversation_id="c1")
    knowledge.request_publication(aspirin, requested_by="t", title="theirs", conversation_id="c2")
    await simulated.sign_in(conversation_id="c1", label="scoped")
    user = simulated.user
    await user.open("/kb/requests")
    await user.should_see("needs an unscoped token")
    await user.should_see("mine", retries=50)
    await user.should_not_see("theirs")
    await user.should_not_see(marker="approve")
