"""The web UI in real Chromium: how long until a graph is drawn, and how fast live changes show.

A graphwright server with the UI runs in this process (uvicorn, SQLite in a temporary home);
Debian's Chromium (headless, through chromedriver) opens the Graph Mode editor. "Drawn" is the
moment ECharts reports `finished` for the graph version on screen (the view then sets
`data-drawn-version` on its element). Figures, each the median of several runs:

1. Open a conversation's graph, 2,000 nodes and 10,000 edges with saved positions, until drawn.
   Target: under 1.5 s. Baseline in the same run: fetching the same graph as JSON through the
   REST API (`GET /api/graph/{id}/state`), the floor any viewer pays before drawing.
2. Open a 10,000-node graph (25,000 edges) with its precomputed layout, until drawn. Target:
   under 4 s. Same baseline.
3. A change made through the REST API, until drawn in an open tab: p50 and p90 of 20 changes
   made one at a time (each once the previous one is drawn),
   on a 200-node graph and on the 2,000-node one. Target: p50 under 500 ms. Baseline: the same
   change until its `change` event reaches a client of the REST event stream (`/events`).
   Browser times are read from `Date.now()` in the page and compared with the wall clock here,
   so no WebDriver round trip is counted.
4. Adds to a 200-node graph (issue 31, point 8): 50 nodes with no links added one at a time
   through REST, each drawn before the next, timed as in 3. Targets: p50 under 500 ms per drawn
   change, and then no two labels on screen overlapping and every new node's label shown (label
   boxes measured in the page as tests/web/test_browser_placement.py measures them).

Run: .venv/bin/python benchmarks/ui_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from selenium.webdriver.support.ui import WebDriverWait

from graphwright.app import create_app
from graphwright.graphmode import analysis
from graphwright.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.conftest import free_port, serve_in_thread  # noqa: E402
from tests.web.browser import sign_in  # noqa: E402
from tests.web.conftest import chromium  # noqa: E402
from tests.web.test_browser_placement import LABEL_BOXES, overlaps  # noqa: E402

CHART = '[data-testid="graph-chart"]'
ADDS = 50  # nodes added one at a time to the 200-node graph (figure 4)
TYPES = ["gene", "disease", "chemical", "pathway", "phenotype", "anatomy"]


def random_graph(nodes: int, edges: int, *, layout: str, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    node_list = [
        {"id": f"X:{i}", "name": f"node {i}", "type": TYPES[i % len(TYPES)]} for i in range(nodes)
    ]
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < edges:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        if a != b:
            pairs.add((a, b))
    links = [
        {"source": f"X:{a}", "target": f"X:{b}", "label": "related_to"} for a, b in sorted(pairs)
    ]
    rows = [{"id": n["id"], "type": n["type"]} for n in node_list]
    edge_rows = [{"id": str(i), **link} for i, link in enumerate(links)]
    positions = analysis.layout(rows, edge_rows, kind=layout)  # type: ignore[arg-type]
    for node in node_list:
        node["position"] = positions[node["id"]]
    return {"nodes": node_list, "links": links}


@contextmanager
def server(home: Path) -> Iterator[tuple[str, str]]:
    port = free_port()
    settings = Settings(
        home=home, offline=True, model=None, port=port, api_url=f"http://127.0.0.1:{port}"
    )
    app = create_app(settings, web=True)
    with serve_in_thread(app, port) as url:
        yield url, app.state.auth_service.mint(label="bench")


def load_graph(api: httpx.Client, name: str, graph: dict[str, Any]) -> int:
    created = api.post("/api/conversations", json={"id": name, "mode": "graph_mode"})
    created.raise_for_status()
    imported = api.post(f"/api/graph/{name}/import", json={"graph": graph}, timeout=600)
    imported.raise_for_status()
    return int(imported.json()["version"])


def open_until_drawn(driver: Any, url: str, conversation: str, version: int) -> float:
    driver.get("about:blank")
    start = time.perf_counter()
    driver.get(f"{url}/c/{conversation}/graph")
    WebDriverWait(driver, 120, poll_frequency=0.02).until(
        lambda d: d.execute_script(
            f"const e = document.querySelector('{CHART}'); "
            f"return e && e.dataset.drawnVersion === '{version}';"
        )
    )
    return time.perf_counter() - start


def fetch_json(api: httpx.Client, conversation: str) -> float:
    start = time.perf_counter()
    response = api.get(f"/api/graph/{conversation}/state")
    response.raise_for_status()
    response.json()
    return time.perf_counter() - start


WATCH = """
window.__drawn = {};
const chart = document.querySelector(arguments[0]);
new MutationObserver(() => {
  const v = chart.dataset.drawnVersion;
  if (v && !(v in window.__drawn)) window.__drawn[v] = Date.now();
}).observe(chart, {attributes: true, attributeFilter: ['data-drawn-version']});
"""


def live_latencies(
    driver: Any, api: httpx.Client, url: str, conversation: str, version: int, changes: int
) -> tuple[list[float], list[float], list[str]]:
    """Seconds from each REST change (a node added) to its drawing in the page, and to its SSE
    event; and the ids of the nodes added."""
    open_until_drawn(driver, url, conversation, version)
    driver.execute_script(WATCH, CHART)
    sse_seen: dict[int, float] = {}
    ready = threading.Event()

    def listen() -> None:
        with api.stream("GET", f"/api/graph/{conversation}/events", timeout=None) as stream:
            for line in stream.iter_lines():
                if line.startswith("event: ready"):
                    ready.set()
                if line.startswith("id:"):
                    sse_seen[int(line.split(":", 1)[1])] = time.time()
                    if len(sse_seen) >= changes:
                        return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    ready.wait(30)
    sent: dict[int, float] = {}
    added: list[str] = []
    for index in range(changes):
        started = time.time()
        response = api.post(
            f"/api/graph/{conversation}/nodes", json={"label": f"live {index}", "type": "gene"}
        )
        response.raise_for_status()
        version = int(response.json()["version"])
        sent[version] = started
        added.append(response.json()["data"]["id"])
        _drawn_within(driver, version, 15.0)  # one change at a time: each drawn before the next
    listener.join(30)
    deadline = time.time() + 30
    drawn: dict[str, float] = {}
    while time.time() < deadline:
        drawn = driver.execute_script("return window.__drawn || {}")
        if len(drawn) >= changes:
            break
        time.sleep(0.2)
    ui = [drawn[str(v)] / 1000 - t for v, t in sent.items() if str(v) in drawn]
    sse = [sse_seen[v] - t for v, t in sent.items() if v in sse_seen]
    return ui, sse, added


def label_clashes(driver: Any, added: list[str]) -> tuple[int, int]:
    """Pairs of labels on screen that overlap, and the added nodes whose label is not shown."""
    chart = driver.find_element("css selector", CHART)
    boxes = driver.execute_script(LABEL_BOXES, chart)["boxes"]
    shown = {box[0] for box in boxes}
    return len(overlaps(boxes)), sum(node not in shown for node in added)


def _drawn_within(driver: Any, version: int, seconds: float) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if driver.execute_script(f"return !!(window.__drawn || {{}})['{version}']"):
            return
        time.sleep(0.05)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) >= 2 else float("nan")


def report(name: str, ours: float, baseline: float, target: float | None) -> None:
    verdict = ""
    if target is not None:
        verdict = f"  target < {target:.2f} s: {'met' if ours < target else 'NOT met'}"
    print(
        f"{name:<46} graphwright {ours:7.3f} s   baseline {baseline:7.3f} s   "
        f"ratio {ours / baseline:6.1f}x{verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--live-only", action="store_true", help="only the live-change figures")
    args = parser.parse_args()
    repeats, changes = (2, 8) if args.quick else (5, 20)
    home = Path(tempfile.mkdtemp(prefix="gw-ui-bench-"))
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("building graphs (layouts computed on the server, positions saved)...", flush=True)
    medium = random_graph(2_000, 10_000, layout="force")
    large = None if args.live_only else random_graph(10_000, 25_000, layout="circular")
    small = random_graph(200, 600, layout="force")
    try:
        with server(home) as (url, token), chromium() as driver:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=120) as api:
                versions = {
                    "medium": load_graph(api, "medium", medium),
                    "small": load_graph(api, "small", small),
                    "adds": load_graph(api, "adds", small),
                }
                if large is not None:
                    versions["large"] = load_graph(api, "large", large)
                sign_in(driver, url, token)
                open_until_drawn(driver, url, "small", versions["small"])  # warm the page code
                opened = (
                    ("medium", "open 2,000 nodes / 10,000 edges until drawn", 1.5),
                    ("large", "open 10,000 nodes / 25,000 edges (precomputed)", 4.0),
                )
                for name, label, target in opened if large is not None else ():
                    ours = [
                        open_until_drawn(driver, url, name, versions[name]) for _ in range(repeats)
                    ]
                    base = [fetch_json(api, name) for _ in range(repeats)]
                    report(label, median(ours), median(base), target)
                for name, nodes in (("small", 200), ("medium", 2_000)):
                    ui, sse, _ = live_latencies(driver, api, url, name, versions[name], changes)
                    versions[name] += changes
                    report(f"live change, {nodes:,}-node graph, p50", median(ui), median(sse), 0.5)
                    report(f"live change, {nodes:,}-node graph, p90", p90(ui), p90(sse), None)
                driver.set_window_size(1280, 720)  # as the browser tests measure labels
                ui, sse, added = live_latencies(driver, api, url, "adds", versions["adds"], ADDS)
                report(f"{ADDS} adds to a 200-node graph, p50", median(ui), median(sse), 0.5)
                report(f"{ADDS} adds to a 200-node graph, p90", p90(ui), p90(sse), None)
                clashes, hidden = label_clashes(driver, added)
                verdict = "met" if clashes == hidden == 0 else "NOT met"
                print(
                    f"{'labels after the adds':<46} {clashes} overlapping pairs, {hidden} of "
                    f"{ADDS} new labels not shown  target 0 and 0: {verdict}"
                )
    finally:
        shutil.rmtree(home, ignore_errors=True)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
