"""The miner's panels in real Chromium against a real server whose miner runs the real deepagents
graph on a scripted model: tag bar, Agent Workspace filling in live, the approval panel with the
confidence breakdown, the same candidate approved in the knowledge base's requests page (one
queue), the run's page (steps, candidates with their checks, decisions), then a second run whose
candidate says nothing new and is not offered; a custom tag, an edited publish, and the memory
view (what memory is, Save only once a note changed)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi import FastAPI
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.miner.scripted import ASPIRIN, ScriptedModel, full_run
from tests.web.browser import click, find, find_all, replace_text, shown, wait
from tests.web.conftest import SCREENSHOTS, LiveUI, serve_ui
from tests.web.test_browser import sign_in

pytestmark = pytest.mark.timeout(300)
TAG = "drug_targets"
# Another fact than ASPIRIN (which the first test publishes), so it is offered as new.
PTGS1 = {**ASPIRIN, "@id": "urn:graphwright:test:aspirin-ptgs1", "identifier": "test:ptgs1"}


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


def mine(driver: Any, live: LiveUI, candidate: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start a run from the tag bar; wait for its approval panel; the run as the API sees it."""
    live.app.state.miner_service.model.scripts = full_run(TAG, candidate=candidate)
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
    click(driver, find(driver, "open-miner"))  # the miner's bar is folded until asked for


def waiting_run(live: LiveUI) -> dict[str, Any] | None:
    with live.api() as api:
        runs = api.get("/api/miner/runs", params={"status": "waiting"}).json()["data"]["runs"]
    return runs[0] if runs else None


def test_mine_approve_in_the_one_queue_and_a_duplicate_is_not_offered(
    browser: Any, miner_live: LiveUI
) -> None:
    live = miner_live
    open_new_conversation(browser, live, "Miner tour")
    browser.get(f"{live.url}/miner/memory")  # before any run: what memory is, and none yet
    assert "Memory is what the knowledge miner keeps" in browser.page_source
    assert "No tag has notes yet" in text_of(browser, "memory-empty")
    browser.back()
    click(browser, find(browser, "open-miner"))
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
    assert "✗ links: 1 link does not resolve" in confidence
    browser.save_screenshot(str(SCREENSHOTS / "ui-miner.png"))

    # The same candidate waits in the knowledge base's queue, linked to its run: approve there.
    browser.get(f"{live.url}/kb/requests")
    run_link = find(browser, "request-run")
    assert run_link.get_attribute("href").endswith(f"/miner/runs/{first['id']}")
    assert "aspirin and COX-1" in text_of(browser, "requests")
    click(browser, find(browser, "approve"))
    decision = decided(browser, live, first["id"])
    assert (decision["type"], decision["by"]) == ("approve", "web tester")
    assert decision["outcome"].startswith("Published as did:dkg:")

    # The run's page: its steps, subagents, candidate with checks and confidence, decisions.
    browser.get(f"{live.url}/miner/runs/{first['id']}")
    wait_text(browser, "workspace-status", "· done")
    links = browser.find_elements(By.LINK_TEXT, "Open the run")
    assert not any(link.is_displayed() for link in links)  # no link to the page it is on
    wait_text(browser, "run-candidates", "published")
    candidates = text_of(browser, "run-candidates")
    assert "Confidence" in candidates and "✓ duplicates" in candidates  # checks it was approved on
    assert "approve by web tester" in text_of(browser, "run-decisions")
    steps = text_of(browser, "run-steps")
    for agent in ("orchestrator", "discovery", "enrichment", "validation"):
        assert agent in steps
    click(browser, find_all(browser, "run-agent")[-1])  # validation's steps, unfolded
    wait_text(browser, "run-steps", "validate_candidate(")
    assert f"wrote {memory}" in text_of(browser, "run-memory")

    # A second run on the same question: its candidate says nothing new, so nobody is asked.
    open_new_conversation(browser, live, "Miner again")
    click(browser, find(browser, f"tag-{TAG}"))
    find(browser, "message-input", "input").send_keys("What does aspirin inhibit?")
    live.app.state.miner_service.model.scripts = full_run(TAG)
    click(browser, find(browser, "mine"))
    wait_text(browser, "workspace-status", "· done")
    assert not find_all(browser, "approval-panel")
    second = latest_run(live)
    assert second["id"] != first["id"] and second["status"] == "done"
    [dropped] = second["decisions"]
    assert dropped["dropped"] and "nothing new" in dropped["message"]
    browser.get(f"{live.url}/miner/runs/{second['id']}")
    wait_text(browser, "run-candidates", "not offered")
    assert "nothing new" in text_of(browser, "run-candidates")


def latest_run(live: LiveUI) -> dict[str, Any]:
    with live.api() as api:
        return api.get("/api/miner/runs").json()["data"]["runs"][0]


def test_a_custom_tag_an_edited_publish_and_the_memory_notes(
    browser: Any, miner_live: LiveUI
) -> None:
    live = miner_live
    open_new_conversation(browser, live, "Miner edit")
    custom = find(browser, "custom-tag", "input")
    custom.send_keys("Not-A-Tag")
    click(browser, find(browser, "add-tag"))
    wait(browser, lambda d: shown(d, "Invalid domain tag 'Not-A-Tag'"))
    replace_text(custom, "#rare_disease")
    click(browser, find(browser, "add-tag"))
    wait(browser, lambda d: find(d, "tag-rare_disease").get_attribute("aria-pressed") == "true")
    click(browser, find(browser, "tag-rare_disease"))  # added chosen; a click leaves it out
    wait(browser, lambda d: find(d, "tag-rare_disease").get_attribute("aria-pressed") == "false")
    click(browser, find(browser, f"tag-{TAG}"))
    find(browser, "message-input", "input").send_keys("What does aspirin inhibit?")

    run = mine(browser, live, candidate=PTGS1)
    assert run["domainTags"] == [TAG]
    click(browser, find(browser, "edit"))
    edited = {key: value for key, value in PTGS1.items() if key != "relatedTo"}
    edited["name"] = "aspirin inhibits PTGS1"
    replace_text(find(browser, "edit-jsonld", "input"), orjson.dumps(edited).decode())
    click(browser, find(browser, "publish-edited"))
    wait_text(browser, "workspace-status", "· done")
    decision = decided(browser, live, run["id"])
    assert (decision["type"], decision["by"]) == ("edit", "web tester")
    assert "Published as did:dkg:" in decision["outcome"]  # after deepagents' note on the edit
    subject = PTGS1["@id"]
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
    save = find(browser, "memory-save")
    assert not save.is_enabled()  # nothing to save until the note changes
    editor.send_keys(Keys.CONTROL, Keys.END)
    editor.send_keys("\n- Pattern: ChEMBL before PubMed for potency\n")
    wait(browser, lambda _d: save.is_enabled())
    click(browser, save)
    wait(browser, lambda d: shown(d, f"Saved /memories/knowledge/{TAG}/discovery-notes.md"))
    wait(browser, lambda _d: not save.is_enabled())
    with live.api() as api:
        note = api.get(f"/api/miner/memory/{TAG}/discovery-notes").json()["data"]
    assert note["content"].endswith("- Pattern: ChEMBL before PubMed for potency\n")
