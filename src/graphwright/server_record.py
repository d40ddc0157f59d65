"""Which `graphwright serve` runs on a home, and where: `serve` writes `HOME/server.json` (its
URL and process id) while it runs, so that other commands on the same home (the CLI beside it)
can reach it when it holds something they cannot open themselves, such as the embedded
knowledge base."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import orjson

FILE_NAME = "server.json"


@contextlib.contextmanager
def recorded(home: Path, url: str) -> Iterator[None]:
    """Record this process as the server on `home`, at `url`, while the block runs."""
    path = home / FILE_NAME
    home.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps({"url": url, "pid": os.getpid()}))
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if _read(path).get("pid") == os.getpid():
                path.unlink()


def running_server(home: Path) -> str | None:
    """The URL of the server recorded on `home`, if its process still runs."""
    record = _read(home / FILE_NAME)
    pid, url = record.get("pid"), record.get("url")
    if not isinstance(pid, int) or not isinstance(url, str):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # another user's process: it runs
        return url
    return url


def _read(path: Path) -> dict[str, object]:
    try:
        record = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return record if isinstance(record, dict) else {}
