"""The knowledge miner's Agent Workspace (seed 001): a run's live progress from its event stream
(todos, subagents with task and status, context files with sizes, memory writes, synthesis), and
under it the approval panel (`miner_approvals.py`), where a person approves, edits or rejects
each pending publish.

It follows `MinerService.events`, the source of `GET /api/miner/runs/{id}/events`: live while
the run runs in this process, else as stored (a run started by another process, such as the
chat's miner tool, shows its progress once each of its segments stops).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from nicegui import background_tasks, ui

from graphwright.auth.models import Principal
from graphwright.miner.schemas import Decision, RunView
from graphwright.miner.service import MinerService
from graphwright.web.common import io, notify_error
from graphwright.web.miner_approvals import ApprovalPanel

POLL_SECONDS = 1.0
FIND_RUN_SECONDS = 60.0


def _kb(size: int | None) -> str:
    return "size unknown" if size is None else f"{size / 1024:.1f} KB"


@dataclass
class Progress:
    """What the panel shows, folded from a run's events (or its stored result)."""

    status: str = "starting"
    todos: list[str] = field(default_factory=list)
    subagents: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, int | None] = field(default_factory=dict)
    memory: dict[str, str | None] = field(default_factory=dict)
    synthesis: str = ""
    summary: str = ""
    error: str | None = None
    seq: int = -1

    def apply(self, event: dict[str, Any]) -> None:
        self.seq = max(self.seq, int(event.get("seq", self.seq + 1)))
        kind, data = event["type"], event.get("data") or {}
        if kind == "run":
            self.status = data.get("status", self.status)
        elif kind == "todos":
            self.todos = list(data.get("todos") or [])
        elif kind == "subagent":
            self.subagents[data["id"]] = data
        elif kind == "file":
            self.files[data["path"]] = data.get("size")
        elif kind == "memory_write":
            self.memory[data["path"]] = data.get("error")
        elif kind == "error":
            self.error = data.get("message")
        elif kind == "done":
            self.status = data.get("status", "done")
            self.result(data.get("result"))

    def result(self, result: dict[str, Any] | None) -> None:
        """Seed 001's JSON, the final word on what the run did."""
        if not result:
            return
        self.todos = list(result.get("todos") or self.todos)
        for n, run in enumerate(result.get("spawnedSubagents") or []):
            self.subagents.setdefault(f"result-{n}", run)
        for entry in result.get("filesystemFiles") or []:
            self.files[entry["path"]] = entry.get("size")
        for path in result.get("memoryWrites") or []:
            self.memory.setdefault(path, None)
        self.synthesis = result.get("synthesizedReport") or self.synthesis
        self.summary = result.get("summary") or self.summary


