"""schemathesis against a live `graphwright serve`, on SQLite and on PostgreSQL, with every check
but negative_data_rejection (schemathesis.toml beside this file says why, and what else it
allows): 0 server errors, 0 schema violations, only documented status codes, media types and
headers, `Allow` on every 405 naming what the path takes. The `/events` streams never end, so
they are left out; so is the A2A JSON-RPC endpoint, which the A2A conformance tests in tests/a2a
check (one generated request to it once timed out here). The seed is fixed and each run bounded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

SCHEMATHESIS = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.mark.skipif(SCHEMATHESIS is None, reason="schemathesis is in the test extras")
def test_schemathesis_finds_nothing(tmp_path: Path, database_url: str) -> None:
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GRAPHWRIGHT_HOME": str(tmp_path / "home"),
        "GRAPHWRIGHT_OFFLINE": "true",
        "GRAPHWRIGHT_PORT": str(port),
        "GRAPHWRIGHT_DATABASE_URL": database_url,
    }
    cli = [sys.executable, "-m", "graphwright"]
    token = (
        subprocess.run(
            [*cli, "token", "create"], env=env, capture_output=True, text=True, check=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    server = subprocess.Popen(
        [*cli, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        result = subprocess.run(
            [SCHEMATHESIS, "--config-file", str(CONFIG), "run", f"{base}/openapi.json",
             "-H", f"Authorization: Bearer {token}",
             "--seed", "20261123", "--generation-deterministic", "-n", "5", "-w", "1",
             "--phases", "examples,coverage,fuzzing",
             "--exclude-path-regex", "/events$|^/a2a$", "--max-time", "40",
             "--request-timeout", "30", "--no-color"],
            env={**env, "SCHEMATHESIS_HOOKS": ""}, capture_output=True, text=True, timeout=400,
            cwd=tmp_path,  # its cache of crashes stays out of the checkout
        )  # fmt: skip
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=30)
    assert result.returncode == 0, result.stdout[-6000:]
    assert "Traceback" not in errors, errors[-3000:]
