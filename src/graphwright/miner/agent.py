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

from graphwright.miner.memory import run_backend, run_permissions
from graphwright.miner.prompts import prompts
from graphwright.miner.schemas import PUBLISH_TOOL

BOUND_MESSAGE_NAME = "iteration-bound"
APPROVAL = {"allowed_decisions": ["approve", "edit", "reject"]}


def _run_id() -> str:
    return str(get_config().get("configurable", {}).get("miner_run_id", ""))


class StepState(AgentState[Any]):
    miner_steps: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]


class StepBound(AgentMiddleware[StepState, Any, Any]):
    """At most `bound` model turns that call tools, per run (counted in the checkpoint, so a
    run resumed after an approval goes on counting). A turn past the bound that would call
    tools is replaced by a note that the bound was reached, and the agent stops there; a final
    answer without tool calls is still let through."""

    state_schema = StepState

    def __init__(self, bound: int, *, label: str) -> None:
        super().__init__()
        self.bound = bound
        self.label = label

    @property
    def name(self) -> str:
        return f"StepBound[{self.label}]"

    def _count(self, state: Any, run_id: str) -> int:
        steps = state.get("miner_steps") or {}
        return int(steps.get("count", 0)) if steps.get("run") == run_id else 0

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        response = await handler(request)
        if self._count(request.state, _run_id()) < self.bound:
            return response
        acting = any(isinstance(m, AIMessage) and m.tool_calls for m in response.result)
        if not acting:
            return response
        note = f"Iteration bound reached: {self.bound} of {self.bound} steps ({self.label})."
        return ModelResponse(result=[AIMessage(note, name=BOUND_MESSAGE_NAME)])

    async def aafter_model(self, state: StepState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = state["messages"][-1] if state.get("messages") else None
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        run_id = _run_id()
        return {"miner_steps": {"run": run_id, "count": self._count(state, run_id) + 1}}


def _subagent(
    name: str, description: str, prompt: str, tools: Sequence[BaseTool], bound: int
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "system_prompt": prompt,
        "tools": list(tools),
        "middleware": [TodoListMiddleware(), StepBound(bound, label=name)],
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
            max_iterations,
        ),
        _subagent(
            "enrichment",
            "Turns discovered facts into candidate JSON-LD Knowledge Assets under /candidates/, "
            "linked by UAL to existing assets.",
            text["enrichment"],
            reads,
            max_iterations,
        ),
        _subagent(
            "validation",
            "Validates the candidates in /candidates/: duplicates, required fields, links, "
            "confidence with reasons.",
            text["validation"],
            [*reads, *validation_extra],
            max_iterations,
        ),
    ]
    return create_deep_agent(
        model=model,
        tools=[publish],
        system_prompt=text["orchestrator"],
        middleware=[TodoListMiddleware(), StepBound(max_iterations, label="orchestrator")],
        subagents=subagents,
        permissions=run_permissions(memory_tags),
        backend=run_backend(store, memory_tags),
        interrupt_on={PUBLISH_TOOL: APPROVAL},
        checkpointer=checkpointer,
        store=store,
        name="knowledge-miner",
    )
