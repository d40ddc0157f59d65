"""The Graph Mode editor in real Chromium, feature by feature: node details and editing, deleting
an edge, bulk delete with its preview (and cancel), merging duplicates, Ctrl+Z and
Ctrl+Shift+Z, history diff and revert, analysis, layouts, and the artifact view's search and
type filter. Then the accessible basics: the main actions from the keyboard, a name on every
control, WCAG contrast of the text on screen, and a 1280x720 window without sideways scroll.
Last, the graph's right-click menu: start an edge from a node, and delete it."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from graphwright.core.palette import type_colour
from tests.web.browser import (
    by_text,
    click,
    find,
    find_all,
    gone,
    sign_in,
    texts,
    wait,
    wait_drawn,
)
from tests.web.browser import (
    testid as css,
)
from tests.web.conftest import LiveUI

pytestmark = pytest.mark.timeout(300)


NODES = [
    ("HGNC:11998", "TP53", "gene", 0, 0),
    ("HGNC:1100", "BRCA1", "gene", 300, 0),
    ("MONDO:0007254", "breast cancer", "disease", 300, 300),
    ("CHEBI:15365", "aspirin", "chemical", 0, 300),
    ("NCBIGene:7157", "TP53 (NCBI)", "gene", -250, 150),
]
LINKS = [
    ("HGNC:11998", "HGNC:1100", "interacts_with", ["PMID:12345"]),
    ("HGNC:1100", "MONDO:0007254", "associated_with", []),
    ("MONDO:0007254", "CHEBI:15365", "treated_by", []),
    ("NCBIGene:7157", "CHEBI:15365", "affected_by", []),
]


def new_graph(live: LiveUI, cid: str) -> int:
    graph = {
        "nodes": [
            {"id": i, "name": n, "category": t, "position": {"x": x, "y": y}}
            for i, n, t, x, y in NODES
        ],
        "links": [
            {"source": s, "target": t, "label": label, "evidence": evidence}
            for s, t, label, evidence in LINKS
        ],
    }
    with live.api() as api:
        made = api.post("/api/conversations", json={"id": cid, "mode": "graph_mode"})
        assert made.status_code in (200, 201), made.text
        done = api.post(f"/api/graph/{cid}/import", json={"graph": graph})
        assert done.status_code in (200, 201), done.text
        return int(done.json()["version"])


def state(live: LiveUI, cid: str) -> dict[str, Any]:
    with live.api() as api:
        return api.get(f"/api/graph/{cid}/state").json()["data"]


def labels(live: LiveUI, cid: str) -> dict[str, str]:
    return {n["id"]: n["label"] for n in state(live, cid)["nodes"]}


def current_version(live: LiveUI, cid: str) -> int:
    with live.api() as api:
        return int(api.get(f"/api/graph/{cid}/summary").json()["data"]["version"])


def node_offset(driver: Any, node_id: str) -> tuple[int, int]:
    """Where ECharts drew the node, from the chart's centre (as selenium offsets count)."""
    chart = find(driver, "graph-chart")
    dx, dy = driver.execute_script(
        """
        const el = arguments[0];
        const chart = getElement(el.id.replace(/^c/, '')).chart;
        const series = chart.getOption().series[0];
        const node = series.data.find(d => d.id === arguments[1]);
        const [x, y] = chart.convertToPixel({seriesIndex: 0}, [node.x, node.y]);
        const box = el.getBoundingClientRect();
        return [x - box.width / 2, y - box.height / 2];
        """,
        chart,
        node_id,
    )
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", chart)
    return int(dx), int(dy)


def click_node(driver: Any, node_id: str, *, right: bool = False) -> None:
    """A real mouse click (or right-click, after a click selects it) on the node, where ECharts
    drew it."""
    chart = find(driver, "graph-chart")
    dx, dy = node_offset(driver, node_id)
    ActionChains(driver).move_to_element_with_offset(chart, int(dx), int(dy)).click().perform()
    wait(driver, lambda d: find(d, "selected-node").get_attribute("data-node-id") == node_id)
    if right:
        menu = ActionChains(driver).move_to_element_with_offset(chart, int(dx), int(dy))
        menu.context_click().perform()


