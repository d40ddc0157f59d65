"""The knowledge base pages in real Chromium against a real server (embedded Oxigraph with its
sample assets): the assets list and search, an asset page (JSON-LD, metadata, states), the
read-only SPARQL console, and approving and rejecting publication requests."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.web.browser import click, find, find_all, gone, sign_in, texts, wait
from tests.web.browser import testid as css
from tests.web.conftest import SCREENSHOTS, LiveUI

pytestmark = pytest.mark.timeout(300)


ASPIRIN = {
    "@context": "https://schema.org/",
    "@id": "http://purl.obolibrary.org/obo/CHEBI_15365",
    "@type": "Drug",
    "name": "aspirin (browser test)",
}


def ask(live: LiveUI, content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    with live.api() as api:
        made = api.post("/api/knowledge/requests", json={"content": content, **extra})
        assert made.status_code == 201, made.text
        return made.json()["data"]


def publish(live: LiveUI, content: dict[str, Any], **extra: Any) -> str:
    request = ask(live, content, **extra)
    with live.api() as api:
        done = api.post(f"/api/knowledge/requests/{request['id']}/approve")
        assert done.status_code == 200, done.text
        return done.json()["data"]["ual"]


def request_of(live: LiveUI, request_id: str) -> dict[str, Any]:
    with live.api() as api:
        return api.get(f"/api/knowledge/requests/{request_id}").json()["data"]


def test_assets_list_search_and_an_asset_with_its_states(browser: Any, live: LiveUI) -> None:
    first = publish(live, ASPIRIN, title="aspirin")
    second = publish(live, {**ASPIRIN, "name": "acetylsalicylic acid"}, revisionOf=first)
    sign_in(browser, live.url, live.token)
    click(browser, find(browser, "nav-kb"))
    wait(browser, lambda d: len(texts(d, "kb-asset-link")) >= 3)  # sample data and ours

    find(browser, "kb-search", "input").send_keys("acetylsalicylic")
    wait(browser, lambda d: texts(d, "kb-asset-link") == ["acetylsalicylic acid"])
    click(browser, find(browser, "kb-asset-link"))
    assert find(browser, "kb-ual").text == second
    jsonld = find(browser, "kb-jsonld").text
    assert '"acetylsalicylic acid"' in jsonld and "CHEBI_15365" in jsonld
    metadata = find(browser, "kb-metadata").text
    assert "Approved by" in metadata and first in metadata  # it revises the first

    states = wait(browser, lambda d: find_all(d, "kb-state"))
    assert len(states) == 2 and "this state" in states[1].text
    browser.save_screenshot(str(SCREENSHOTS / "ui-knowledge.png"))
    click(browser, states[0].find_element(By.TAG_NAME, "a"))
    wait(browser, lambda d: find(d, "kb-ual").text == first)
    assert '"aspirin (browser test)"' in find(browser, "kb-jsonld").text
    assert "Later states\n1" in find(browser, "kb-metadata").text


def test_sparql_console_answers_as_a_table_and_explains_refusals(
    browser: Any, live: LiveUI
) -> None:
    sign_in(browser, live.url, live.token)
    browser.get(live.url + "/kb/sparql")
    click(browser, find(browser, "sparql-run"))  # the example query
    rows = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, css("sparql-table")
                                                    + " tbody tr"))  # fmt: skip
    assert rows and "<did:dkg:" in rows[0].text
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "thead th")]
    assert headers == ["asset", "name", "Sample data"]  # the sample assets' rows say so

    box = find(browser, "sparql-query", "input")
    for query, reason in (
        ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", "this is an update (INSERT DATA)"),
        ("ASK { SERVICE <http://127.0.0.1/> { ?s ?p ?o } }", "SERVICE (a federated query)"),
    ):
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(query)
        box.send_keys(Keys.CONTROL, Keys.ENTER)  # the keyboard runs it too
        wait(browser, lambda d, r=reason: r in find(d, "sparql-error").text)
        # looked up again: each refusal replaces the previous one's alert
        assert find(browser, "sparql-error").get_attribute("role") == "alert"
        assert not find_all(browser, "sparql-table")

    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("ASK { GRAPH ?g { ?s ?p ?o } }")
    click(browser, find(browser, "sparql-run"))
    wait(browser, lambda d: "Answer: yes" in find(d, "sparql-answer").text)


def test_a_syntax_error_is_marked_in_the_sparql_console(browser: Any, live: LiveUI) -> None:
    sign_in(browser, live.url, live.token)
    browser.get(live.url + "/kb/sparql")
    box = find(browser, "sparql-query", "input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("SELECT ?s\nWHERE { ?s ?p ?o . FILTER( }")
    click(browser, find(browser, "sparql-run"))
    wait(browser, lambda d: "Syntax error at line 2, column 20" in find(d, "sparql-error").text)
    assert find(browser, "sparql-position").text == "Line 2, column 20"
    marker = find(browser, "sparql-marker").text.split("\n")
    assert marker == ["WHERE { ?s ?p ?o . FILTER( }", " " * 19 + "^"]
    # The editor's selection is the place the parser stopped at.
    selected = browser.execute_script(
        "const box = arguments[0]; return [box.selectionStart, box.selectionEnd];", box
    )
    assert selected == [len("SELECT ?s\n") + 19, len("SELECT ?s\n") + 20]


def test_pending_requests_are_approved_or_rejected(browser: Any, live: LiveUI) -> None:
    good = ask(live, {**ASPIRIN, "@id": "urn:test:good", "name": "good one"}, title="good one")
    bad = ask(live, {**ASPIRIN, "@id": "urn:test:bad", "name": "bad one"}, title="bad one")
    sign_in(browser, live.url, live.token)
    browser.get(live.url + "/kb/requests")
    card = find(browser, f"request-{good['id']}")
    assert "good one" in card.text and "pending" in card.text
    jsonld = card.find_element(By.CSS_SELECTOR, css("request-jsonld"))
    assert jsonld.is_displayed() and '"urn:test:good"' in jsonld.text  # open, beside Approve
    click(browser, card.find_element(By.CSS_SELECTOR, css("approve")))
    gone(browser, f"request-{good['id']}")
    approved = request_of(live, good["id"])
    assert approved["status"] == "published" and approved["decidedBy"] == "web tester"

    card = find(browser, f"request-{bad['id']}")
    click(browser, card.find_element(By.CSS_SELECTOR, css("reject")))
    click(browser, find(browser, "reject-confirm"))  # no reason: refused, and said so
    assert "A rejection needs a reason" in find(browser, "reject-problem").text
    assert find(browser, "reject-dialog").is_displayed()  # still open, to give the reason
    assert request_of(live, bad["id"])["status"] == "pending"
    find(browser, "reject-reason", "input").send_keys("no source given")
    click(browser, find(browser, "reject-confirm"))
    gone(browser, f"request-{bad['id']}")
    rejected = request_of(live, bad["id"])
    assert rejected["status"] == "rejected" and rejected["reason"] == "no source given"
