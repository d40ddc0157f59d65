"""Every code block in the README and docs/ runs as written. Blocks are found with a real
Markdown parser: JSON and YAML blocks must parse, Python blocks must compile (no top-level
`await`) and run, and shell blocks run in order, one shell per page, against a live `graphwright
serve` (on a free port instead of 8000, offline). The README's tour has its own test
(test_readme_tour.py); the few commands that cannot run inside a test are named below, each with
where it is checked instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from markdown_it import MarkdownIt

from tests.conftest import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh"}
# Commands that do not run inside a test, and where they are checked instead.
NOT_HERE = {
    "make ": "the README's fresh-clone measurement runs make run and make test",
    "npx @modelcontextprotocol/inspector": "tests/mcp/test_inspector_cli.py runs the Inspector",
    "setsid --wait sh -c": "benchmarks/load_bench.py starts the store so, until stopped",
}
PREAMBLE = """set -euo pipefail
curl() { command curl --fail-with-body "$@"; }
"""


def blocks(page: Path) -> list[tuple[str, str]]:
    tokens = MarkdownIt().parse(page.read_text())
    return [(t.info.strip().split(" ")[0], t.content) for t in tokens if t.type == "fence"]


def every(*languages: str) -> list[tuple[str, str]]:
    return [
        (f"{page.name}:{number}", code)
        for page in PAGES
        for number, (language, code) in enumerate(blocks(page), start=1)
        if language in languages
    ]


@pytest.mark.parametrize(("where", "code"), every("json"), ids=lambda v: v[:40])
def test_json_blocks_parse(where: str, code: str) -> None:
    json.loads(code)


@pytest.mark.parametrize(("where", "code"), every("yaml", "yml"), ids=lambda v: v[:40])
def test_yaml_blocks_parse(where: str, code: str) -> None:
    assert yaml.safe_load(code)


@pytest.mark.parametrize(("where", "code"), every("python"), ids=lambda v: v[:40])
def test_python_blocks_compile(where: str, code: str) -> None:
    compile(code, where, "exec")  # a top-level await is a SyntaxError here, as in `python x.py`


class Server:
    def __init__(self, home: Path) -> None:
        self.port = free_port()
        self.env = {**os.environ, "GRAPHWRIGHT_HOME": str(home), "GRAPHWRIGHT_OFFLINE": "true",
                    "GRAPHWRIGHT_PORT": str(self.port),
                    "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # fmt: skip
        self.process = subprocess.Popen(
            [sys.executable, "-m", "graphwright", "serve"], env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until_serving(self.url, self.process)
        token = subprocess.run(
            [sys.executable, "-m", "graphwright", "token", "create", "--name", "docs"],
            env=self.env, capture_output=True, text=True, check=True,
        ).stdout.splitlines()[-1]  # fmt: skip
        self.env.update(TOKEN=token, GRAPHWRIGHT_TOKEN=token)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def local(self, code: str) -> str:
        for host in ("localhost:8000", "127.0.0.1:8000"):
            code = code.replace(host, f"127.0.0.1:{self.port}")
        return code


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("docs-home"))
    yield running
    running.process.terminate()
    running.process.wait(timeout=60)


@pytest.mark.parametrize(("where", "code"), every("python"), ids=lambda v: v[:40])
def test_python_blocks_run(where: str, code: str, server: Server, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", server.local(code)], cwd=ROOT, env=server.env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, f"{where}\n{result.stdout[-2000:]}{result.stderr[-3000:]}"


def graph_mode_conversation(server: Server) -> str:
    """A conversation in Graph Mode, as the README's tour makes one (docs say `CID`)."""
    headers = {"Authorization": f"Bearer {server.env['TOKEN']}"}
    answer = httpx.post(f"{server.url}/api/chat", headers=headers, timeout=300,
                        json={"message": "/kg.queryNeighbors TP53", "stream": False})  # fmt: skip
    cid = answer.json()["data"]["conversationId"]
    httpx.patch(f"{server.url}/api/conversations/{cid}", headers=headers, timeout=300,
                json={"mode": "graph_mode"}).raise_for_status()  # fmt: skip
    return cid


def runnable(code: str) -> str:
    """The block without the commands named in NOT_HERE (with their continuation lines)."""
    commands: list[str] = []
    for line in code.splitlines():
        if commands and commands[-1].endswith("\\"):
            commands[-1] += "\n" + line
        else:
            commands.append(line)
    return "\n".join(c for c in commands if not any(c.startswith(n) for n in NOT_HERE))


@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.name != "README.md" and any(
        language in SHELL for language, _ in blocks(p))], ids=lambda p: p.name,
)  # fmt: skip
def test_shell_blocks_run_in_order(page: Path, server: Server, tmp_path: Path) -> None:
    script = "\n".join(runnable(code) for language, code in blocks(page) if language in SHELL)
    env = {**server.env, "CID": graph_mode_conversation(server)}
    result = subprocess.run(
        ["bash", "-c", PREAMBLE + server.local(script)], cwd=tmp_path, env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, f"{page.name}\n{result.stdout[-3000:]}{result.stderr[-3000:]}"


def test_the_readme_commands_not_run_here_are_named() -> None:
    readme = [code for language, code in blocks(ROOT / "README.md") if language in SHELL]
    assert any(code.startswith("make run") for code in readme)
