"""Issue 31, point 12, in real Chromium: a clicked node's details are a readable card beside the
graph (name, type, ids linked to their Bioregistry resolver, equivalent ids, PubMed evidence,
provenance by tool and turn), on screen without scrolling at 1280x720 and 1920x1080 with no
serious axe-core violation; an edge shows its predicate on hover, and a small graph draws its
predicates on the canvas."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from tests.web.axe import axe_missing, severe_violations
from tests.web.browser import find, sign_in, wait, wait_drawn
from tests.web.conftest import LiveUI
from tests.web.test_browser_editor import new_graph, open_editor

pytestmark = pytest.mark.timeout(300)

CHART_JS = "const chart = getElement(arguments[0].id.replace(/^c/, '')).chart;"

# Each node's centre and the chart's box, in viewport pixels.
PIXELS = (
    CHART_JS
    + """
const series = chart.getOption().series[0];
const box = arguments[0].getBoundingClientRect();
const at = {};
for (const d of series.data) {
  const [x, y] = chart.convertToPixel({seriesIndex: 0}, [d.x, d.y]);
  at[d.id] = [box.left + x, box.top + y];
}
return at;
"""
)

# The texts ECharts has drawn on the canvas (node and edge labels), from zrender's display list.
DRAWN_TEXTS = (
    CHART_JS
    + """
return chart.getZr().storage.getDisplayList(true)
  .filter(el => el.style && typeof el.style.text === 'string' && !el.invisible)
  .map(el => el.style.text);
"""
)

BOXES = """
const box = (el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
window.scrollTo(0, 0);
return {chart: box(arguments[0]), card: box(arguments[1]), scrollY: window.scrollY,
        width: innerWidth, height: innerHeight};
"""


CENTRE = """
const r = arguments[0].getBoundingClientRect();
return [r.x + r.width / 2, r.y + r.height / 2];
"""


def point_at(driver: Any, chart: Any, x: float, y: float) -> ActionChains:
    """The mouse moved to viewport pixel (x, y) over the chart (selenium counts from its centre)."""
    cx, cy = driver.execute_script(CENTRE, chart)
    return ActionChains(driver).move_to_element_with_offset(chart, int(x - cx), int(y - cy))


def click_at_node(driver: Any, node_id: str) -> None:
    chart = find(driver, "graph-chart")
    x, y = wait(driver, lambda d: d.execute_script(PIXELS, chart).get(node_id))
    point_at(driver, chart, x, y).click().perform()
    wait(driver, lambda d: find(d, "selected-node").get_attribute("data-node-id") == node_id)


def graph_from_a_turn(live: LiveUI) -> str:
    """A Graph Mode graph seeded from a slash command's knowledge graph (so its items carry
    that call's id as provenance), with an equivalent id added to TP53."""
    with live.api() as api:
        turn = api.post("/api/chat", json={"message": "/kg.queryNeighbors TP53", "stream": False})
        assert turn.status_code == 200, turn.text
        cid = turn.json()["data"]["conversationId"]
        switched = api.patch(f"/api/conversations/{cid}", json={"mode": "graph_mode"})
        assert switched.status_code == 200, switched.text
        patch = {"data": {"equivalent_ids": ["HGNC:11998"]}}
        changed = api.patch(f"/api/graph/{cid}/nodes/NCBIGene:7157", json=patch)
        assert changed.status_code == 200, changed.text
    return cid


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_a_clicked_node_is_a_readable_card_beside_the_graph(
    browser: Any, live: LiveUI, size: tuple[int, int]
) -> None:
    cid = graph_from_a_turn(live)
    before = browser.get_window_size()
    browser.set_window_size(*size)
    try:
        sign_in(browser, live.url, live.token)
        browser.get(f"{live.url}/c/{cid}/graph")
        with live.api() as api:
            version = api.get(f"/api/graph/{cid}/summary").json()["data"]["version"]
        wait_drawn(browser, str(version))
        click_at_node(browser, "NCBIGene:7157")
        card = find(browser, "graph-details")
        wait(browser, lambda d: "Found by kg.queryNeighbors in turn 1" in card.text)
        text = card.text
        assert find(browser, "selected-node").text == "TP53"
        assert "Gene" in text and "cmd-" not in text and "provenance:" not in text
        assert "“/kg.queryNeighbors TP53”" in text and "Imported into this graph" in text, text
        hrefs = {a.text: a.get_attribute("href") for a in card.find_elements(By.TAG_NAME, "a")}
        assert hrefs["NCBIGene:7157"] == "https://bioregistry.io/ncbigene:7157"
        assert hrefs["HGNC:11998"] == "https://bioregistry.io/hgnc:11998"  # equivalent id
        assert hrefs["PMID:1978757"] == "https://pubmed.ncbi.nlm.nih.gov/1978757/"

        boxes = browser.execute_script(BOXES, find(browser, "graph-chart"), card)
        chart, shown = boxes["chart"], boxes["card"]
        assert boxes["scrollY"] == 0
        for box in (chart, shown):  # both whole on screen, with the page not scrolled
            assert box["top"] >= 0 and box["bottom"] <= boxes["height"] + 1, boxes
            assert box["left"] >= 0 and box["right"] <= boxes["width"] + 1, boxes
        assert shown["left"] >= chart["right"] - 1, boxes  # beside the graph, not below it
        assert shown["top"] < chart["bottom"] and chart["top"] < shown["bottom"], boxes
        if not axe_missing():
            assert severe_violations(browser) == []
    finally:
        browser.set_window_size(before["width"], before["height"])


def test_an_edge_shows_its_predicate_on_hover_and_a_small_graph_on_the_canvas(
    browser: Any, live: LiveUI
) -> None:
    version = new_graph(live, "predicates")
    open_editor(browser, live, "predicates", version)
    chart = find(browser, "graph-chart")
    drawn = wait(browser, lambda d: d.execute_script(DRAWN_TEXTS, chart))
    for predicate in ("interacts_with", "associated_with", "treated_by", "affected_by"):
        assert predicate in drawn, drawn  # drawn on the canvas, no hover needed

    # Hover the middle of TP53 -> BRCA1 (a curve of curveness 0.08, as ECharts bends it).
    at = browser.execute_script(PIXELS, chart)
    (x1, y1), (x2, y2) = at["HGNC:11998"], at["HGNC:1100"]
    cx, cy = (x1 + x2) / 2 - (y1 - y2) * 0.08, (y1 + y2) / 2 - (x2 - x1) * 0.08
    mx, my = 0.25 * x1 + 0.5 * cx + 0.25 * x2, 0.25 * y1 + 0.5 * cy + 0.25 * y2
    point_at(browser, chart, mx, my).perform()
    tip = wait(browser, lambda d: "TP53" in chart.text and "BRCA1" in chart.text and chart.text)
    assert "interacts_with" in tip, tip

    point_at(browser, chart, mx, my).click().perform()  # and a click opens the edge's card
    heading = find(browser, "selected-edge")
    assert heading.text == "TP53 → BRCA1"
    card = find(browser, "graph-details")
    assert "interacts_with" in card.text and "added in Graph Mode" not in card.text
    pubmed = card.find_element(By.LINK_TEXT, "PMID:12345").get_attribute("href")
    assert pubmed == "https://pubmed.ncbi.nlm.nih.gov/12345/"
