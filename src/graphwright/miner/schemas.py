"""The miner's shapes at its boundaries (REST, MCP), camelCase on the wire.

`MinerOutput` is seed 001's JSON exactly, plus `runId` and `pendingApproval`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from graphwright.knowledge.schemas import KbModel

DEFAULT_ITERATIONS = 4
MAX_ITERATIONS = 10
PUBLISH_TOOL = "dkg_publish_asset"


class MinerInput(KbModel):
    """A request body: camelCase like every shape here, and no unknown field."""

    model_config = ConfigDict(extra="forbid")


class SubagentRun(KbModel):
    name: str
    task: str
    status: Literal["running", "completed", "failed"]


class TraceStep(KbModel):
    """One tool an agent called: its arguments shortened, and what it answered."""

    tool: str
    args: dict[str, Any]
    ok: bool | None = Field(default=None, description="None until the tool answered")
    result: str | None = Field(default=None, description="The start of the tool's answer")


class TraceAgent(KbModel):
    """The orchestrator, or one subagent call (`id` is the `task` call's id), with its steps."""

    agent: str
    id: str | None = None
    task: str | None = None
    status: Literal["running", "completed", "failed"] | None = None
    steps: list[TraceStep] = Field(default_factory=list)


class Trace(KbModel):
    """What the run did, step by step: each agent's tool calls, and the memory notes it read
    (the notes it wrote are seed 001's `memoryWrites`)."""

    agents: list[TraceAgent] = Field(default_factory=list)
    memory_reads: list[str] = Field(default_factory=list)


class FileEntry(KbModel):
    path: str
    size: int


class PendingAction(KbModel):
    """A tool call that waits for a person: approve, edit its arguments, or reject it."""

    id: str = Field(description="The tool call id; a decision may name it")
    action_name: str
    args: dict[str, Any] = Field(
        description="For a publish, `jsonld` is the document validated and, once approved, "
        "published: the candidate without its bookkeeping"
    )
    description: str | None = None
    allowed_decisions: list[str]
    request_id: str | None = Field(
        default=None,
        description="Its publication request in the knowledge base's queue: deciding it there "
        "(web, REST, `kb approve`) decides this action",
    )
    revision_of: str | None = Field(
        default=None, description="The asset it would revise (a candidate that duplicates it)"
    )
    trust_signals: dict[str, Any] | None = Field(
        default=None, description="The checks and confidence it is offered (and approved) on"
    )


class MinerOutput(KbModel):
    summary: str
    candidate_assets: list[dict[str, Any]] = Field(default_factory=list)
    domain_tags: list[str] = Field(default_factory=list)
    memory_writes: list[str] = Field(default_factory=list)
    todos: list[str] = Field(default_factory=list)
    spawned_subagents: list[SubagentRun] = Field(default_factory=list)
    filesystem_files: list[FileEntry] = Field(default_factory=list)
    synthesized_report: str = ""
    run_id: str
    pending_approval: list[PendingAction] = Field(default_factory=list)
    trace: Trace = Field(default_factory=Trace)


class MinerRequest(MinerInput):
    query: str = Field(min_length=1, max_length=20_000)
    domain_tags: list[str] = Field(default_factory=list, max_length=10)
    max_iterations: int = Field(default=DEFAULT_ITERATIONS, ge=1, le=MAX_ITERATIONS)


class EditedAction(KbModel):
    name: str = PUBLISH_TOOL
    args: dict[str, Any]


class Decision(MinerInput):
    """One person's decision on one pending action."""

    type: Literal["approve", "edit", "reject"]
    action_id: str | None = Field(
        default=None, description="The pending action's id; when given it must match"
    )
    edited_action: EditedAction | None = None
    message: str | None = Field(default=None, max_length=5_000, description="Why, on reject")

    @model_validator(mode="after")
    def _complete(self) -> Decision:
        if self.type == "edit" and self.edited_action is None:
            raise ValueError("an edit decision needs editedAction {name, args}")
        if self.type == "reject" and not (self.message or "").strip():
            raise ValueError("a reject decision needs a message saying why")
        return self


class DecisionInput(MinerInput):
    decisions: list[Decision] = Field(min_length=1, max_length=100)


class RunView(KbModel):
    id: str
    thread_id: str
    status: str
    query: str
    domain_tags: list[str]
    max_iterations: int
    requested_by: str
    created_at: datetime
    updated_at: datetime
    result: dict[str, Any] | None
    pending: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    error: str | None


class RunRecord(RunView):
    """A run as the service resumes it: with what its progress tracker kept, and its events."""

    workspace: dict[str, Any] | None
    events: list[dict[str, Any]]


class RunPage(KbModel):
    runs: list[RunView]
    total: int
    offset: int
    limit: int


class MemoryNote(KbModel):
    tag: str
    note: str
    path: str
    size: int
    updated_at: datetime | None = None


class MemoryNoteContent(MemoryNote):
    content: str


class MemoryTag(KbModel):
    tag: str
    notes: list[MemoryNote]


class MemoryListing(KbModel):
    tags: list[MemoryTag]


class MemoryNoteInput(MinerInput):
    content: str = Field(max_length=200_000)
