"""Publication requests: what a model (or anyone) asked to publish, for a person to approve or
reject with a reason. Nothing reaches the knowledge base without it. Decisions go through
KnowledgeService, with the same rule as the REST API: a token scoped to one conversation
cannot decide."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from nicegui import ui
from starlette.responses import RedirectResponse

from graphwright.auth.models import Principal
from graphwright.errors import GraphwrightError
from graphwright.knowledge.schemas import PublicationRequestView
from graphwright.knowledge.service import decider
from graphwright.web.common import SIGN_IN, call, code, guarded, io, named, signed_in
from graphwright.web.context import WebContext
from graphwright.web.knowledge_pages import asset_path, knowledge_frame

PAGE_SIZE = 50
STATUSES = {
    "pending": "Pending",
    "published": "Published",
    "rejected": "Rejected",
    "failed": "Failed",
    "removed": "Removed (sample data)",
    "all": "All",
}


def register(context: WebContext) -> None:
    @ui.page("/kb/requests", title="Publication requests · graphwright")
    def requests_page() -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        with knowledge_frame(context, principal, "Publication requests", "/kb/requests"):
            RequestList(context, principal)
        return None


class RequestList:
    def __init__(self, context: WebContext, principal: Principal) -> None:
        self.context = context
        self.principal = principal
        try:
            decider(principal)
            self.may_decide = True
        except GraphwrightError as refused:
            self.may_decide = False
            ui.label(str(refused)).classes("bg-amber-100 text-amber-950 p-2 rounded")
        self.status = (
            ui.select(STATUSES, value="pending", label="Show", on_change=self.refresh)
            .classes("w-48")
            .mark("request-status")
            .props('data-testid="request-status"')
        )
        self.rows = (
            ui.column().classes("w-full gap-2").mark("requests").props('data-testid="requests"')
        )
        ui.timer(0, self.refresh, once=True)

    @guarded
    async def refresh(self, *_: Any) -> None:
        status = None if self.status.value == "all" else self.status.value
        found, total = await io(
            self.context.knowledge.requests_for, self.principal, status=status, limit=PAGE_SIZE
        )
        self.rows.clear()
        with self.rows:
            shown = f"{total} request{'s' if total != 1 else ''}"
            if total > len(found):
                shown += f", the newest {len(found)} shown"
            ui.label(shown).classes("text-sm").mark("request-count").props(
                'data-testid="request-count"'
            )
            for request in found:
                self._card(request)

    def _card(self, request: PublicationRequestView) -> None:
        with (
            ui.card()
            .classes("w-full")
            .props("flat bordered")
            .mark(f"request-{request.id}")
            .props(f'data-testid="request-{request.id}"')
        ):
            with ui.row().classes("w-full items-center gap-3"):
                ui.label(request.title).classes("text-base font-medium grow")
                ui.badge(request.status, color=_COLOURS.get(request.status, "grey-8"))
            asked = f"Asked by {request.requested_by} · {request.created_at:%Y-%m-%d %H:%M}"
            if request.source:
                asked += f" · from {request.source}"
            if request.conversation_id:
                asked += f" · conversation {request.conversation_id}"
            ui.label(asked).classes("text-sm text-gray-700")
            run_id = (request.details or {}).get("runId")
            if run_id:
                ui.link("Its knowledge-miner run", f"/miner/runs/{run_id}").classes("text-sm").mark(
                    "request-run"
                ).props('data-testid="request-run"')
            if request.revision_of:
                with ui.row().classes("text-sm gap-1"):
                    ui.label("Revises")
                    ui.link(request.revision_of, asset_path(request.revision_of))
            if request.decided_by:
                decided = f"Decided by {request.decided_by}"
                ui.label(decided + (f": {request.reason}" if request.reason else "")).classes(
                    "text-sm"
                )
            if request.ual:
                ui.link("Open the published asset", asset_path(request.ual)).classes("text-sm")
            # Open by default, the decision buttons right under it: what is approved is in view.
            with named(
                ui.expansion("JSON-LD to publish", value=True).classes("w-full").props("dense"),
                "request-jsonld",
            ):
                text = orjson.dumps(request.content, option=orjson.OPT_INDENT_2).decode()
                code(text, language="json").classes("w-full text-sm max-h-96 overflow-auto")
            if request.status in ("pending", "failed") and self.may_decide:
                with ui.row().classes("gap-2"):
                    ui.button(
                        "Approve and publish",
                        icon="check",
                        color="positive",
                        on_click=lambda r=request: self.approve(r),
                    ).mark("approve").props('data-testid="approve"')
                    ui.button(
                        "Reject", icon="close", color="negative",
                        on_click=lambda r=request: self.reject(r),
                    ).props("outline").mark("reject").props('data-testid="reject"')  # fmt: skip

    @guarded
    async def approve(self, request: PublicationRequestView) -> None:
        approver = decider(self.principal)
        published = await call(self.context.knowledge.approve(request.id, approver=approver))
        ui.notify(f"Published {published.title} as {published.ual}", type="positive")
        await self.refresh()

    @guarded
    async def reject(self, request: PublicationRequestView) -> None:
        approver = decider(self.principal)
        with (
            ui.dialog() as dialog,
            ui.card().classes("w-[32rem] max-w-full").mark("reject-dialog")
            .props('data-testid="reject-dialog"'),
        ):  # fmt: skip
            ui.label(f"Reject “{request.title}”").classes("text-lg font-bold")
            reason = (
                ui.textarea("Why? (the requester sees this)")
                .classes("w-full")
                .mark("reject-reason")
                .props('data-testid="reject-reason"')
            )
            problem = named(ui.label().classes("text-sm text-red-800"), "reject-problem")
            problem.props('role="alert"').set_visibility(False)

            async def confirm() -> None:
                # A refusal (no reason given) is said in the dialog, which stays open for it.
                try:
                    await asyncio.to_thread(
                        self.context.knowledge.reject, request.id, by=approver, reason=reason.value
                    )
                except GraphwrightError as refused:
                    problem.set_text(str(refused))
                    problem.set_visibility(True)
                    return
                dialog.submit(True)

            with ui.row():
                named(ui.button("Reject", color="negative", on_click=confirm), "reject-confirm")
                ui.button("Cancel", on_click=lambda: dialog.submit(None)).props("flat")
        if await dialog is None:
            return
        ui.notify(f"Rejected {request.title}")
        await self.refresh()


_COLOURS = {
    "pending": "deep-orange-10",  # orange-9 under white text is 3.1:1, below WCAG AA
    "publishing": "blue-9",
    "published": "green-9",
    "rejected": "red-9",
    "failed": "red-9",
    "removing": "grey-8",
    "removed": "grey-8",
}
