"""axe-core in real Chromium on every page a person meets: sign-in, conversations, chat, the
graph editor, the knowledge base, SPARQL, publication requests, miner runs, a run and memory.
None may have a serious or critical violation. One server and one browser for the module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from tests.miner.scripted import ScriptedModel, full_run
from tests.web.axe import axe_missing, severe_violations
from tests.web.browser import find, sign_in, wait
from tests.web.conftest import LiveUI, serve_ui

pytestmark = pytest.mark.timeout(600)
TAG = "drug_targets"


@pytest.fixture(scope="module")
def a11y_live(
    module_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveUI]:
    """A live server with sample data and a miner on a scripted model, with one waiting run."""
    if axe_missing():
        pytest.skip(axe_missing())

    def scripted(app: FastAPI) -> None:
        app.state.miner_service.model = ScriptedModel(scripts=full_run(TAG))

    with serve_ui(module_database_url, tmp_path_factory.mktemp("a11y"), prepare=scripted) as live:
        yield live


def waiting_run(live: LiveUI) -> str:
    with live.api() as api:
        started = api.post("/api/miner/runs", json={"query": "aspirin", "domainTags": [TAG]})
        assert started.status_code == 202, started.text

        def waiting(_: Any) -> str | None:
            runs = api.get("/api/miner/runs", params={"status": "waiting"}).json()["data"]["runs"]
            return runs[0]["id"] if runs else None

        return wait(None, waiting)  # type: ignore[arg-type]


def test_no_page_has_a_serious_or_critical_violation(browser: Any, a11y_live: LiveUI) -> None:
    live = a11y_live
    run_id = waiting_run(live)
    cid = live.slash_turn("/kg.queryNeighbors TP53")
    browser.delete_all_cookies()
    browser.get(live.url + "/signin")
    pages = {"sign-in": ("/signin", "token")}
    pages |= {
        "conversations": ("/", "new-title"),
        "chat": (f"/c/{cid}", "message-input"),
        "editor": (f"/c/{cid}/graph", "graph-editor"),
        "knowledge base": ("/kb", "kb-asset-link"),
        "SPARQL": ("/kb/sparql", "sparql-run"),
        "requests": ("/kb/requests", "requests"),
        "miner runs": ("/miner", "miner-runs"),
        "run": (f"/miner/runs/{run_id}", "workspace-status"),
        "memory": ("/miner/memory", "memory-tags"),
    }
    found = {}
    for name, (path, ready) in pages.items():
        if name == "conversations":
            sign_in(browser, live.url, live.token)
        browser.get(live.url + path)
        find(browser, ready)
        found[name] = severe_violations(browser)
    report = [
        f"{name}: {v['id']} ({v['help']}) at {v['nodes']}" for name, vs in found.items() for v in vs
    ]
    assert not report, "\n".join(report)
