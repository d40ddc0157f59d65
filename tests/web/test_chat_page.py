"""The chat page and its artifacts panel through NiceGUI's `User` simulation, on real services and
a real database: how artifacts are shown and compared, cancel, and refusals as notifications
(on the chat page, and a rename on the conversations page).

graphwright's own MCP servers are left out here: the tiny `flaky` test server is the only one, so
a page's tool list (and a slash command) starts one small process instead of seven.
"""

from __future__ import annotations

from typing import Any

import pytest
from nicegui import ui
from nicegui.testing.user import User

from graphwright.artifacts.service import DeleteArtifactInput
from tests.web.chat_support import conversation, flaky_only, store_artifact
from tests.web.conftest import Simulated


@pytest.fixture
def mcp_servers() -> dict[str, Any]:
    return flaky_only()


def one(simulated: Simulated, marker: str) -> Any:
    [element] = simulated.user.find(marker=marker).elements
    return element


def notifications(simulated: Simulated) -> list[str]:
    return [str(message) for message in simulated.user.notify.messages]


async def test_a_markdown_artifact_is_rendered_and_sanitised(simulated: Simulated) -> None:
    conversation(simulated, "md")
    document = (
        "# Findings\n\n"
        "| Gene | Score |\n|------|-------|\n| TP53 | 0.9 |\n| BRCA1 | 0.7 |\n\n"
        "<script>window.stolen = document.cookie</script>\n\n"
        '<img src="x.png" onerror="window.stolen = 1">\n\n'
        "[a link](javascript:alert(1))\n"
    )
    store_artifact(simulated, "md", "report", "Findings", "text/markdown", document)
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/md")
    await user.should_see(marker="markdown-artifact", retries=100)
    await user.should_see("Document: Findings")  # the picker names the kind of artifact
    with user.scope(marker="markdown-artifact"):
        [rendered] = user.find(kind=ui.markdown).elements
    html = rendered.props["innerHTML"]
    assert "<table>" in html and "<td>TP53</td>" in html and "<td>0.7</td>" in html
    assert "<h1>Findings</h1>" in html
    lowered = html.lower()
    assert "<script" not in lowered and "stolen" not in lowered
    assert "onerror" not in lowered and "javascript:" not in lowered
    assert "x.png" in html  # the image stays, without its handler
    assert rendered.props["sanitize"] is False  # the server's sanitiser is the one that counts


@pytest.mark.parametrize(
    ("media_type", "text", "kind"),
    [
        ("text/csv", "gene,score\nTP53,0.9\nBRCA1,0.7\n", "text/csv"),
        ("application/json", '{"gene": "TP53", "score": 0.9}', "application/json"),
    ],
    ids=["csv", "json"],
)
async def test_another_type_is_shown_raw_with_a_download(
    simulated: Simulated, media_type: str, text: str, kind: str
) -> None:
    conversation(simulated, "raw")
    store_artifact(simulated, "raw", "table", "Scores", media_type, text)
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/raw")
    await user.should_see(marker="raw-artifact", retries=100)
    await user.should_see(f"{kind}: shown as it is")
    assert one(simulated, "raw-artifact").content == text.strip()  # as stored, not rendered
    await user.should_not_see(marker="markdown-artifact")
    user.find(marker="download-raw").click()
    downloaded = await user.download.next(timeout=10)
    assert downloaded.content == text.encode()


async def test_the_version_switcher_and_compare_show_an_earlier_version(
    simulated: Simulated,
) -> None:
    conversation(simulated, "vv")
    first = "# Plan\n\nStudy TP53 in liver.\n"
    second = "# Plan\n\nStudy TP53 in kidney.\n"
    assert store_artifact(simulated, "vv", "plan", "Plan", "text/markdown", first) == 1
    assert store_artifact(simulated, "vv", "plan", "Plan", "text/markdown", second) == 2
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/vv")
    await user.should_see(marker="markdown-artifact", retries=100)

    def shown() -> str:
        with user.scope(marker="markdown-artifact"):
            [rendered] = user.find(kind=ui.markdown).elements
        return rendered.props["innerHTML"]

    assert "kidney" in shown()  # the latest version first
    versions = one(simulated, "artifact-version")
    assert versions.value == 2 and list(versions.options) == [1, 2]

    user.find(marker="artifact-version").click()  # opens the list of versions
    user.find(versions.options[1]).click()
    assert versions.value == 1
    await user.should_see(kind=ui.markdown, content="Study TP53 in liver.", retries=50)
    assert "liver" in shown() and "kidney" not in shown()

    compare = one(simulated, "artifact-compare")
    user.find(marker="artifact-compare").click()
    user.find(compare.options[2]).click()
    assert compare.value == 2
    user.find(marker="artifact-compare-go").click()
    await user.should_see(marker="artifact-diff", retries=50)
    await user.should_see("What changed from v1 to v2")
    with user.scope(marker="artifact-diff"):
        [diff] = user.find(kind=ui.code).elements
    assert "-Study TP53 in liver." in diff.content.splitlines()
    assert "+Study TP53 in kidney." in diff.content.splitlines()