def pick(driver: Any, name: str, value: str) -> None:
    """Open a select, type to narrow it where it takes typing, and choose the option."""
    click(driver, find(driver, name))
    typed = driver.switch_to.active_element
    if typed.tag_name == "input" and typed.get_attribute("type") != "hidden":
        typed.send_keys(value)
    option = wait(
        driver,
        lambda d: next(
            (e for e in d.find_elements(By.CSS_SELECTOR, ".q-menu .q-item")
             if value in e.text and e.is_displayed()),
            None,
        ),
    )  # fmt: skip
    click(driver, option)
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)


def tab(driver: Any, name: str) -> None:
    click(driver, find(driver, f"tab-{name}"))


def open_editor(driver: Any, live: LiveUI, cid: str, version: int) -> None:
    sign_in(driver, live.url, live.token)
    driver.get(f"{live.url}/c/{cid}/graph")
    wait_drawn(driver, str(version))


def test_details_edit_delete_bulk_merge_and_keyboard_undo_redo(browser: Any, live: LiveUI) -> None:
    version = new_graph(live, "edit")
    open_editor(browser, live, "edit", version)

    click_node(browser, "HGNC:11998")
    edges = find_all(browser, "node-edge")
    assert len(edges) == 1 and "interacts_with" in edges[0].text
    pubmed = edges[0].find_element(By.TAG_NAME, "a")
    assert pubmed.get_attribute("href") == "https://pubmed.ncbi.nlm.nih.gov/12345/"
    box = find(browser, "edit-label", "input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("TP53 tumour protein")
    click(browser, find(browser, "save-node"))
    version += 1
    wait_drawn(browser, str(version))
    assert labels(live, "edit")["HGNC:11998"] == "TP53 tumour protein"

    click_node(browser, "CHEBI:15365")
    unlink = find(browser, "node-edge").find_element(By.CSS_SELECTOR, "button")
    click(browser, unlink)  # the aspirin edge listed first
    version += 1
    wait_drawn(browser, str(version))
    assert len(state(live, "edit")["edges"]) == 3

    tab(browser, "edit")
    pick(browser, "bulk-types", "Disease")
    click(browser, find(browser, "bulk-preview"))
    dialog = find(browser, "bulk-dialog")
    assert "This deletes 1 nodes and 1 edges." in dialog.text and "breast cancer" in dialog.text
    click(browser, find(browser, "bulk-cancel"))
    gone(browser, "bulk-dialog")
    assert current_version(live, "edit") == version  # cancel changed nothing
    click(browser, find(browser, "bulk-preview"))
    click(browser, find(browser, "bulk-confirm"))
    version += 1
    wait_drawn(browser, str(version))
    assert "MONDO:0007254" not in labels(live, "edit")

    pick(browser, "merge-keep", "HGNC:11998")
    pick(browser, "merge-remove", "NCBIGene:7157")
    click(browser, find(browser, "merge"))
    version += 1
    wait_drawn(browser, str(version))
    assert "NCBIGene:7157" not in labels(live, "edit")

    focus = find(browser, "graph-title")
    ActionChains(browser).move_to_element(focus).click().perform()
    ActionChains(browser).key_down(Keys.CONTROL).send_keys("z").key_up(Keys.CONTROL).perform()
    version += 1
    wait_drawn(browser, str(version))
    assert "NCBIGene:7157" in labels(live, "edit")  # the merge undone
    # the picker took the focus back, and shortcuts wait while a field has it
    ActionChains(browser).move_to_element(focus).click().perform()
    chord = ActionChains(browser).key_down(Keys.CONTROL).key_down(Keys.SHIFT).send_keys("z")
    chord.key_up(Keys.SHIFT).key_up(Keys.CONTROL).perform()
    version += 1
    wait_drawn(browser, str(version))
    assert "NCBIGene:7157" not in labels(live, "edit")  # and redone


def test_history_diff_and_revert_analysis_and_layouts(browser: Any, live: LiveUI) -> None:
    first = new_graph(live, "history")
    with live.api() as api:
        api.delete("/api/graph/history/nodes/CHEBI:15365").raise_for_status()
    version = first + 1
    open_editor(browser, live, "history", version)

    tab(browser, "history")
    find(browser, f"version-{version}")
    find(browser, "diff-from", "input").send_keys(str(first))
    find(browser, "diff-to", "input").send_keys(str(version))
    click(browser, find(browser, "diff"))
    diff = find(browser, "graph-diff")
    assert "Nodes removed: 1" in diff.text and "aspirin (CHEBI:15365)" in diff.text
    assert "Links removed: 2" in diff.text
    assert "breast cancer (MONDO:0007254) → aspirin (CHEBI:15365) (treated_by)" in diff.text
    close = diff.find_element(By.XPATH, ".//button[normalize-space(.)='Close' or .='CLOSE']")
    click(browser, close)
    row = find(browser, f"version-{first}")
    click(browser, row.find_element(By.CSS_SELECTOR, css("revert-version")))
    version += 1
    wait_drawn(browser, str(version))
    assert "CHEBI:15365" in labels(live, "history")

    tab(browser, "analysis")
    click(browser, find(browser, "run-centrality"))
    results = find(browser, "analysis-results")
    wait(browser, lambda d: "Most central by degree" in find(d, "analysis-results").text)
    assert "2. BRCA1 (HGNC:1100) 0.5" in results.text
    pick(browser, "path-from", "HGNC:11998")
    pick(browser, "path-to", "CHEBI:15365")
    click(browser, find(browser, "run-path"))
    wait(browser, lambda d: "Shortest path: 3 steps" in find(d, "analysis-results").text)
    assert "TP53 → BRCA1 → breast cancer → aspirin" in find(browser, "analysis-results").text
    highlighted = browser.execute_script(
        "const el = arguments[0];"
        "const data = getElement(el.id.replace(/^c/, '')).chart.getOption().series[0].data;"
        "return data.filter(d => d.itemStyle && d.itemStyle.borderWidth).map(d => d.id).sort();",
        find(browser, "graph-chart"),
    )
    assert highlighted == sorted(["HGNC:11998", "HGNC:1100", "MONDO:0007254", "CHEBI:15365"])
    click(browser, find(browser, "run-communities"))
    wait(browser, lambda d: "communities (modularity" in find(d, "analysis-results").text)

    pick(browser, "layout-kind", "circular")
    click(browser, find(browser, "apply-layout"))
    version += 1
    wait_drawn(browser, str(version))
    moved = {n["id"]: n["position"] for n in state(live, "history")["nodes"]}
    assert moved["HGNC:11998"] != {"x": 0, "y": 0} and all(moved.values())


def test_the_history_says_each_change_in_words_with_undo_under_it(
    browser: Any, live: LiveUI
) -> None:
    version = new_graph(live, "words")
    with live.api() as api:
        node = {"id": "NCBIGene:4609", "label": "MYC", "type": "Gene"}
        api.post("/api/graph/words/nodes", json=node).raise_for_status()
        link = {"source": "HGNC:11998", "target": "NCBIGene:4609", "label": "regulates"}
        api.post("/api/graph/words/edges", json=link).raise_for_status()
    version += 2
    open_editor(browser, live, "words", version)
    click(browser, find(browser, "undo"))
    version += 1
    wait_drawn(browser, str(version))
    tab(browser, "history")
    wait(browser, lambda d: len(texts(d, "history-entry")) == 3)
    entries = texts(browser, "history-entry")
    assert entries[0].startswith(f"v{version - 1}\nlinked TP53 to MYC (regulates) (undone)")
    assert f"v{version}\nundid: linked TP53 to MYC (regulates)" in entries[0]  # under it
    assert entries[1].startswith(f"v{version - 2}\nadded node MYC (Gene)")
    assert entries[2].startswith("v1\nimported 5 nodes and 4 links")
    for term in ("unstash", "resultId", "import-", "addNode", "add_node"):
        assert term not in " ".join(entries)
    click(browser, find(browser, "redo"))
    wait(browser, lambda d: "redid: linked TP53 to MYC" in texts(d, "history-entry")[0])
    assert len(texts(browser, "history-entry")) == 3


CUT_LABELS = """
return [...document.querySelectorAll('.q-tab-panel .q-field__label, .q-tab__label')]
  .filter(el => el.offsetParent && el.scrollWidth > el.clientWidth + 1)
  .map(el => el.innerText);
"""

HIGHLIGHTED = """
const el = arguments[0];
const data = getElement(el.id.replace(/^c/, '')).chart.getOption().series[0].data;
return data.filter(d => d.itemStyle && d.itemStyle.borderWidth).map(d => d.id).sort();
"""


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_analysis_labels_whole_and_centrality_ranked_by_name(
    browser: Any, live: LiveUI, size: tuple[int, int]
) -> None:
    cid = f"rank-{size[0]}"
    version = new_graph(live, cid)
    before = browser.get_window_size()
    browser.set_window_size(*size)
    try:
        open_editor(browser, live, cid, version)
        tab(browser, "analysis")
        find(browser, "run-centrality")
        assert browser.execute_script(CUT_LABELS) == []
        click(browser, find(browser, "run-centrality"))
        ranks = wait(browser, lambda d: texts(d, "central-node"))
        # degree 2 of 4 others, ties by id; scores rounded, not raw decimals
        assert ranks[:2] == ["1. aspirin (CHEBI:15365) 0.5", "2. BRCA1 (HGNC:1100) 0.5"]
        assert ranks[3] == "4. TP53 (HGNC:11998) 0.25" and len(ranks) == 5
        chart = find(browser, "graph-chart")
        assert len(browser.execute_script(HIGHLIGHTED, chart)) == 5
        click(browser, find_all(browser, "central-node")[1])
        wait(browser, lambda d: d.execute_script(HIGHLIGHTED, chart) == ["HGNC:1100"])
    finally:
        browser.set_window_size(before["width"], before["height"])


def test_artifact_graph_search_and_type_filter(browser: Any, live: LiveUI) -> None:
    cid = live.slash_turn("/kg.queryNeighbors TP53")
    sign_in(browser, live.url, live.token)
    browser.get(f"{live.url}/c/{cid}")
    find(browser, "graph-search", "input").send_keys("TP53")
    shown = """
        const el = arguments[0];
        const series = getElement(el.id.replace(/^c/, '')).chart.getOption().series[0];
        return [series.data.length,
                series.data.filter(d => d.itemStyle && d.itemStyle.borderWidth).map(d => d.name)];
    """
    count, marked = wait(
        browser,
        lambda d: (r := d.execute_script(shown, find(d, "graph-chart")))[1] and r,
    )
    assert "TP53" in marked
    types = find(browser, "graph-types")
    click(browser, types)
    first = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".q-menu .q-item"))[0]
    click(browser, first)  # hide the commonest type
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    wait(browser, lambda d: d.execute_script(shown, find(d, "graph-chart"))[0] < count)


