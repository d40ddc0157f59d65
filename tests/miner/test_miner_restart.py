"""A run stopped for approval in one process is approved from another, after the first has
exited; the notes it wrote are read by the next run, in this process."""

from __future__ import annotations

from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.schemas import Decision
from graphwright.settings import Settings
from tests.miner.conftest import MinerFactory
from tests.miner.other_process import waiting_elsewhere
from tests.miner.scripted import say


async def test_interrupt_restart_and_approve_from_a_new_process(
    make_miner: MinerFactory, knowledge: KnowledgeService, settings: Settings
) -> None:
    run_id = waiting_elsewhere(settings, "drugs", "- Pattern: from the first process")

    final = '{"summary": "Published after a restart.", "candidateAssets": []}'
    miner = make_miner({"orchestrator": [say(text=final)]})
    waiting = miner.get_run(run_id)
    assert waiting.status == "waiting"
    assert waiting.pending[0]["actionName"] == "dkg_publish_asset"

    # Its progress, saved by the first process, streams from this one.
    kinds = [event["type"] async for event in miner.events(run_id)]
    assert kinds.count("subagent") == 6 and kinds[-2:] == ["pending_approval", "done"]

    run = await miner.decide(run_id, [Decision(type="approve")], approver="bob")

    assert run.status == "done"
    assert run.result is not None and run.result["summary"] == "Published after a restart."
    # The workspace the first process saw is still there after the resume.
    assert [s["name"] for s in run.result["spawnedSubagents"]] == [
        "discovery",
        "enrichment",
        "validation",
    ]
    [published], _ = knowledge.list_requests(status="published")
    assert published.decided_by == "bob"
    note = await miner.read_note("drugs", "discovery-notes")
    assert "- Pattern: from the first process" in note.content
