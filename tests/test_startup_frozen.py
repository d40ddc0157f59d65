"""What `graphwright serve` makes at startup is kept out of the garbage collector's full passes.

The modules, the app and its services (some 400,000 objects) live as long as the process, and a
full collection scanned them all: 0.2 s idle, and 0.4 to 1.2 s under the load benchmark's mix,
during which no request moved (the tail of every latency). The server freezes them once it has
started, so that a full collection scans only what came after.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import free_port

SCRIPT = """
import gc, json, sys, threading, time
import httpx
from graphwright.app import create_app
from graphwright.serving import GraphwrightServer, server_config
from graphwright.settings import Settings

app = create_app(Settings(home=sys.argv[1], offline=True))

@app.get("/gc-counts")
def counts():
    return {"frozen": gc.get_freeze_count(), "collected": len(gc.get_objects())}

server = GraphwrightServer(server_config(app, host="127.0.0.1", port=int(sys.argv[2]),
                                         log_level="warning"))

def ask():
    while not server.started:
        time.sleep(0.05)
    print(json.dumps(httpx.get(f"http://127.0.0.1:{sys.argv[2]}/gc-counts").json()), flush=True)
    server.should_exit = True

threading.Thread(target=ask, daemon=True).start()
server.run()
"""


def test_the_objects_made_at_startup_are_frozen_out_of_full_collections(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), str(free_port())],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["frozen"] > 100_000, counts
    # A full collection now scans a small fraction of what it scanned before.
    assert counts["collected"] < counts["frozen"] / 10, counts
