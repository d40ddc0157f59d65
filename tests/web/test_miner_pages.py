"""The miner's pages through NiceGUI's `User` simulation on a real app: without a model they say
how to set one, the tag bar works, the memory view reads and edits each tag's notes; with a
scripted model, an edited publish goes into the knowledge base, and the chat's miner tool call
opens the Agent Workspace, which follows the run that starts."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from nicegui import ui
from nicegui.testing.user import User

from graphwright.chat.models import ConversationCreate
from graphwright.miner.memory import MemoryNotes
from graphwright.miner.schemas import MinerRequest
from tests.miner.scripted import ASPIRIN, ScriptedModel, full_run
from tests.web.conftest import Simulated


async def test_without_a_model_the_miner_says_how_to_set_one(simulated: Simulated) -> None:
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/miner")
    await user.should_see(marker="miner-model-banner")
    await user.should_see("GRAPHWRIGHT_MODEL=provider:model")
    await user.should_see("No miner runs yet.")

    simulated.app.state.chat_service.create_conversation(
        ConversationCreate(id="c-tags", title="Tags"), actor="ada"
    )
    await user.open("/c/c-tags")
    await user.should_see(marker="tag-bar")
    [mine] = user.find(marker="mine").elements
    assert not mine.enabled
    user.find(marker="tag-drug_targets").click()
    [chip] = user.find(marker="tag-drug_targets").elements
    assert 'aria-pressed="true"' in str(chip.props) or chip.props.get("aria-pressed") == "true"
    user.find(marker="custom-tag").type("Not-A-Tag")
    user.find(marker="add-tag").click()
    await user.should_see("Invalid domain tag 'Not-A-Tag'", retries=20)
    user.find(marker="custom-tag").clear().type("#rare_disease")
    user.find(marker="add-tag").click()
    await user.should_see(marker="tag-rare_disease")


async def open_discovery_notes(user: User) -> Any:
    """The memory view's editor, open on #drug_targets' discovery notes."""
    await user.open("/miner/memory")
    await user.should_see("#drug_targets", retries=20)
    user.find(marker="note-drug_targets-discovery-notes").click()
    await user.should_see("/memories/knowledge/drug_targets/discovery-notes.md", retries=20)
    [editor] = user.find(marker="memory-editor").elements
    return editor


async def test_the_memory_view_reads_and_edits_a_tags_notes(simulated: Simulated) -> None:
    miner = simulated.app.state.miner_service
    await MemoryNotes((await miner.persistence()).store).seed(["drug_targets"])
    await simulated.sign_in(label="ada")
    user = simulated.user
    editor = await open_discovery_notes(user)
    assert isinstance(editor, ui.textarea)
    assert editor.value.startswith("# Discovery Notes - drug_targets")
    editor.set_value(editor.value + "- Pattern: ChEMBL before PubMed for potency\n")
    user.find(marker="memory-save").click()
    await user.should_see("Saved /memories/knowledge/drug_targets/discovery-notes.md", retries=20)
    saved = await miner.read_note("drug_targets", "discovery-notes")
    assert saved.content.endswith("- Pattern: ChEMBL before PubMed for potency\n")

    user.find(marker="note-drug_targets-shapes").click()  # not written yet: starts empty
    await user.should_see("/memories/knowledge/drug_targets/shapes.ttl", retries=20)
    assert user.find(marker="memory-editor").elements.pop().value == ""


async def test_a_conversation_token_may_not_edit_the_memory_notes(simulated: Simulated) -> None:
    # As the REST API refuses it: the chat hands such tokens to the model's tools.
    miner = simulated.app.state.miner_service
    await MemoryNotes((await miner.persistence()).store).seed(["drug_targets"])
    simulated.app.state.chat_service.create_conversation(
        ConversationCreate(id="c-scoped", title="Scoped"), actor="ada"
    )
    await simulated.sign_in(conversation_id="c-scoped", label="tool")
    user = simulated.user
    editor = await open_discovery_notes(user)
    before = editor.value
    editor.set_value(before + "- written by a tool\n")
    user.find(marker="memory-save").click()
    await user.should_see("needs an unscoped token", retries=20)
    saved = await miner.read_note("drug_targets", "discovery-notes")
    assert saved.content == before


async def test_an_edit_publishes_the_edited_json_ld(simulated: Simulated) -> None:
    miner = simulated.app.state.miner_service
    miner.model = ScriptedModel(scripts=full_run("drug_targets"))
    request = MinerRequest(query="What does aspirin inhibit?", domain_tags=["drug_targets"])
    live = await miner.start(request.model_copy(update={"max_iterations": 8}), actor="ada",
                             caller="local")  # fmt: skip
    await live.stopped.wait()
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open(f"/miner/runs/{live.run_id}")
    await user.should_see(marker="approval-panel", retries=100)
    await user.should_see("✗ links: 1 link does not resolve")
    user.find(marker="edit").click()
    [editor] = user.find(marker="edit-jsonld").elements
    edited = {key: value for key, value in ASPIRIN.items() if key != "relatedTo"}
    editor.set_value(orjson.dumps({**edited, "name": "aspirin inhibits PTGS1"}).decode())
    user.find(marker="publish-edited").click()
    await user.should_see("· done", retries=200)

    async def decided() -> dict:
        # The page shows `done` from the run's last event; the run's row is written just after.
        for _ in range(200):
            [decision] = miner.get_run(live.run_id).decisions
            if "outcome" in decision:
                return decision
            await asyncio.sleep(0.05)
        raise AssertionError("the decision's outcome was never recorded")

    decision = await decided()
    assert (decision["type"], decision["by"]) == ("edit", "ada")
    assert "Published as did:dkg:" in decision["outcome"]
    knowledge = simulated.app.state.knowledge_service
    answer = await knowledge.query(
        "SELECT ?name WHERE { GRAPH ?g { <urn:graphwright:test:aspirin-cox1> "
        "<http://schema.org/name> ?name } }"
    )
    assert [row["name"]["value"] for row in answer.rows] == ["aspirin inhibits PTGS1"]


async def test_the_chats_miner_tool_call_opens_the_workspace_on_the_run(
    simulated: Simulated,
) -> None:
    # A real turn: the slash command calls the miner MCP server's tool, so the page gets a real
    # `tool_call` event. That server runs in its own process, without a model: its call fails
    # and starts no run; the run the workspace then follows is started here, on a scripted model.
    simulated.app.state.chat_service.create_conversation(
        ConversationCreate(id="c-tool", title="Tool"), actor="ada"
    )
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/c-tool")
    await user.should_see(marker="message-input")
    await user.should_not_see(marker="agent-workspace")  # until a run
    user.find(marker="message-input").type(
        '/miner.knowledge-miner "What does aspirin inhibit?" domainTags=drug_targets'
    )
    user.find(marker="send").click()
    # The miner server is a subprocess that a loaded machine can take many seconds to start.
    await user.should_see(marker="tool-call", retries=600)
    await user.should_see("miner.knowledge-miner", retries=20)
    await user.should_see(marker="agent-workspace", retries=20)  # by itself
    await user.should_see("waiting for the miner run to start…")

    miner = simulated.app.state.miner_service
    miner.model = ScriptedModel(scripts=full_run("drug_targets"))
    request = MinerRequest(
        query="What does aspirin inhibit?", domain_tags=["drug_targets"], max_iterations=8
    )
    live = await miner.start(request, actor="ada", caller="local")
    await user.should_see(f"run {live.run_id[:8]}", retries=200)
    await user.should_see(marker="approval-panel", retries=300)
    with user.scope(marker="agent-workspace"):
        await user.should_see(f"run {live.run_id[:8]} · waiting", retries=100)
