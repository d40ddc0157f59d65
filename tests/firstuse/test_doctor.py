"""`graphwright doctor` on a good setup (all green, the model noted as not configured with how
to set it) and on broken ones (each failure a line with its fix, and exit status 1)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphwright.cli import app
from graphwright.settings import get_settings
from tests.chat.openai_stub import OpenAIStub
from tests.conftest import free_port, serve_in_thread

OWN = ("grants", "graph", "knowledge", "literature", "miner")  # kg stays: one server starts


def doctor(home: Path, **env: str) -> tuple[int, dict[str, str]]:
    config = home.parent / "mcp_servers.json"
    if not config.exists():
        config.write_text(json.dumps({"mcpServers": {n: {"disabled": True} for n in OWN}}))
    variables = {"GRAPHWRIGHT_HOME": str(home), "GRAPHWRIGHT_OFFLINE": "true",
                 "GRAPHWRIGHT_MCP_CONFIG": str(config), "GRAPHWRIGHT_PORT": str(free_port()),
                 "GRAPHWRIGHT_MODEL": None, "GRAPHWRIGHT_DATABASE_URL": None, **env}  # fmt: skip
    get_settings.cache_clear()
    try:
        outcome = CliRunner().invoke(app, ["doctor"], env=variables, terminal_width=300)
    finally:
        get_settings.cache_clear()
    lines = {}
    for line in outcome.output.splitlines():
        if line[:1] in "✓○✗" and line[2:].strip():
            name, _, rest = line[2:].partition("  ")
            lines[name.strip()] = f"{line[0]} {rest.strip()}"
    return outcome.exit_code, lines


def test_a_good_setup_is_green_but_for_the_model_which_says_how_to_set_it(tmp_path: Path) -> None:
    code, lines = doctor(tmp_path / "home")
    assert code == 0, lines
    assert set(lines) == {"home", "database", "knowledge base", "model", "mcp kg", "port",
                          "chromium"}  # fmt: skip
    for name in ("home", "database", "knowledge base", "mcp kg", "port"):
        assert lines[name].startswith("✓"), lines[name]
    assert lines["mcp kg"].startswith("✓ 3 tools")
    assert lines["model"].startswith("○ not configured → set GRAPHWRIGHT_MODEL=provider:model")


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    with serve_in_thread(OpenAIStub(key="sk-right").app()) as url:
        yield f"{url}/v1"


def test_a_model_that_answers_shows_its_latency(tmp_path: Path, stub: str) -> None:
    model = {"GRAPHWRIGHT_MODEL": "openai:local", "GRAPHWRIGHT_MODEL_BASE_URL": stub,
             "GRAPHWRIGHT_MODEL_API_KEY": "sk-right"}  # fmt: skip
    code, lines = doctor(tmp_path / "home", **model)
    assert code == 0 and lines["model"].startswith("✓ openai:local answered in "), lines


def test_each_broken_part_is_a_line_with_its_fix(tmp_path: Path, stub: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "mcp_servers.json").write_text(json.dumps({"mcpServers": {
        **{n: {"disabled": True} for n in OWN},
        "broken": {"command": str(tmp_path / "no-such-server")},
    }}))  # fmt: skip
    holder = subprocess.Popen(  # another process holds the embedded store
        [sys.executable, "-c", "import sys, time, pyoxigraph; s = pyoxigraph.Store(sys.argv[1]);"
         " print('held', flush=True); time.sleep(600)", str(home / "kb")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            code, lines = doctor(home, GRAPHWRIGHT_MODEL="openai:local",
                                 GRAPHWRIGHT_MODEL_BASE_URL=stub,
                                 GRAPHWRIGHT_MODEL_API_KEY="sk-wrong",
                                 GRAPHWRIGHT_PORT=str(busy.getsockname()[1]))  # fmt: skip
        finally:
            holder.kill()
            holder.wait()
    assert code == 1
    assert (
        lines["knowledge base"].startswith("✗")
        and "→ stop the other graphwright" in lines["knowledge base"]
    )
    assert (
        lines["model"].startswith("✗ openai:local:")
        and "→ check GRAPHWRIGHT_MODEL" in lines["model"]
    )
    assert (
        lines["port"].startswith("✗")
        and "→ stop what uses it, or set GRAPHWRIGHT_PORT" in (lines["port"])
    )
    assert lines["mcp broken"].startswith("✗") and "→ fix or disable it" in lines["mcp broken"]
    assert lines["home"].startswith("✓") and lines["mcp kg"].startswith("✓")


def test_a_home_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    code, lines = doctor(home)
    assert code == 1
    assert lines["home"].startswith("✗") and "→ set GRAPHWRIGHT_HOME to a folder" in lines["home"]
