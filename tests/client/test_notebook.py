"""docs/examples/tp53.ipynb runs clean with nbclient against a live server, found through
GRAPHWRIGHT_API_URL and GRAPHWRIGHT_TOKEN."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import serve_in_thread

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tp53.ipynb"


def test_the_tp53_notebook_runs_against_a_live_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphwright.app import create_app
    from graphwright.settings import Settings

    monkeypatch.setenv("GRAPHWRIGHT_OFFLINE", "true")
    app = create_app(Settings(home=tmp_path / "home"))
    with serve_in_thread(app) as url:
        monkeypatch.setenv("GRAPHWRIGHT_API_URL", url)
        monkeypatch.setenv("GRAPHWRIGHT_TOKEN", app.state.auth_service.mint(label="notebook"))
        notebook = nbformat.read(NOTEBOOK, as_version=4)
        NotebookClient(notebook, timeout=300, kernel_name="python3").execute()

    outputs = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "kg.queryNeighbors" in text
    assert "TP53" in text
