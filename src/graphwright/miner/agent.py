"""The miner's deep agent: an orchestrator with three subagents (discovery, enrichment,
validation), each with todos and file tools, memory per domain tag, and a person's approval
before anything is published.

The graph is built per run (its tags decide its memory routes and permissions) on the shared
store and checkpointer; building it costs milliseconds, and a run stopped for approval is
rebuilt the same way wherever it is resumed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, NotRequired

from deepagents import create_deep_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    TodoListMiddleware,
)
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from graphwright.core.words import counted
from graphwright.miner.memory import run_backend, run_permissions
from graphwright.miner.prompts import prompts
from graphwright.miner.schemas import PUBLISH_TOOL

BOUND_MESSAGE_NAME = "iteration-bound"
APPROVAL = {"allowed_decisions": ["approve", "edit", "reject"]}
# Against a model that loops, whatever the iteration bound: model turns that call tools, for
# the orchestrator per iteration of the mining loop, and for each subagent call.
ORCHESTRATOR_TURNS_PER_ITERATION = 10
SUBAGENT_TURNS = 15


def _run_id() -> str:
    return str(get_config().get("configurable", {}).get("miner_run_id", ""))


class StepState(AgentState[Any]):
    miner_steps: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]


class RunBound(AgentMiddleware[StepState, Any, Any]):
    """The bounds of a run, counted in the checkpoint (so a run resumed after an approval goes
    on counting) and per run:

    - `iterations`, for the orchestrator: rounds of the mining loop (seed 001's
      `maxIterations`). Round k is the k-th call of each subagent (discovery, enrichment,
      validation); a turn that would call one of them a (k+1)-th time reaches the bound;
    - `turns`: model turns that call tools, against a model that loops.

    A turn past a bound is replaced by a note that says which, and the agent stops there; a
    final answer without tool calls is always let through."""

    state_schema = StepState

    def __init__(self, *, turns: int, label: str, iterations: int | None = None) -> None:
        super().__init__()
        self.turns = turns
        self.iterations = iterations
        self.label = label

    @property
    def name(self) -> str:
        return f"RunBound[{self.label}]"

    @staticmethod
    def _steps(state: Any, run_id: str) -> dict[str, Any]:
        steps = state.get("miner_steps") or {}
        return steps if steps.get("run") == run_id else {"run": run_id, "turns": 0, "rounds": {}}

    def _reached(self, steps: dict[str, Any], calls: list[dict[str, Any]]) -> str | None:
        if steps["turns"] >= self.turns:
            return f"Step limit reached: {self.turns} model turns that call tools ({self.label})."
        if self.iterations is None:
            return None
        rounds = _rounds(steps["rounds"], calls)
        again = next((name for name, n in rounds.items() if n > self.iterations), None)
        if again is None:
            return None
        return (
            f"Iteration bound reached (maxIterations={self.iterations}): the mining loop ran "
            f"{counted(self.iterations, 'time')}, and {again} was asked again."
        )

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        response = await handler(request)
        calls = [c for m in response.result if isinstance(m, AIMessage) for c in m.tool_calls]
        if not calls:
            return response
        note = self._reached(self._steps(request.state, _run_id()), calls)
        if note is None:
            return response
        return ModelResponse(result=[AIMessage(note, name=BOUND_MESSAGE_NAME)])

    async def aafter_model(self, state: StepState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = state["messages"][-1] if state.get("messages") else None
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        steps = self._steps(state, _run_id())
        rounds = _rounds(steps["rounds"], last.tool_calls)
        return {"miner_steps": {**steps, "turns": steps["turns"] + 1, "rounds": rounds}}


def _rounds(rounds: dict[str, int], calls: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many times each subagent was called, once `calls` are made."""
    counted = dict(rounds)
    for call in calls:
        if call["name"] == "task":
            subagent = str(call["args"].get("subagent_type", ""))
            counted[subagent] = counted.get(subagent, 0) + 1
    return counted


def _subagent(
    name: str, description: str, prompt: str, tools: Sequence[BaseTool]
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "system_prompt": prompt,
        "tools": list(tools),
        "middleware": [TodoListMiddleware(), RunBound(turns=SUBAGENT_TURNS, label=name)],
    }


def build_agent(
    *,
    model: BaseChatModel,
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[str],
    memory_tags: Sequence[str],
    domain_tags: Sequence[str],
    max_iterations: int,
    reads: Sequence[BaseTool],
    discovery_extra: Sequence[BaseTool],
    validation_extra: Sequence[BaseTool],
    publish: BaseTool,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    text = prompts(memory_tags, domain_tags)
    subagents = [
        _subagent(
            "discovery",
            "Collects raw facts, sources and hypotheses from the knowledge base, PubMed, the "
            "biomedical knowledge graph and the web.",
            text["discovery"],
            [*reads, *discovery_extra],
        ),
        _subagent(
            "enrichment",
            "Turns discovered facts into candidate JSON-LD Knowledge Assets under /candidates/, "
            "linked by UAL to existing assets.",
            text["enrichment"],
            reads,
        ),
        _subagent(
            "validation",
            "Validates the candidates in /candidates/: duplicates, required fields, links, "
            "confidence with reasons.",
            text["validation"],
            [*reads, *validation_extra],
        ),
    ]
    return create_deep_agent(
        model=model,
        tools=[publish],
        system_prompt=text["orchestrator"],
        middleware=[
            TodoListMiddleware(),
            RunBound(
                turns=ORCHESTRATOR_TURNS_PER_ITERATION * max_iterations,
                iterations=max_iterations,
                label="orchestrator",
            ),
        ],
        subagents=subagents,
        permissions=run_permissions(memory_tags),
        backend=run_backend(store, memory_tags),
        interrupt_on={PUBLISH_TOOL: APPROVAL},
        checkpointer=checkpointer,
        store=store,
        name="knowledge-miner",
    )