async def _start_a_slow_turn(simulated: Simulated, conversation_id: str) -> User:
    """Sign in, open the conversation and send a tool call that runs for a minute."""
    conversation(simulated, conversation_id)
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open(f"/c/{conversation_id}")
    await user.should_see(marker="message-input")
    await user.should_not_see(marker="cancel")  # nothing is running yet
    user.find(marker="message-input").type("/flaky.sleep 60")
    user.find(marker="send").click()
    # the flaky server starts on first use
    await user.should_see(marker="tool-call", content="flaky.sleep · running", retries=600)
    return user


async def test_cancel_stops_a_running_turn(simulated: Simulated) -> None:
    chat = simulated.app.state.chat_service
    user = await _start_a_slow_turn(simulated, "slow")
    await user.should_see(marker="cancel")
    assert not one(simulated, "send").enabled  # one turn at a time

    user.find(marker="cancel").click()
    await user.should_see("Cancelled", retries=100)  # the notification
    await user.should_see(marker="turn-status", content="cancelled", retries=100)
    await user.should_not_see(marker="cancel", retries=50)
    assert one(simulated, "send").enabled
    # the call that was cut short no longer says it is running
    await user.should_see(marker="tool-call", content="flaky.sleep · cancelled")
    await user.should_not_see(content="flaky.sleep · running")
    assert "slow" not in chat._running
    [*_, stored] = chat.get_conversation("slow")["messages"]
    assert stored["role"] == "assistant" and stored["status"] == "cancelled"
    assert stored["toolCalls"] == []  # a call cut short is not stored (ChatService)

    # the page opened again shows the stored turn as cancelled
    await user.open("/c/slow")
    await user.should_see(marker="turn-status", content="cancelled", retries=50)


async def test_a_refused_mode_switch_is_a_readable_notification(simulated: Simulated) -> None:
    chat = simulated.app.state.chat_service
    user = await _start_a_slow_turn(simulated, "busy")

    switch = one(simulated, "mode-switch")
    with user.client:
        switch.value = "graph_mode"  # the person picks Graph Mode while the turn runs
    await user.should_see("cancel it before switching mode", retries=50)
    [message] = [m for m in notifications(simulated) if "switching mode" in m]
    assert message.startswith("A turn is running in conversation 'busy'")
    assert "Traceback" not in message and "Conflict" not in message
    assert switch.value == "normal"  # the switch goes back to where the conversation is
    assert chat.get_conversation("busy")["mode"] == "normal"
    user.find(marker="cancel").click()
    await user.should_see(marker="turn-status", content="cancelled", retries=100)


async def test_an_artifact_deleted_meanwhile_is_a_readable_notification(
    simulated: Simulated,
) -> None:
    conversation(simulated, "gone")
    for text in ("one\n", "two\n"):
        store_artifact(simulated, "gone", "notes", "Notes", "text/markdown", text)
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open("/c/gone")
    await user.should_see(marker="markdown-artifact", retries=100)
    simulated.app.state.artifact_service.delete_artifact(
        DeleteArtifactInput(artifact_id="notes"), context_id="gone"
    )
    compare = one(simulated, "artifact-compare")
    user.find(marker="artifact-compare").click()
    user.find(compare.options[1]).click()
    user.find(marker="artifact-compare-go").click()
    await user.should_see("No artifact 'notes' in this conversation", retries=50)
    await user.should_not_see(marker="artifact-diff")
    assert not any("Traceback" in m or "went wrong" in m for m in notifications(simulated))


async def test_a_title_too_long_is_refused_with_the_reason(simulated: Simulated) -> None:
    conversation(simulated, "named")
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.should_see(marker="conversation-named", retries=50)
    with user.scope(marker="conversation-named"):
        user.find(marker="rename").click()
    await user.should_see(marker="rename-title")
    user.find(marker="rename-title").clear().type("x" * 501)
    user.find(marker="rename-save").click()
    await user.should_see("title: String should have at most 500 characters", retries=50)
    assert not any("went wrong" in m for m in notifications(simulated))
    title = simulated.app.state.chat_service.get_conversation("named")["title"]
    assert title == "Conversation named"
