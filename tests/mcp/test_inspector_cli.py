"""An independent MCP client, the MCP Inspector CLI, lists and calls a tool on every server.

`make test` installs the Inspector into .mcp-inspector/ (git-ignored); without it the test runs it
through npx, and skips only when npx itself is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
LOCAL_INSPECTOR = REPO / ".mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector"
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"

CALLS = {
    "literature": ("searchPubMed", ["query=imatinib leukemia", "maxResults=2"], "11287972"),
    "grants": ("searchGrants", ["query=Parkinson"], "SYNTHETIC-0005"),
    "kg": ("queryNeighbors", ["curieOrName=imatinib"], "MONDO:0011996"),
    "graph": ("addNode", ["label=TP53", "type=gene"], "Added node 'TP53' (Gene)"),
    "artifacts": ("list_artifacts", [], "No artifacts in conversation 'inspector'"),
}
RETURNS_ARTIFACT = {"literature", "kg"}


def inspector_command() -> list[str]:
    if LOCAL_INSPECTOR.exists():
        return [str(LOCAL_INSPECTOR)]
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed, so the MCP Inspector CLI cannot run")
    return [npx, "--yes", INSPECTOR_PACKAGE]


async def inspect(server: str, *method: str, home: Path) -> dict:
    """Run the Inspector CLI against `graphwright mcp SERVER` in a fresh home directory.

    The Inspector starts the server with only the variables given by `-e`, so pass them all.
    """
    workdir = home / server
    workdir.mkdir(exist_ok=True)
    server_env = {
        "GRAPHWRIGHT_HOME": str(workdir),
        "GRAPHWRIGHT_OFFLINE": "1",
        "GRAPHWRIGHT_CONVERSATION": "inspector",
    }
    env_flags = [flag for key, value in server_env.items() for flag in ("-e", f"{key}={value}")]
    command = [
        *inspector_command(),
        "--cli",
        *env_flags,
        "--cwd",
        str(workdir),
        str(GRAPHWRIGHT),
        "mcp",
        server,
        *method,
    ]
    process = await asyncio.create_subprocess_exec(
        *command,
        env={**os.environ, **server_env},
        cwd=workdir,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode == 0, (stdout + stderr).decode()[-2000:]
    return json.loads(stdout)


async def check_server(server: str, home: Path) -> None:
    listed = await inspect(server, "--method", "tools/list", home=home)
    assert CALLS[server][0] in {tool["name"] for tool in listed["tools"]}

    tool, args, expected = CALLS[server]
    tool_args = [flag for arg in args for flag in ("--tool-arg", arg)]
    called = await inspect(
        server, "--method", "tools/call", "--tool-name", tool, *tool_args, home=home
    )
    assert called.get("isError") is not True
    texts = [block["text"] for block in called["content"] if block["type"] == "text"]
    assert expected in "\n".join(texts)
    resources = [block for block in called["content"] if block["type"] == "resource"]
    if server in RETURNS_ARTIFACT:
        assert resources and resources[0]["resource"]["uri"].startswith("graphwright://artifact/")


async def test_inspector_lists_and_calls_each_server(tmp_path: Path) -> None:
    inspector_command()
    # One server at a time: five Python servers starting at once on a loaded 2-core machine
    # took longer than the Inspector's 15 s to connect.
    for server in CALLS:
        await check_server(server, tmp_path)
