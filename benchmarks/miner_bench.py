"""What the knowledge miner adds per agent step, and how soon an approved asset is queryable.

The scripted chat model (no LLM) times its own calls, so model time is known; the steps call
`write_todos`, a state-only tool, so tool time is nil and everything else counts as overhead.

- overhead per step, baseline: LangChain's bare `create_agent` loop (one model, one tool, an
  in-memory checkpointer): per step, the time from one model call to the next minus the model's
  own time.
- overhead per step, graphwright: a miner run (`MinerService` with the deepagents graph, three
  subagents, todos and file middleware, memory routes and permissions, the step bound, HITL,
  progress tracking, the SQLite checkpointer and store): the same measure.
  Target: under 30 ms p50.
- approval to queryable, baseline: the knowledge base alone, `KnowledgeService.publish_now`
  then a SPARQL ASK that finds the asset (embedded Oxigraph store).
- approval to queryable, graphwright: from `MinerService.decide(approve)` on a run waiting at
  `dkg_publish_asset` (its publish filed as a publication request when the run stopped; the
  decision approves that request, which publishes it with the approver) to the moment the
  publish has committed, when the ASK finds it. Target: under 200 ms on the embedded store.
  Also shown: until `decide` returns, which adds the resume from the checkpoint, the agent's
  final turn and the run row's update.

Run: .venv/bin/python benchmarks/miner_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from graphwright.db import Database
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.service import KnowledgeService
from graphwright.miner.agent_tools import MinerTools
from graphwright.miner.schemas import Decision, MinerRequest
from graphwright.miner.service import MinerService
from graphwright.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.miner.scripted import ScriptedModel, call, say  # noqa: E402

STEP_TARGET_MS = 30.0
APPROVAL_TARGET_MS = 200.0


class TimedModel(ScriptedModel):
    """The scripted model, recording when each call starts and how long it takes."""

    starts: list[float] = []
    spent: list[float] = []

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        start = time.perf_counter()
        result = super()._generate(messages, *args, **kwargs)
        self.starts.append(start)
        self.spent.append(time.perf_counter() - start)
        return result


def step_overheads(model: TimedModel) -> list[float]:
    """Per step: from one model call's start to the next's, minus the model's own time."""
    return [
        (later - earlier - spent) * 1000
        for earlier, later, spent in zip(model.starts, model.starts[1:], model.spent, strict=False)
    ]


def todo_steps(steps: int) -> list[AIMessage]:
    return [
        *(say(call("write_todos", todos=[{"content": f"step {n}", "status": "in_progress"}]))
          for n in range(steps)),
        say(text='{"summary": "done", "candidateAssets": []}'),
    ]  # fmt: skip


async def baseline_steps(runs: int, steps: int) -> list[float]:
    @tool
    def write_todos(todos: list[dict[str, Any]]) -> str:
        """Record the todo list."""
        return f"Updated todo list to {todos}"

    overheads: list[float] = []
    for run in range(runs):
        model = TimedModel(scripts={"unknown": todo_steps(steps)}, starts=[], spent=[])
        agent = create_agent(model, tools=[write_todos], checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": f"t{run}"}, "recursion_limit": 1000}
        await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]}, config)
        overheads.extend(step_overheads(model))
    return overheads


def settings_in(home: Path) -> Settings:
    return Settings(home=home, kb_sample_data=False, offline=True, miner_runs_per_window=0)


async def miner_steps(home: Path, runs: int, steps: int) -> list[float]:
    settings = settings_in(home)
    db = Database(settings.resolved_database_url)
    knowledge = KnowledgeService.from_settings(db, open_backend(settings), settings)
    overheads: list[float] = []
    model = TimedModel(starts=[], spent=[])
    miner = MinerService(db, settings, tools=MinerTools(knowledge), model=model)
    request = MinerRequest(query="go", domain_tags=["bench"], max_iterations=10)
    await miner.run(request, actor="bench", caller="bench")  # warm: store, graph, imports
    for _ in range(runs):
        model.scripts = {"orchestrator": todo_steps(steps)}
        model.starts, model.spent = [], []
        await miner.run(request, actor="bench", caller="bench")
        overheads.extend(step_overheads(model))
    await miner.aclose()
    await knowledge.aclose()
    db.dispose()
    return overheads


