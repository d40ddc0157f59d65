"""The README's tour runs as written on a fresh home: every bash block of it, in order, in one
shell, against a real `graphwright serve` (on a free port instead of 8000, and offline)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
# Every curl of the tour must succeed: a status of 400 or more stops the script.
PREAMBLE = """set -euo pipefail
curl() { command curl --fail-with-body "$@"; }
"""


def tour_blocks() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    tour = readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", tour, flags=re.S)


def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    blocks = tour_blocks()
    assert len(blocks) >= 4
    work = tmp_path / "clone"
    work.mkdir()
    (work / ".venv").symlink_to(Path(sys.executable).parents[1])
    shutil.copytree(ROOT / "examples", work / "examples")
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GRAPHWRIGHT_HOME": str(tmp_path / "home"),
        "GRAPHWRIGHT_OFFLINE": "true",
        "GRAPHWRIGHT_PORT": str(port),
    }
    server = subprocess.Popen(
        [str(work / ".venv" / "bin" / "graphwright"), "serve"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        script = PREAMBLE + "\n".join(blocks).replace("localhost:8000", f"localhost:{port}")
        result = subprocess.run(
            ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    answer = json.loads(result.stdout.split("\n", 1)[0])
    kinds = [a["type"] for a in answer["data"]["artifacts"]]
    assert kinds[:2] == ["application/vnd.bibliography", "application/vnd.knowledge-graph"]
    assert (work / "merged.graphml").exists() and (work / "refs.bib").read_text().count("@") == 3
    assert (work / "demo" / "merged-graph.json").exists()
