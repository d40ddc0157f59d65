"""Issue 31, point 17, in real Chromium: "aspirin" is listed twice, the sample's and the user's;
the sample one says so, in the assets list and in SPARQL answers, and the user removes the
sample data with a button and a confirmation that names what goes. A server of its own: the
sample data it removes is the other knowledge-page tests' fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.web.browser import click, find, gone, sign_in, texts, wait
from tests.web.browser import testid as css
from tests.web.conftest import LiveUI, serve_ui

pytestmark = pytest.mark.timeout(300)

SAMPLE_TITLES = [
    "Sample drugs and their targets",
    "Sample human genes",
    "Sample diseases and drugs used for them",
]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveUI]:
    with serve_ui(f"sqlite:///{tmp_path / 'test.db'}", tmp_path) as live:
        yield live


def table_rows(driver: Any) -> list[str]:
    cells = driver.find_elements(By.CSS_SELECTOR, css("sparql-table") + " tbody tr")
    return [row.text for row in cells]


def test_the_user_removes_the_sample_data_and_keeps_their_aspirin(
    browser: Any, live: LiveUI
) -> None:
    aspirin = {"@context": "https://schema.org/", "@id": "https://example.org/my-aspirin",
               "@type": "Drug", "name": "aspirin"}  # fmt: skip
    with live.api() as api:
        filed = api.post("/api/knowledge/requests", json={"content": aspirin, "title": "mine"})
        ours = api.post(f"/api/knowledge/requests/{filed.json()['data']['id']}/approve")
        assert ours.status_code == 200, ours.text
    sign_in(browser, live.url, live.token)
    browser.get(live.url + "/kb")
    wait(browser, lambda d: texts(d, "kb-asset-link").count("aspirin") == 2)
    assert "sample data" in browser.find_element(By.TAG_NAME, "body").text

    # SPARQL answers that name a sample asset say so.
    browser.get(live.url + "/kb/sparql")
    click(browser, find(browser, "sparql-run"))  # the example query: every asset's names
    rows = wait(browser, table_rows)
    assert any(row.endswith("sample data") for row in rows)
    ours_row = next(row for row in rows if "aspirin" in row and not row.endswith("sample data"))
    assert ours.json()["data"]["ual"] in ours_row

    browser.get(live.url + "/kb")
    click(browser, find(browser, "remove-sample-data"))
    dialog = find(browser, "sample-dialog")
    assert "Remove the sample data?" in dialog.text and "Your own assets stay" in dialog.text
    for title in SAMPLE_TITLES:  # the dialog names what goes
        assert title in find(browser, "sample-list").text
    click(browser, find(browser, "sample-confirm"))

    wait(browser, lambda d: texts(d, "kb-asset-link") == ["aspirin"])
    gone(browser, "remove-sample-data")
    assert "sample data" not in find(browser, "kb-assets").text
    browser.refresh()  # and after a reload
    wait(browser, lambda d: texts(d, "kb-asset-link") == ["aspirin"])
    assert not browser.find_elements(By.CSS_SELECTOR, css("remove-sample-data"))