class Workspace:
    """The panel; `follow(run_id)` shows a run, `watch_new_run()` waits for one to start."""

    def __init__(
        self,
        miner: MinerService,
        principal: Principal,
        *,
        link_to_run: bool = True,
    ) -> None:
        """`link_to_run`: show a link to the run's page (not on that page itself)."""
        self.miner = miner
        self.principal = principal
        # Told of the run each time it stops (done, or waiting for a person).
        self.on_stop: Callable[[RunView], None] | None = None
        self.run_id: str | None = None
        self.progress = Progress()
        self._task: asyncio.Task[Any] | None = None
        with (
            ui.card()
            .classes("w-full bg-slate-50")
            .props("flat bordered")
            .mark("agent-workspace")
            .props('data-testid="agent-workspace"') as self.card
        ):
            with ui.row().classes("w-full items-center gap-2"):
                ui.label("Agent Workspace").classes("text-base font-bold")
                self.status = (
                    ui.label()
                    .classes("text-sm text-gray-700")
                    .mark("workspace-status")
                    .props('data-testid="workspace-status"')
                )
                ui.space()
                self.run_link = ui.link("", "#").classes("text-xs")
                self.run_link.set_visibility(link_to_run)
            self.body = ui.column().classes("w-full gap-1")
            self.approvals = ui.column().classes("w-full gap-2")
        self.card.set_visibility(False)

    @property
    def visible(self) -> bool:
        return self.card.visible

    def toggle(self) -> None:
        self.card.set_visibility(not self.card.visible)

    # --- following a run ------------------------------------------------------------------------

    def follow(self, run_id: str) -> None:
        """Show `run_id` from its first event, and keep up with it."""
        if self._task is not None:
            self._task.cancel()
        self.run_id, self.progress = run_id, Progress()
        self.run_link.text, self.run_link.props["href"] = "Open the run", f"/miner/runs/{run_id}"
        self.run_link.update()
        self.approvals.clear()
        self.card.set_visibility(True)
        self._render()
        self._task = background_tasks.create(self._follow(run_id), name=f"workspace-{run_id}")

    def watch_new_run(self, since: datetime | None = None) -> None:
        """Open now and follow the first run that starts after `since` (the chat's miner tool
        starts one in its own process)."""
        since = since or datetime.now(UTC)
        self.card.set_visibility(True)
        self.progress = Progress()
        self._render()
        if self._task is not None:
            self._task.cancel()
        self._task = background_tasks.create(self._find_run(since), name="workspace-find")

    async def _find_run(self, since: datetime) -> None:
        deadline = asyncio.get_running_loop().time() + FIND_RUN_SECONDS
        while asyncio.get_running_loop().time() < deadline and not self.card.is_deleted:
            page = await io(self.miner.list_runs, status=None, offset=0, limit=5)
            fresh = [run for run in page.runs if run.created_at >= since - timedelta(seconds=1)]
            if fresh:
                self.follow(fresh[-1].id)
                return
            await asyncio.sleep(POLL_SECONDS)

    async def _follow(self, run_id: str) -> None:
        try:
            while True:
                async for event in self.miner.events(run_id, after=self.progress.seq):
                    self.progress.apply(event)
                    self._render()
                run = await io(self.miner.get_run, run_id)
                self.progress.status = run.status
                if run.status != "running" or self.card.is_deleted:  # done, or the page closed
                    break
                await asyncio.sleep(POLL_SECONDS)  # running in another process: check again
            self.progress.result(run.result)
            self.progress.error = self.progress.error or run.error
            self._render()
            if self.on_stop is not None:
                self.on_stop(run)
            if run.status == "waiting":
                await self._show_approvals(run_id)
        except Exception as exc:  # the panel says what went wrong; the page stays usable
            if self.card.is_deleted:
                return
            self.progress.error = f"{type(exc).__name__}: {exc}"
            self._render()

    # --- drawing --------------------------------------------------------------------------------

    def _render(self) -> None:
        progress = self.progress
        self.status.text = (
            f"run {self.run_id[:8]} · {progress.status}"
            if self.run_id
            else ("waiting for the miner run to start…")
        )
        self.body.clear()
        with self.body:
            self._section("Planning", "workspace-todos", progress.todos)
            self._section(
                "Subagents",
                "workspace-subagents",
                [f"{s['name']}: {s['task']} ({s['status']})" for s in progress.subagents.values()],
            )
            self._section(
                "Context files",
                "workspace-files",
                [f"{path} ({_kb(size)})" for path, size in progress.files.items()],
            )
            self._section(
                "Long-term memory",
                "workspace-memory",
                [
                    path if error is None else f"{path} (write failed: {error})"
                    for path, error in progress.memory.items()
                ],
            )
            if progress.synthesis:
                self._section("Synthesis", "workspace-synthesis", [progress.synthesis])
            if progress.summary:
                self._section("Summary", "workspace-summary", [progress.summary])
            if progress.error:
                ui.label(progress.error).classes("text-sm text-red-800").mark(
                    "workspace-error"
                ).props('data-testid="workspace-error"')

    @staticmethod
    def _section(title: str, testid: str, lines: list[str]) -> None:
        if not lines:
            return
        with ui.column().classes("w-full gap-0").mark(testid).props(f'data-testid="{testid}"'):
            ui.label(title).classes("text-sm font-semibold")
            for line in lines:
                ui.label(f"• {line}").classes("text-sm text-gray-700 ml-2")

    # --- approvals ------------------------------------------------------------------------------

    async def _show_approvals(self, run_id: str) -> None:
        run = await io(self.miner.get_run, run_id)
        ApprovalPanel(self, run_id, self.miner.review(run), self.approvals)

    async def decide(self, run_id: str, decisions: list[Decision]) -> None:
        """Send the decisions (one per pending action, in order) and follow the resumed run."""
        self.approvals.clear()
        self.progress.status = "sending decisions"
        self._render()
        try:
            await self.miner.resume_as(run_id, decisions, self.principal)
        except Exception as exc:
            notify_error(str(exc))
            await self._show_approvals(run_id)
            return
        self._task = background_tasks.create(self._follow(run_id), name=f"workspace-{run_id}")
