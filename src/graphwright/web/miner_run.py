"""A miner run's record on its page: what each agent did step by step (the tools it called,
their arguments shortened, what they answered), the memory notes read and written, every
candidate with its checks, confidence breakdown and what became of it, and the decisions taken
on its publishes. All of it is the run's result and decisions, as the API returns them."""

from __future__ import annotations

from typing import Any

import orjson
from nicegui import ui

from graphwright.core.words import counted
from graphwright.miner.schemas import RunView
from graphwright.web.knowledge_pages import asset_path

PUBLICATION_WORDS = {
    "waiting": "waits for approval",
    "published": "published",
    "rejected": "rejected",
    "dropped": "not offered",
    "not proposed": "not proposed for publishing",
}


def _args(args: dict[str, Any]) -> str:
    return ", ".join(
        f"{key}={value if isinstance(value, str) else orjson.dumps(value).decode()}"
        for key, value in args.items()
    )


class RunRecord:
    """Drawn again each time the run stops (done, or waiting for a person)."""

    def __init__(self) -> None:
        self.body = (
            ui.column().classes("w-full gap-3").mark("run-record").props('data-testid="run-record"')
        )

    def show(self, run: RunView) -> None:
        if self.body.is_deleted:  # the page was closed
            return
        result = run.result or {}
        self.body.clear()
        with self.body:
            self._candidates(result.get("candidateAssets") or [])
            self._decisions(run.decisions)
            self._steps(result.get("trace") or {})
            self._memory(result)

    @staticmethod
    def _section(title: str, name: str) -> ui.column:
        column = ui.column().classes("w-full gap-1").mark(name).props(f'data-testid="{name}"')
        with column:
            ui.label(title).classes("text-base font-bold")
        return column

    def _candidates(self, candidates: list[dict[str, Any]]) -> None:
        with self._section("Candidates", "run-candidates"):
            if not candidates:
                ui.label("No candidate yet.").classes("text-sm")
            for candidate in candidates:
                self._candidate(candidate)

    @staticmethod
    def _candidate(candidate: dict[str, Any]) -> None:
        signals = candidate.get("trustSignals") or {}
        publication = candidate.get("publication") or {}
        status = str(publication.get("status", ""))
        with (
            ui.card()
            .classes("w-full")
            .props("flat bordered")
            .mark("run-candidate")
            .props('data-testid="run-candidate"')
        ):
            name = candidate.get("name") or candidate.get("@id") or "(unnamed)"
            with ui.row().classes("w-full items-center gap-2"):
                ui.label(str(name)).classes("font-semibold grow")
                ui.badge(PUBLICATION_WORDS.get(status, status or "unknown"))
            if publication.get("ual"):
                with ui.row().classes("text-sm gap-1"):
                    ui.label(f"Published by {publication.get('by')} as")
                    ui.link(publication["ual"], asset_path(publication["ual"]))
            if publication.get("revisionOf"):
                ui.label(f"A revision of {publication['revisionOf']}").classes("text-sm")
            if publication.get("reason"):
                ui.label(f"Why: {publication['reason']}").classes("text-sm")
            if "confidence" in signals:
                parts = signals.get("breakdown") or {}
                verdict = "valid" if signals.get("valid") else "not valid"
                ui.label(
                    f"Confidence {signals['confidence']:.2f} ({verdict}): checks "
                    f"{parts.get('checks', 0):.2f} · sources {parts.get('sources', 0):.2f} · "
                    f"links {parts.get('links', 0):.2f}"
                ).classes("text-sm")
            for check in signals.get("checks") or []:
                mark = "✓" if check.get("passed") else "✗"
                ui.label(f"{mark} {check.get('name')}: {check.get('detail')}").classes("text-xs")
            if signals.get("error"):
                ui.label(signals["error"]).classes("text-sm text-red-800")

    def _decisions(self, decisions: list[dict[str, Any]]) -> None:
        with self._section("Decisions", "run-decisions"):
            if not decisions:
                ui.label("No decision yet.").classes("text-sm")
            for decision in decisions:
                who = decision.get("by") or "?"
                line = f"{decision.get('type')} by {who}"
                if decision.get("at"):
                    line += f" at {str(decision['at'])[:19].replace('T', ' ')}"
                if decision.get("message"):
                    line += f": {decision['message']}"
                ui.label(line).classes("text-sm")
                if decision.get("outcome"):
                    ui.label(str(decision["outcome"])).classes("text-xs text-gray-700 ml-4")

    def _steps(self, trace: dict[str, Any]) -> None:
        with self._section("Steps", "run-steps"):
            agents = trace.get("agents") or []
            if not any(agent.get("steps") for agent in agents):
                ui.label("No step yet.").classes("text-sm")
            for agent in agents:
                title = agent.get("agent", "")
                if agent.get("task"):
                    title += f" ({agent.get('status')}): {str(agent['task'])[:120]}"
                with (
                    ui.expansion(f"{title} · {counted(len(agent.get('steps') or []), 'step')}")
                    .classes("w-full")
                    .props("dense")
                    .mark("run-agent")
                    .props('data-testid="run-agent"')
                ):
                    for step in agent.get("steps") or []:
                        mark = {True: "✓", False: "✗"}.get(step.get("ok"), "…")
                        ui.label(f"{mark} {step.get('tool')}({_args(step.get('args') or {})})")\
                            .classes("text-xs font-mono break-all")  # fmt: skip
                        if step.get("result"):
                            ui.label(str(step["result"])[:300]).classes(
                                "text-xs text-gray-700 ml-4 break-all"
                            )

    def _memory(self, result: dict[str, Any]) -> None:
        reads = (result.get("trace") or {}).get("memoryReads") or []
        writes = result.get("memoryWrites") or []
        with self._section("Memory notes", "run-memory"):
            if not reads and not writes:
                ui.label("No memory note read or written.").classes("text-sm")
            for path in reads:
                ui.label(f"read {path}").classes("text-sm")
            for path in writes:
                ui.label(f"wrote {path}").classes("text-sm")