# --- accessible basics ------------------------------------------------------------------------

NAMELESS = """
const named = (el) => {
  if ((el.getAttribute('aria-label') || '').trim()) return true;
  const by = el.getAttribute('aria-labelledby');
  if (by && by.split(/\\s+/).some(id => (document.getElementById(id)?.innerText || '').trim()))
    return true;
  if (el.labels && [...el.labels].some(l => l.innerText.trim())) return true;
  if (el.closest('label') && el.closest('label').innerText.trim()) return true;
  return !['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) && el.innerText.trim() !== '';
};
const controls = document.querySelectorAll(
  'button, input:not([type=hidden]), textarea, select, [role=button], a[href]');
return [...controls].filter(el => el.offsetParent !== null && !named(el))
  .map(el => el.outerHTML.slice(0, 160));
"""

CONTRAST = """
const pixel = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
const rgba = (color) => {  // any CSS colour (rgb, oklch...) as sRGB bytes, through a canvas
  pixel.clearRect(0, 0, 1, 1);
  pixel.fillStyle = color;
  pixel.fillRect(0, 0, 1, 1);
  return [...pixel.getImageData(0, 0, 1, 1).data];
};
const luminance = ([r, g, b]) => {
  const c = [r, g, b].map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
};
const background = (el) => {
  for (; el; el = el.parentElement) {
    const c = rgba(getComputedStyle(el).backgroundColor);
    if (c[3] > 230) return c.slice(0, 3);
  }
  return [255, 255, 255];
};
const found = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const seen = new Set();
while (walker.nextNode()) {
  const el = walker.currentNode.parentElement;
  if (!walker.currentNode.textContent.trim() || seen.has(el) || el.offsetParent === null) continue;
  seen.add(el);
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || Number(style.opacity) < 0.5) continue;
  if (el.closest('[aria-disabled=true], :disabled, .q-field__label, .q-placeholder')) continue;
  const [a, b] = [luminance(rgba(style.color)), luminance(background(el))];
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const large = parseFloat(style.fontSize) >= 24 ||
    (parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700);
  found.push([el.innerText.trim().slice(0, 40), style.color, Math.round(ratio * 100) / 100,
              large ? 3 : 4.5]);
}
return found;
"""


