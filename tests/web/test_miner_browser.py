"""The miner's panels in real Chromium against a real server whose miner runs the real deepagents
graph on a scripted model: tag bar, Agent Workspace filling in live, the approval panel with the
confidence breakdown, approve (published), then a second run whose candidate is now a duplicate,
rejected with a reason; a custom tag, an edited publish, and the memory view's notes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi import FastAPI
from selenium.webdriver.common.keys import Keys

from tests.miner.scripted import ASPIRIN, ScriptedModel, full_run
from tests.web.browser import by_text, click, find, find_all, replace_text, shown, wait
from tests.web.conftest import SCREENSHOTS, LiveUI, serve_ui
from tests.web.test_browser import sign_in

pytestmark = pytest.mark.timeout(300)
TAG = "drug_targets"


@pytest.fixture(scope="module")
def miner_live(
    module_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveUI]:
    """A live server whose miner answers from a scripted model (the chat has no model)."""

    def scripted(app: FastAPI) -> None:
        app.state.miner_service.model = ScriptedModel(scripts={})

    home = tmp_path_factory.mktemp("miner-web-home")
    with serve_ui(module_database_url, home, prepare=scripted, kb_sample_data=False) as live:
        yield live


def text_of(driver: Any, name: str) -> str:
    return find(driver, name).text


def wait_text(driver: Any, name: str, needle: str) -> str:
    def seen(d: Any) -> str | None:
        text = text_of(d, name)
        return text if needle in text else None

    return wait(driver, seen)


def decided(driver: Any, live: LiveUI, run_id: str) -> dict[str, Any]:
    """The run's one decision once its outcome is stored (just after the page shows `done`)."""

    def stored(_: Any) -> dict[str, Any] | None:
        with live.api() as api:
            run = api.get(f"/api/miner/runs/{run_id}").json()["data"]
        return run["decisions"][0] if run["decisions"] and run["status"] == "done" else None

    return wait(driver, stored)


def mine(driver: Any, live: LiveUI) -> dict[str, Any]:
    """Start a run from the tag bar; wait for its approval panel; the run as the API sees it."""
    live.app.state.miner_service.model.scripts = full_run(TAG)
    click(driver, find(driver, "mine"))
    find(driver, "agent-workspace")
    find(driver, "approval-panel")
    # The panel can show before the run's row says "waiting": the row is written just after.
    return wait(driver, lambda _driver: waiting_run(live))


def open_new_conversation(driver: Any, live: LiveUI, title: str) -> None:
    with live.api() as api:
        conversation = api.post("/api/conversations", json={"title": title}).json()["data"]
    sign_in(driver, live.url, live.token)
    driver.get(f"{live.url}/c/{conversation['id']}")


def waiting_run(live: LiveUI) -> dict[str, Any] | None:
    with live.api() as api:
        runs = api.get("/api/miner/runs", params={"status": "waiting"}).json()["data"]["runs"]
    return runs[0] if runs else None


def test_mine_watch_the_workspace_approve_then_reject_a_duplicate(
    browser: Any, miner_live: LiveUI
) -> None:
    live = miner_live
    open_new_conversation(browser, live, "Miner tour")
    find(browser, "tag-bar")
    assert not any(e.is_displayed() for e in find_all(browser, "agent-workspace"))  # until a run
    click(browser, find(browser, f"tag-{TAG}"))
    wait(browser, lambda d: find(d, f"tag-{TAG}").get_attribute("aria-pressed") == "true")
    find(browser, "message-input", "input").send_keys("What does aspirin inhibit?")
    replace_text(find(browser, "max-iterations", "input"), "8")

    first = mine(browser, live)
    assert first["domainTags"] == [TAG]
    assert "Discover facts" in text_of(browser, "workspace-todos")
    subagents = text_of(browser, "workspace-subagents")
    for line in ("discovery: Find facts on aspirin (completed)",
                 "enrichment: Build candidates (completed)",
                 "validation: Validate candidates (completed)"):  # fmt: skip
        assert line in subagents
    assert "/research/aspirin.md (0.0 KB)" in text_of(browser, "workspace-files")
    memory = f"/memories/knowledge/{TAG}/discovery-notes.md"
    assert memory in text_of(browser, "workspace-memory")
    assert '"aspirin inhibits COX-1"' in text_of(browser, "pending-jsonld")
    confidence = text_of(browser, "confidence")
    assert "Confidence" in confidence and "(not valid)" in confidence
    assert "✓ jsonld" in confidence and "✓ shapes" in confidence and "✓ duplicates" in confidence
    assert "✗ links: 1 link(s) do not resolve" in confidence
    browser.save_screenshot(str(SCREENSHOTS / "ui-miner.png"))

    click(browser, find(browser, "approve"))
    wait_text(browser, "workspace-synthesis", "aspirin inhibits COX-1 (validated).")
    wait_text(browser, "workspace-status", "· done")
    decision = decided(browser, live, first["id"])
    assert (decision["type"], decision["by"]) == ("approve", "web tester")
    assert decision["outcome"].startswith("Published as did:dkg:")

    second = mine(browser, live)
    assert second["id"] != first["id"]
    wait_text(browser, "confidence", "✗ duplicates: already in the knowledge base")
    click(browser, find(browser, "reject"))
    find(browser, "reject-reason", "input").send_keys("Already published")
    click(browser, find(browser, "confirm-reject"))
    wait_text(browser, "workspace-status", "· done")
    decision = decided(browser, live, second["id"])
    assert (decision["type"], decision["message"]) == ("reject", "Already published")

    browser.get(f"{live.url}/miner/runs/{second['id']}")  # the run page shows the stored run
    wait_text(browser, "workspace-status", "· done")
    assert "validation: Validate candidates (completed)" in text_of(browser, "workspace-subagents")
    by_text(browser, "All runs")


