"""Run the miner's scripted whole run in this process until it waits for approval, print the
run id, and exit: the tests approve it from another process (`waiting_elsewhere`).

    python -m tests.miner.other_process HOME DATABASE_URL TAG NOTE_LINE
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from graphwright.db import Database
from graphwright.knowledge.backends.sparql_kb import SparqlKnowledgeBase
from graphwright.knowledge.backends.stores import EmbeddedStore
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.agent_tools import MinerTools
from graphwright.miner.schemas import MinerRequest
from graphwright.miner.service import MinerService
from graphwright.settings import Settings
from tests.miner.scripted import ScriptedModel, full_run

ROOT = Path(__file__).resolve().parents[2]


def waiting_elsewhere(settings: Settings, tag: str, note_line: str) -> str:
    """The id of a run that waits for approval, started by a process that has exited since."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.miner.other_process", str(settings.home),
         settings.resolved_database_url, tag, note_line],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


async def main(home: str, database_url: str, tag: str, note_line: str) -> None:
    settings = Settings(home=Path(home), database_url=database_url, offline=True)
    db = Database(database_url)
    # The embedded store is opened by one process at a time: this one gets its own.
    backend = SparqlKnowledgeBase(EmbeddedStore(Path(home) / "kb-other"), kind="embedded")
    knowledge = KnowledgeService(db, backend)
    model = ScriptedModel(scripts=full_run(tag, note_line=note_line))
    miner = MinerService(db, settings, tools=MinerTools(knowledge), model=model)
    output = await miner.run(
        MinerRequest(query="What does aspirin inhibit?", domain_tags=[tag]),
        actor="alice",
        caller="token:1",
    )
    await miner.aclose()
    await knowledge.aclose()
    db.dispose()
    print(output.run_id)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
