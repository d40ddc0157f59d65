"""Where the graph view puts nodes that arrive without a position (issue 31, point 8).

New nodes with no links used to land 24 px apart on one line, their labels run together
("MYCEGFRKRAS"). Measured in real Chromium at 1280x720 on the label boxes ECharts drew: a
200-node graph gets 50 nodes, one REST add at a time, each drawn before the next; then no two
labels on screen overlap, every new node's label is shown inside the chart, and the nodes that
were there keep their place in the layout.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.web.browser import find, sign_in, wait_drawn
from tests.web.conftest import LiveUI

pytestmark = pytest.mark.timeout(600)

SYMBOLS = ["TP53", "MYC", "EGFR", "KRAS", "BRCA1", "CDKN1A", "MDM2", "PIK3CA", "PTEN", "AKT1"]
TYPES = ["gene", "disease", "chemical", "pathway"]

# The text of every label ECharts drew and did not hide, in chart pixels: [id, left, top, right,
# bottom]. A label is the text element of the node's symbol path (the first child of its symbol
# group). Its text is as wide as the canvas measures it, and as tall as the font's box (ascent and
# descent), centred on the label's line; the padding around it is not text.
LABEL_BOXES = """
const el = arguments[0];
const chart = getElement(el.id.replace(/^c/, '')).chart;
const data = chart.getModel().getSeriesByIndex(0).getData();
const context = document.createElement('canvas').getContext('2d');
const boxes = [];
for (let i = 0; i < data.count(); i++) {
  const symbol = data.getItemGraphicEl(i);
  const path = symbol && symbol.childAt(0);
  const label = path && path.getTextContent();
  if (!label || label.ignore || label.invisible || !label.style.text) continue;
  const padding = [].concat(label.style.padding || 0);
  const left = padding.length === 4 ? padding[3] : padding[padding.length - 1];
  context.font = label.style.font;
  const metrics = context.measureText(label.style.text);
  const tall = metrics.fontBoundingBoxAscent + metrics.fontBoundingBoxDescent;
  const box = label.getBoundingRect().clone();
  box.applyTransform(label.getComputedTransform());
  const x = box.x + left, middle = box.y + box.height / 2;
  boxes.push([data.getId(i), x, middle - tall / 2, x + metrics.width, middle + tall / 2]);
}
return {boxes, width: chart.getWidth(), height: chart.getHeight()};
"""
APART = 1.0  # px: labels closer than twice this side by side read as one ("MYCEGFRKRAS")
POSITIONS = """
const el = arguments[0];
const data = getElement(el.id.replace(/^c/, '')).chart.getOption().series[0].data;
return Object.fromEntries(data.map(d => [d.id, [d.x, d.y]]));
"""


def two_hundred_nodes(seed: int = 31) -> dict[str, Any]:
    rng = random.Random(seed)
    nodes = [
        {"id": f"X:{i}", "name": f"{SYMBOLS[i % len(SYMBOLS)]}-{i}", "category": TYPES[i % 4]}
        for i in range(200)
    ]
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < 300:
        a, b = rng.randrange(200), rng.randrange(200)
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    links = [{"source": f"X:{a}", "target": f"X:{b}", "label": "related_to"} for a, b in pairs]
    return {"nodes": nodes, "links": links}


def overlaps(boxes: list[list[Any]]) -> list[tuple[str, str]]:
    """Pairs of labels that overlap, or touch side by side."""
    found = []
    ordered = sorted(boxes, key=lambda box: box[1])
    for index, (one, _, top, right, bottom) in enumerate(ordered):
        for other, left, top2, _, bottom2 in ordered[index + 1 :]:
            if left - APART >= right + APART:
                break
            if top2 < bottom and top < bottom2:
                found.append((one, other))
    return found


def test_fifty_nodes_added_to_200_get_free_space_and_no_labels_overlap(
    browser: Any, live: LiveUI
) -> None:
    cid = "placement-200"
    with live.api() as api:
        made = api.post("/api/conversations", json={"id": cid, "mode": "graph_mode"})
        assert made.status_code in (200, 201), made.text
        done = api.post(f"/api/graph/{cid}/import", json={"graph": two_hundred_nodes()})
        assert done.status_code in (200, 201), done.text
        version = int(done.json()["version"])
    browser.set_window_size(1280, 720)
    sign_in(browser, live.url, live.token)
    browser.get(f"{live.url}/c/{cid}/graph")
    wait_drawn(browser, str(version))
    chart = find(browser, "graph-chart")
    before = browser.execute_script(POSITIONS, chart)
    assert len(before) == 200

    added = []
    with live.api() as api:
        for index in range(50):
            label = f"{SYMBOLS[index % len(SYMBOLS)]}{index}"
            response = api.post(f"/api/graph/{cid}/nodes", json={"label": label, "type": "gene"})
            assert response.status_code == 201, response.text
            added.append(response.json()["data"]["id"])
            version = int(response.json()["version"])
            wait_drawn(browser, str(version))

    drawn = browser.execute_script(LABEL_BOXES, chart)
    boxes = drawn["boxes"]
    by_id = {box[0]: box for box in boxes}
    assert overlaps(boxes) == [], [(by_id[a], by_id[b]) for a, b in overlaps(boxes)]
    shown = {box[0]: box for box in boxes}
    hidden = [node for node in added if node not in shown]
    assert hidden == [], f"{len(hidden)} of the 50 new nodes have no label on screen"
    for _, left, top, right, bottom in (shown[node] for node in added):  # inside the chart
        assert min(left, top) >= 0 and right <= drawn["width"] and bottom <= drawn["height"]
    after = browser.execute_script(POSITIONS, chart)
    assert {k: after[k] for k in before} == before  # the layout of the rest stays