def test_keyboard_labels_contrast_and_a_1280x720_window(browser: Any, live: LiveUI) -> None:
    version = new_graph(live, "access")
    open_editor(browser, live, "access", version)
    assert browser.execute_script("return [innerWidth, innerHeight]")[0] <= 1280

    # The main action from the keyboard alone: type a label, Tab to "Add node", Enter.
    box = find(browser, "node-label", "input")
    click(browser, box)
    box.send_keys("from the keyboard")
    for _ in range(6):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        if browser.switch_to.active_element.get_attribute("data-testid") == "add-node":
            break
    assert browser.switch_to.active_element.get_attribute("data-testid") == "add-node"
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_drawn(browser, str(version + 1))
    undo = find(browser, "undo")
    browser.execute_script("arguments[0].focus()", undo)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_drawn(browser, str(version + 2))
    assert "from the keyboard" not in labels(live, "access").values()

    for path in ("/c/access/graph", "/", "/kb", "/kb/sparql", "/kb/requests"):
        browser.get(live.url + path)
        find(browser, "sign-out")
        wait(browser, lambda d: d.execute_script("return document.readyState") == "complete")
        assert browser.execute_script(NAMELESS) == [], path
        poor = [row for row in browser.execute_script(CONTRAST) if row[2] < row[3]]
        assert poor == [], (path, poor)
        width = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert width[0] <= width[1], (path, width)  # nothing wider than a 1280x720 window
        header = browser.find_element(By.CSS_SELECTOR, "header")
        assert header.is_displayed() and find(browser, "sign-out").is_displayed()
    by_text(browser, "Publication requests")


