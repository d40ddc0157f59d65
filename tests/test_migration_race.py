"""Servers started at once on a new database: migrations run one at a time, none crashes."""

from __future__ import annotations

import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.conftest import BACKENDS, pg_schema_url

START = """
import sys, time
from graphwright.db import Database
start = float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
Database(sys.argv[1]).dispose()
"""
PROCESSES = 4
ROUNDS = 2


def start_together(url: str) -> list[subprocess.CompletedProcess[str]]:
    start = time.time() + 2.0  # every process has imported graphwright by then
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", START, url, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_start_up_migrates_once(backend: str, tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        with ExitStack() as stack:
            if backend == "sqlite":
                url = f"sqlite:///{tmp_path / f'race{round_}.db'}"
            else:
                url = stack.enter_context(pg_schema_url())
            failed = [r.stderr[-2000:] for r in start_together(url) if r.returncode != 0]
            assert not failed, failed[0]
