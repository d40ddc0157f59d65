"""The UI in real Chromium (Debian's chromium and chromedriver, through selenium) against a real
graphwright server: sign in, slash commands, artifacts, export, Graph Mode editing, undo, live
changes from the REST API, past versions, and that every asset comes from the app itself."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.web.browser import (
    by_text,
    click,
    find,
    find_all,
    page_resources,
    sign_in,
    wait,
    wait_drawn,
)
from tests.web.conftest import SCREENSHOTS, LiveUI
from tests.web.test_browser_details import click_at_node

pytestmark = pytest.mark.timeout(600)


def send(driver: Any, text: str) -> None:
    box = find(driver, "message-input", "input")
    box.send_keys(text)
    click(driver, find(driver, "send"))
    wait(driver, lambda d: not find(d, "message-input", "input").get_attribute("value"))


def turn_finished(driver: Any, count: int) -> None:
    """Wait until `count` assistant messages exist and none is still working."""
    wait(
        driver,
        lambda d: (
            len(find_all(d, "message-assistant")) >= count
            and all(s.text != "working…" for s in find_all(d, "turn-status"))
        ),
    )


def test_the_app_serves_every_asset_itself(browser: Any, live: LiveUI) -> None:
    for path, ready in (
        ("/docs", ".swagger-ui .info .title"),
        ("/redoc", "redoc-wrap, .api-info, h1"),
        ("/signin", '[data-testid="token"]'),
    ):
        browser.get(live.url + path)
        wait(browser, lambda d, s=ready: d.find_elements(By.CSS_SELECTOR, s))
        hosts = {urlparse(url).netloc for url in page_resources(browser) if "://" in url}
        assert hosts == {urlparse(live.url).netloc}, (path, hosts)
    assert "graphwright" in browser.title or "Sign in" in browser.title


def test_chat_with_slash_commands_artifacts_and_export(
    browser: Any, live: LiveUI, downloads: Path
) -> None:
    sign_in(browser, live.url, live.token)
    assert "token=" not in browser.current_url and live.token not in browser.current_url
    session = browser.get_cookie("graphwright_session")
    assert session is not None and session["httpOnly"] and session["sameSite"] == "Strict"
    assert live.token not in session["value"]

    find(browser, "new-title", "input").send_keys("Browser tour")
    click(browser, find(browser, "create"))
    find(browser, "model-banner")
    send(browser, "/help")
    turn_finished(browser, 1)
    assert "kg.queryNeighbors" in find_all(browser, "assistant-text")[-1].text

    send(browser, "/kg.queryNeighbors TP53")
    turn_finished(browser, 2)
    card = find_all(browser, "tool-call")[-1]
    assert "kg.queryNeighbors" in card.text and "done in" in card.text
    wait(
        browser,
        lambda d: d.find_elements(
            By.CSS_SELECTOR, '[data-testid="graph-chart"][data-drawn-version]'
        ),
    )
    assert browser.find_elements(By.CSS_SELECTOR, '[data-testid="graph-chart"] canvas')

    send(browser, "/literature.searchPubMed TP53")
    turn_finished(browser, 3)
    links = find_all(browser, "artifact-link")
    reference_link = next(
        b for b in reversed(links) if "eferences" in b.text or "ibliograph" in b.text
    )
    click(browser, reference_link)
    rows = wait(
        browser, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="bibliography"] tbody tr')
    )
    assert rows
    assert browser.find_elements(
        By.CSS_SELECTOR, '[data-testid="bibliography"] a[href^="https://pubmed.ncbi.nlm.nih.gov/"]'
    )
    browser.save_screenshot(str(SCREENSHOTS / "ui-chat.png"))

    click(browser, find(browser, "export-bibtex"))
    bibtex = wait(browser, lambda d: _downloaded(downloads, ".bib"))
    assert bibtex.read_text().startswith("@article{")
    click(browser, find(browser, "export-ris"))
    assert "TY  - JOUR" in wait(browser, lambda d: _downloaded(downloads, ".ris")).read_text()

    picker = find(browser, "artifact-picker")
    click(browser, picker)
    option = wait(
        browser,
        lambda d: next(
            (e for e in d.find_elements(By.CSS_SELECTOR, ".q-menu .q-item")
             if e.text.startswith("Knowledge graph")),
            None,
        ),
    )  # fmt: skip
    click(browser, option)
    click(browser, find(browser, "graph-export"))
    click(browser, find(browser, "export-graphml"))
    graphml = wait(browser, lambda d: _downloaded(downloads, ".graphml"))
    assert "<graphml" in graphml.read_text()


def _downloaded(folder: Path, suffix: str) -> Path | None:
    done = [p for p in folder.iterdir() if p.name.endswith(suffix)]
    return done[0] if done else None


def test_graph_mode_editing_undo_live_changes_and_history(browser: Any, live: LiveUI) -> None:
    cid = live.slash_turn("/kg.queryNeighbors BRCA1")
    sign_in(browser, live.url, live.token)
    browser.get(f"{live.url}/c/{cid}")
    click(
        browser,
        by_text(browser, "GRAPH MODE", "button")
        if _has_upper(browser)
        else by_text(browser, "Graph Mode", "button"),
    )
    find(browser, "graph-editor")
    with live.api() as api:
        version = api.get(f"/api/graph/{cid}/summary").json()["data"]["version"]
    assert version >= 1
    wait_drawn(browser, str(version))

    find(browser, "node-label", "input").send_keys("CDKN1A")
    type_box = find(browser, "node-type", "input")
    type_box.send_keys(Keys.CONTROL, "a")
    type_box.send_keys("gene")
    click(browser, find(browser, "add-node"))
    wait_drawn(browser, str(version + 1))
    assert _labels(live, cid) >= {"CDKN1A"}

    ActionChains(browser).move_to_element(find(browser, "graph-title")).click().perform()
    ActionChains(browser).key_down(Keys.CONTROL).send_keys("z").key_up(Keys.CONTROL).perform()
    wait_drawn(browser, str(version + 2))
    assert "CDKN1A" not in _labels(live, cid)

    click(browser, find(browser, "undo"))
    wait_drawn(browser, str(version + 3))
    click(browser, find(browser, "redo"))
    wait_drawn(browser, str(version + 4))
    assert "CDKN1A" not in _labels(live, cid)  # undo undid the undo... then redo redid it

    with live.api() as api:
        started = time.perf_counter()
        added = api.post(f"/api/graph/{cid}/nodes", json={"label": "LIVE-NODE", "type": "gene"})
        assert added.status_code == 201, added.text
        live_version = added.json()["version"]
    wait_drawn(browser, str(live_version), seconds=10)
    assert time.perf_counter() - started < 10
    # The README shows TP53's details card, once the notifications have gone from the graph.
    toasts = "return [...document.querySelectorAll('.q-notification')].some(e => e.offsetParent);"
    wait(browser, lambda d: not d.execute_script(toasts))
    click_at_node(browser, "NCBIGene:7157")
    details = find(browser, "graph-details")
    wait(browser, lambda d: "Found by kg.queryNeighbors in turn 1" in details.text)
    ActionChains(browser).move_to_element(find(browser, "graph-title")).perform()
    chart = find(browser, "graph-chart")
    wait(browser, lambda d: "· Gene ·" not in chart.text)  # the hover card has gone
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(SCREENSHOTS / "ui-graph-mode.png"))

    click(
        browser,
        by_text(browser, "HISTORY", "div")
        if _has_upper(browser)
        else by_text(browser, "History", "div"),
    )
    version_row = find(browser, f"version-{version}")
    click(browser, version_row.find_element(By.CSS_SELECTOR, '[data-testid="view-version"]'))
    find(browser, "viewing")
    wait_drawn(browser, str(version))
    click(browser, find(browser, "back-to-live"))
    wait_drawn(browser, str(live_version))


def _has_upper(driver: Any) -> bool:
    return bool(driver.find_elements(By.XPATH, "//button[normalize-space(.)='GRAPH MODE']"))


def _labels(live: LiveUI, cid: str) -> set[str]:
    with live.api() as api:
        state = api.get(f"/api/graph/{cid}/state").json()["data"]
    return {node["label"] for node in state["nodes"]}


def test_api_paths_still_answer_json_with_the_ui_mounted(live: LiveUI) -> None:
    with live.api() as api:
        missing = api.get("/api/nothing-here")
        assert missing.json()["error"]["code"] == "not_found"
        wrong_method = api.put("/api/conversations")
        assert wrong_method.status_code == 405
        assert wrong_method.json()["error"]["code"] == "method_not_allowed"
        assert api.get("/").status_code in (200, 307)  # the UI, not JSON