def test_the_context_menu_starts_an_edge_and_deletes_the_node(browser: Any, live: LiveUI) -> None:
    version = new_graph(live, "menu")
    open_editor(browser, live, "menu", version)
    title = "Graph · version {} · {} nodes, {} edges"
    assert find(browser, "graph-title").text == title.format(version, 5, 4)

    def choose(item: str) -> None:
        click(browser, by_text(browser, item, "div[contains(@class, 'q-item')]"))
        gone_menu = "return !document.querySelector('.q-menu');"
        wait(browser, lambda d: d.execute_script(gone_menu))

    click_node(browser, "MONDO:0007254", right=True)
    choose("Start an edge from the selected node")
    tab(browser, "edit")
    source = "breast cancer (MONDO:0007254)"
    wait(browser, lambda d: find(d, "edge-source").get_attribute("value") == source)
    click_node(browser, "MONDO:0007254", right=True)
    choose("Delete the selected node")
    version += 1
    wait_drawn(browser, str(version))
    assert "MONDO:0007254" not in labels(live, "menu")
    assert len(state(live, "menu")["edges"]) == 2  # and the two edges that touched it
    wait(browser, lambda d: find(d, "graph-title").text == title.format(version, 4, 2))


# --- one colour per type ----------------------------------------------------------------------

DRAWN_COLOURS = """
const el = arguments[0];
const chart = getElement(el.id.replace(/^c/, ''))?.chart;
const series = ((chart && chart.getOption()?.series) || [])[0];  // none until it has drawn
return Object.fromEntries((series?.categories || []).map(c => [c.name, c.itemStyle.color]));
"""


def drawn_colours(driver: Any) -> dict[str, str]:
    """Each type's colour as ECharts draws it, once the chart has its categories."""
    return wait(driver, lambda d: d.execute_script(DRAWN_COLOURS, find(d, "graph-chart")))