def asset(n: int) -> dict[str, Any]:
    return {
        "@context": "https://schema.org/",
        "@id": f"urn:graphwright:bench:{n}",
        "@type": "Thing",
        "name": f"bench asset {n}",
        "identifier": f"bench:{n}",
    }


def ask(n: int) -> str:
    return f"ASK {{ GRAPH ?g {{ <urn:graphwright:bench:{n}> ?p ?o }} }}"


async def baseline_approval(home: Path, runs: int) -> list[float]:
    settings = settings_in(home)
    db = Database(settings.resolved_database_url)
    knowledge = KnowledgeService.from_settings(db, open_backend(settings), settings)
    await knowledge.publish_now(asset(-1), actor="bench")  # warm
    times = []
    for n in range(runs):
        start = time.perf_counter()
        await knowledge.publish_now(asset(n), actor="bench")
        assert (await knowledge.query(ask(n))).boolean
        times.append((time.perf_counter() - start) * 1000)
    await knowledge.aclose()
    db.dispose()
    return times


async def miner_approval(home: Path, runs: int) -> tuple[list[float], list[float]]:
    settings = settings_in(home)
    db = Database(settings.resolved_database_url)
    knowledge = KnowledgeService.from_settings(db, open_backend(settings), settings)
    model = TimedModel(starts=[], spent=[])
    miner = MinerService(db, settings, tools=MinerTools(knowledge), model=model)
    request = MinerRequest(query="go", domain_tags=["bench"])
    committed: list[float] = []
    approve = knowledge.approve

    async def timed_approve(*args: Any, **kwargs: Any) -> Any:
        published = await approve(*args, **kwargs)
        committed.append(time.perf_counter())
        return published

    knowledge.approve = timed_approve  # type: ignore[method-assign]
    times, returned = [], []
    for n in range(-1, runs):  # the first is a warm-up
        model.scripts = {
            "orchestrator": [
                say(call("dkg_publish_asset", jsonld=asset(n))),
                say(text='{"summary": "published", "candidateAssets": []}'),
            ]
        }
        output = await miner.run(request, actor="bench", caller="bench")
        start = time.perf_counter()
        await miner.decide(output.run_id, [Decision(type="approve")], approver="bench")
        done = time.perf_counter()
        assert (await knowledge.query(ask(n))).boolean
        if n >= 0:
            times.append((committed[-1] - start) * 1000)
            returned.append((done - start) * 1000)
    await miner.aclose()
    await knowledge.aclose()
    db.dispose()
    return times, returned


def p50(values: list[float]) -> float:
    return statistics.median(values)


def line(label: str, values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"  {label:<12} p50 {p50(values):8.2f} ms   p90 {p90:8.2f} ms   (n={len(values)})"


async def main(quick: bool) -> None:
    runs, steps = (3, 5) if quick else (10, 8)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = await baseline_steps(runs, steps)
        ours = await miner_steps(root / "steps", runs, steps)
        print("Overhead per agent step, beyond model and tool time")
        print(line("baseline", base))
        print(line("graphwright", ours))
        print(f"  ratio {p50(ours) / p50(base):.1f}x; target < {STEP_TARGET_MS:.0f} ms p50: "
              f"{'met' if p50(ours) < STEP_TARGET_MS else 'NOT met'}")  # fmt: skip
        base = await baseline_approval(root / "kb", runs)
        ours, returned = await miner_approval(root / "approval", runs)
        print("Approval to asset queryable (embedded store)")
        print(line("baseline", base))
        print(line("graphwright", ours))
        print(line("decide()", returned))
        print(f"  ratio {p50(ours) / p50(base):.1f}x; target < {APPROVAL_TARGET_MS:.0f} ms: "
              f"{'met' if p50(ours) < APPROVAL_TARGET_MS else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    asyncio.run(main(parser.parse_args().quick))
