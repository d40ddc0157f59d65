"""Whole miner runs on the real deepagents graph, LangGraph store and checkpointer, with a
scripted chat model: subagents, memory, approvals, bounds and fallbacks."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import PutOp

from graphwright.errors import Conflict, InvalidInput, TooManyRequests
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.memory import MemoryNotes
from graphwright.miner.schemas import Decision, EditedAction, MinerRequest
from graphwright.miner.service import NoModel
from tests.miner.conftest import MinerFactory
from tests.miner.scripted import ASPIRIN, call, full_run, say

ASK = "What does aspirin inhibit?"


def request(*tags: str, iterations: int = 4) -> MinerRequest:
    return MinerRequest(query=ASK, domain_tags=list(tags), max_iterations=iterations)


async def test_a_run_spawns_three_subagents_and_waits_for_approval(
    make_miner: MinerFactory, knowledge: KnowledgeService
) -> None:
    miner = make_miner(full_run("drugs"))
    output = await miner.run(request("drugs"), actor="alice", caller="token:1")

    assert [(s.name, s.status) for s in output.spawned_subagents] == [
        ("discovery", "completed"),
        ("enrichment", "completed"),
        ("validation", "completed"),
    ]
    assert output.memory_writes == ["/memories/knowledge/drugs/discovery-notes.md"]
    assert output.todos == ["⧗ Discover facts", "○ Enrich and validate"]
    assert {f.path for f in output.filesystem_files} == {
        "/candidates/aspirin.jsonld",
        "/research/aspirin.md",
    }
    [action] = output.pending_approval
    assert action.action_name == "dkg_publish_asset"
    assert action.args["jsonld"]["@id"] == ASPIRIN["@id"]
    [candidate] = output.candidate_assets
    assert candidate["linkedAssets"] == [ASPIRIN["relatedTo"]["@id"]]
    # The trust signals come from the checks in code: the linked UAL does not exist.
    signals = candidate["trustSignals"]
    assert signals["valid"] is False
    assert signals["missingLinks"] == [ASPIRIN["relatedTo"]["@id"]]
    assert {c["name"]: c["passed"] for c in signals["checks"]} == {
        "jsonld": True,
        "shapes": True,
        "duplicates": True,
        "links": False,
    }
    assert 0 < signals["confidence"] < 1 and "breakdown" in signals
    validated = [
        e["data"] for e in miner_events(miner, output.run_id) if e["type"] == "tool_result"
    ]
    assert any(r["name"] == "validate_candidate" and r["ok"] for r in validated)
    assert miner.get_run(output.run_id).status == "waiting"
    # Nothing is published before a person decides: the publish waits in the knowledge base's
    # queue, linked to its run.
    [waiting], _ = knowledge.list_requests(status="pending")
    assert action.request_id == waiting.id and waiting.details["runId"] == output.run_id
    assert knowledge.list_requests(status="published")[1] == 0
    assert miner.model.calls[0] == "orchestrator"  # type: ignore[union-attr]
    with pytest.raises(Conflict, match="decide its pending actions first"):
        await miner.run(request("drugs"), actor="alice", caller="token:1")


def miner_events(miner: Any, run_id: str) -> list[dict[str, Any]]:
    return miner._get_record(run_id).events  # type: ignore[no-any-return]


async def test_approve_publishes_with_the_approver_and_a_second_decision_is_refused(
    make_miner: MinerFactory, knowledge: KnowledgeService
) -> None:
    miner = make_miner(full_run("drugs"))
    output = await miner.run(request("drugs"), actor="alice", caller="token:1")
    action = output.pending_approval[0]

    run = await miner.decide(
        output.run_id, [Decision(type="approve", action_id=action.id)], approver="bob"
    )

    assert run.status == "done"
    assert run.result is not None and run.result["summary"] == "One candidate found and published."
    candidate = run.result["candidateAssets"][0]
    signals = candidate["trustSignals"]
    assert signals["modelConfidence"] == 0.8
    # Published, it keeps the checks it was approved on: it is not its own duplicate.
    assert signals["duplicates"] == [] and candidate["publication"]["status"] == "published"
    [decision] = run.decisions
    assert (decision["type"], decision["by"]) == ("approve", "bob")
    assert decision["outcome"].startswith("Published as did:dkg:")
    [published], _ = knowledge.list_requests(status="published")
    assert published.decided_by == "bob"
    answer = await knowledge.query(
        'SELECT ?s WHERE { GRAPH ?g { ?s <http://schema.org/identifier> "test:aspirin-cox1" } }'
    )
    assert len(answer.rows) == 1
    with pytest.raises(Conflict, match="no action waiting"):
        await miner.decide(output.run_id, [Decision(type="approve")], approver="carol")


async def test_edit_publishes_the_edited_jsonld_once_it_expands(
    make_miner: MinerFactory, knowledge: KnowledgeService
) -> None:
    miner = make_miner(full_run("drugs"))
    output = await miner.run(request("drugs"), actor="alice", caller="token:1")
    edited = {**ASPIRIN, "name": "aspirin irreversibly inhibits COX-1"}
    bad = Decision(type="edit", edited_action=EditedAction(args={"jsonld": "not an object"}))
    with pytest.raises(InvalidInput):
        await miner.decide(output.run_id, [bad], approver="bob")
    assert miner.get_run(output.run_id).status == "waiting"  # nothing changed

    run = await miner.decide(
        output.run_id,
        [Decision(type="edit", edited_action=EditedAction(args={"jsonld": edited}))],
        approver="bob",
    )

    assert run.decisions[0]["args"]["jsonld"]["name"] == edited["name"]
    [published], _ = knowledge.list_requests(status="published")
    assert published.content["name"] == edited["name"]


async def test_reject_records_the_reason_and_publishes_nothing(
    make_miner: MinerFactory, knowledge: KnowledgeService
) -> None:
    miner = make_miner(full_run("drugs"))
    output = await miner.run(request("drugs"), actor="alice", caller="token:1")

    run = await miner.decide(
        output.run_id, [Decision(type="reject", message="No source given")], approver="bob"
    )

    assert run.status == "done"
    assert run.decisions[0]["message"] == "No source given"
    assert "No source given" in run.decisions[0]["outcome"]
    [rejected], _ = knowledge.list_requests(status="rejected")
    assert (rejected.decided_by, rejected.reason) == ("bob", "No source given")
    assert knowledge.list_requests(status="published")[1] == 0


async def test_memory_persists_for_the_same_tags_and_is_isolated_from_other_tags(
    make_miner: MinerFactory,
) -> None:
    first = make_miner(full_run("drugs", note_line="- Pattern: learned in run one"))
    output = await first.run(request("drugs"), actor="alice", caller="token:1")
    await first.decide(output.run_id, [Decision(type="approve")], approver="bob")
    await first.aclose()

    second = make_miner({})  # new connections to the store, as a new process has
    note = await second.read_note("drugs", "discovery-notes")
    assert "- Pattern: learned in run one" in note.content
    assert "# Discovery Notes - drugs" in note.content

    other = make_miner(
        {"orchestrator": [say(call("read_file", file_path=note.path)), say(text="{}")]}
    )
    isolated = await other.run(request("climate"), actor="alice", caller="token:1")
    reads = other.model.calls  # type: ignore[union-attr]
    assert reads == ["orchestrator", "orchestrator"]
    run = other.get_run(isolated.run_id)
    assert run.thread_id == "climate"
    listing = await other.memory()
    assert sorted(listing) == ["climate", "drugs"]
    climate = await other.read_note("climate", "discovery-notes")
    assert "learned in run one" not in climate.content


async def test_a_run_cannot_read_another_tags_notes(make_miner: MinerFactory) -> None:
    miner = make_miner(full_run("drugs"))
    done = await miner.run(request("drugs"), actor="alice", caller="token:1")
    await miner.decide(done.run_id, [Decision(type="approve")], approver="bob")
    spy = make_miner(
        {
            "orchestrator": [
                say(call("read_file", file_path="/memories/knowledge/drugs/discovery-notes.md")),
                say(text='{"summary": "read"}'),
            ]
        }
    )
    live = await spy.start(request("climate"), actor="alice", caller="token:1")
    await live.stopped.wait()

    [read] = [e["data"] for e in live.events if e["type"] == "tool_result"]
    assert read["name"] == "read_file" and not read["ok"]
    assert "permission denied" in read["preview"]


async def test_a_run_without_tags_uses_the_global_thread_and_notes(
    make_miner: MinerFactory,
) -> None:
    miner = make_miner(full_run(None))
    output = await miner.run(request(), actor="alice", caller="token:1")

    assert miner.get_run(output.run_id).thread_id == "global"
    assert output.memory_writes == ["/memories/knowledge/global/discovery-notes.md"]
    note = await miner.read_note("global", "discovery-notes")
    assert "PubMed first" in note.content


async def test_the_iteration_bound_counts_rounds_of_the_mining_loop(
    make_miner: MinerFactory,
) -> None:
    script = full_run("drugs")
    orchestrator = script["orchestrator"]
    # A second round: discovery again once validation is done, instead of publishing.
    orchestrator[3] = say(call("task", description="Look again", subagent_type="discovery"))
    miner = make_miner(script)
    output = await miner.run(request("drugs", iterations=1), actor="alice", caller="token:1")

    assert output.summary.startswith(
        "Iteration bound reached (maxIterations=1): the mining loop ran 1 time, and "
        "discovery was asked again. These are partial results: 1 candidate so far."
    )
    assert [s.name for s in output.spawned_subagents] == ["discovery", "enrichment", "validation"]
    assert [c["@id"] for c in output.candidate_assets] == [ASPIRIN["@id"]]
    assert output.pending_approval == []
    assert miner.get_run(output.run_id).status == "done"


async def test_a_model_that_loops_is_stopped_by_its_step_limit(make_miner: MinerFactory) -> None:
    plan = call("write_todos", todos=[{"content": "Think again", "status": "in_progress"}])
    miner = make_miner({"orchestrator": [say(plan) for _ in range(50)]})
    output = await miner.run(request("drugs", iterations=1), actor="alice", caller="token:1")

    assert output.summary.startswith(
        "Step limit reached: 10 model turns that call tools (orchestrator)."
    )
    assert miner.model.calls.count("orchestrator") == 11  # type: ignore[union-attr]


async def test_an_answer_that_is_not_json_becomes_the_summary(make_miner: MinerFactory) -> None:
    miner = make_miner({"orchestrator": [say(text="Aspirin inhibits COX-1; nothing to publish.")]})
    output = await miner.run(request("drugs"), actor="alice", caller="token:1")

    assert output.summary == "Aspirin inhibits COX-1; nothing to publish."
    assert output.candidate_assets == []
    assert output.domain_tags == ["drugs"]
    assert output.memory_writes == []


async def test_a_failed_memory_write_is_listed_with_its_error_and_the_run_goes_on(
    make_miner: MinerFactory,
) -> None:
    miner = make_miner(full_run("drugs"))
    store = (await miner.persistence()).store
    await MemoryNotes(store).seed(["drugs"])
    original = store.abatch

    async def disk_full(ops: Any) -> Any:
        if any(isinstance(op, PutOp) and op.key == "/discovery-notes.md" for op in ops):
            raise OSError("disk full")
        return await original(ops)

    store.abatch = disk_full  # type: ignore[method-assign]
    output = await miner.run(request("drugs"), actor="alice", caller="token:1")

    assert output.memory_writes == [
        "/memories/knowledge/drugs/discovery-notes.md (write failed: memory write failed: "
        "OSError: disk full)"
    ]
    assert [s.status for s in output.spawned_subagents] == ["completed"] * 3
    assert [a.action_name for a in output.pending_approval] == ["dkg_publish_asset"]


async def test_the_rate_limit_counts_runs_per_token(make_miner: MinerFactory) -> None:
    miner = make_miner({}, miner_runs_per_window=2)
    await miner.run(request("a"), actor="alice", caller="token:1")
    await miner.run(request("b"), actor="alice", caller="token:1")
    with pytest.raises(TooManyRequests, match="at most 2 per 3600 s"):
        await miner.run(request("c"), actor="alice", caller="token:1")
    await miner.run(request("c"), actor="carol", caller="token:2")


async def test_without_a_model_the_miner_says_how_to_set_one(make_miner: MinerFactory) -> None:
    miner = make_miner(None)
    with pytest.raises(NoModel, match="GRAPHWRIGHT_MODEL=provider:model"):
        await miner.run(request("drugs"), actor="alice", caller="token:1")


async def test_bad_tags_are_refused_with_a_clear_error(make_miner: MinerFactory) -> None:
    miner = make_miner({})
    for tags in (["Supply-Chain"], ["a b"], ["global"], [""]):
        with pytest.raises(InvalidInput, match="tag"):
            await miner.run(request(*tags), actor="alice", caller="token:1")