def test_a_type_has_the_same_colour_in_the_chat_graph_and_the_editor(
    browser: Any, live: LiveUI
) -> None:
    """Issue 31, points 10 and 11: `gene` and `Gene` were two legend entries, and Gene changed
    colour between views. Both pages now draw one Gene, in `type_colour("Gene")`."""
    gene = type_colour("Gene")
    version = new_graph(live, "colours")
    with live.api() as api:
        added = api.post(
            "/api/graph/colours/nodes", json={"id": "X:1", "label": "MYC", "type": "biolink:Gene"}
        )
        assert added.status_code == 201, added.text
    open_editor(browser, live, "colours", version + 1)
    editor = drawn_colours(browser)
    assert editor["Gene"] == gene
    assert [name for name in editor if name.casefold() == "gene"] == ["Gene"]

    cid = live.slash_turn("/kg.queryNeighbors TP53")
    browser.get(f"{live.url}/c/{cid}")
    chat = drawn_colours(browser)
    assert chat["Gene"] == gene
    assert all(colour == type_colour(name) for name, colour in chat.items())


def _update_every_chart_from_the_server() -> None:
    """What NiceGUI does when a chart element is sent to the page again (as a chart created after
    the page loaded is): the page calls the element's update method."""
    from nicegui import Client, core

    charts = [
        element
        for client in list(Client.instances.values())
        for element in list(client.elements.values())
        if "graph-chart" in element._markers
    ]
    assert charts
    for chart in charts:
        core.loop.call_soon_threadsafe(chart.update)


def test_a_drawn_graph_stays_drawn_when_the_page_updates_its_chart(
    browser: Any, live: LiveUI
) -> None:
    """CI, stop 37: the chat page's graph stayed empty. Its chart is created after the page has
    loaded, so NiceGUI sends it in an update, after which the page ran the chart's update method:
    `setOption` of the element's empty `options` with notMerge, wiping the graph drawn first."""
    cid = live.slash_turn("/kg.queryNeighbors TP53")
    sign_in(browser, live.url, live.token)
    browser.get(f"{live.url}/c/{cid}")
    drawn = drawn_colours(browser)
    assert "Gene" in drawn
    _update_every_chart_from_the_server()
    browser.execute_script("return new Promise(done => setTimeout(done, 500));")
    assert browser.execute_script(DRAWN_COLOURS, find(browser, "graph-chart")) == drawn


def test_a_right_click_deletes_the_node_pointed_at_and_offers_undo(
    browser: Any, live: LiveUI
) -> None:
    """Issue 31, point 9: with CDKN1A clicked, a right-click on MYC beside it and "Delete"
    deleted CDKN1A. The right-click now picks MYC, and a toast names it with an Undo."""
    version = new_graph(live, "pointed")
    close = [{"id": "NCBIGene:4609", "label": "MYC", "type": "gene",
              "position": {"x": 600, "y": -150}},
             {"id": "NCBIGene:1026", "label": "CDKN1A", "type": "gene",
              "position": {"x": 660, "y": -150}}]  # fmt: skip
    with live.api() as api:
        added = api.post("/api/graph/pointed/nodes/bulk", json={"nodes": close})
        assert added.status_code == 201, added.text
    version += 1
    open_editor(browser, live, "pointed", version)
    click_node(browser, "NCBIGene:1026")
    chart = find(browser, "graph-chart")
    dx, dy = node_offset(browser, "NCBIGene:4609")
    ActionChains(browser).move_to_element_with_offset(chart, dx, dy).context_click().perform()
    wait(
        browser, lambda d: find(d, "selected-node").get_attribute("data-node-id") == "NCBIGene:4609"
    )
    click(browser, by_text(browser, "Delete the selected node", "div[contains(@class, 'q-item')]"))
    wait(browser, lambda d: find(d, "delete-toast-text").text == "Deleted MYC (Gene)")
    wait_drawn(browser, str(version + 1))
    remaining = labels(live, "pointed")
    assert "NCBIGene:4609" not in remaining and remaining["NCBIGene:1026"] == "CDKN1A"
    click(browser, find(browser, "delete-undo"))
    wait_drawn(browser, str(version + 2))
    assert labels(live, "pointed")["NCBIGene:4609"] == "MYC"
    toast = browser.find_element(By.CSS_SELECTOR, css("delete-toast"))
    wait(browser, lambda _d: not toast.is_displayed())