def test_a_custom_tag_an_edited_publish_and_the_memory_notes(
    browser: Any, miner_live: LiveUI
) -> None:
    live = miner_live
    open_new_conversation(browser, live, "Miner edit")
    custom = find(browser, "custom-tag", "input")
    custom.send_keys("Not-A-Tag")
    click(browser, find(browser, "add-tag"))
    wait(browser, lambda d: shown(d, "Invalid domain tag(s) 'Not-A-Tag'"))
    replace_text(custom, "#rare_disease")
    click(browser, find(browser, "add-tag"))
    wait(browser, lambda d: find(d, "tag-rare_disease").get_attribute("aria-pressed") == "true")
    click(browser, find(browser, "tag-rare_disease"))  # added chosen; a click leaves it out
    wait(browser, lambda d: find(d, "tag-rare_disease").get_attribute("aria-pressed") == "false")
    click(browser, find(browser, f"tag-{TAG}"))
    find(browser, "message-input", "input").send_keys("What does aspirin inhibit?")

    run = mine(browser, live)
    assert run["domainTags"] == [TAG]
    click(browser, find(browser, "edit"))
    edited = {key: value for key, value in ASPIRIN.items() if key != "relatedTo"}
    edited["name"] = "aspirin inhibits PTGS1"
    replace_text(find(browser, "edit-jsonld", "input"), orjson.dumps(edited).decode())
    click(browser, find(browser, "publish-edited"))
    wait_text(browser, "workspace-status", "· done")
    decision = decided(browser, live, run["id"])
    assert (decision["type"], decision["by"]) == ("edit", "web tester")
    assert "Published as did:dkg:" in decision["outcome"]  # after deepagents' note on the edit
    subject = ASPIRIN["@id"]
    query = f"SELECT ?name WHERE {{ GRAPH ?g {{ <{subject}> <http://schema.org/name> ?name }} }}"
    with live.api() as api:
        answer = api.get("/api/knowledge/sparql", params={"query": query}).json()
    assert "aspirin inhibits PTGS1" in [
        row["name"]["value"] for row in answer["results"]["bindings"]
    ]

    browser.get(f"{live.url}/miner/memory")  # the run wrote #drug_targets' discovery notes
    click(browser, find(browser, f"note-{TAG}-discovery-notes"))
    wait_text(browser, "memory-note-title", f"/memories/knowledge/{TAG}/discovery-notes.md")
    editor = find(browser, "memory-editor", "input")
    wait(browser, lambda _d: editor.get_attribute("value"))
    editor.send_keys(Keys.CONTROL, Keys.END)
    editor.send_keys("\n- Pattern: ChEMBL before PubMed for potency\n")
    click(browser, find(browser, "memory-save"))
    wait(browser, lambda d: shown(d, f"Saved /memories/knowledge/{TAG}/discovery-notes.md"))
    with live.api() as api:
        note = api.get(f"/api/miner/memory/{TAG}/discovery-notes").json()["data"]
    assert note["content"].endswith("- Pattern: ChEMBL before PubMed for potency\n")
