"""The `graphwright` command's exit: what it imported is frozen, not collected object by object."""

from __future__ import annotations

import subprocess
import sys

# A handler registered before `main` runs after main's own (atexit runs them last in, first
# out): it sees what the command left for the interpreter's final collections.
SEES_THE_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count(), file=sys.stderr))
from graphwright.cli import main
sys.argv = ["graphwright", "mcp", "list"]
main()
"""


def test_the_command_freezes_its_objects_before_the_interpreter_collects_them() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SEES_THE_EXIT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "graph" in done.stdout.split()
    frozen = int(done.stderr.rsplit("frozen at exit:", 1)[1])
    assert frozen > 10_000  # the command's modules: never scanned again on the way out
