"""The approval panel under the miner's Agent Workspace (seed 001): each pending publish as
readable JSON-LD with its confidence breakdown, checked now, and Approve, Edit and Reject."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from nicegui import ui

from graphwright.core.words import counted
from graphwright.errors import Forbidden
from graphwright.miner.review import ActionReview
from graphwright.miner.schemas import Decision, EditedAction
from graphwright.miner.service import decider
from graphwright.web.common import guarded, named, notify_error

if TYPE_CHECKING:
    from graphwright.web.miner_workspace import Workspace


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


class ApprovalPanel:
    """Each pending publish as readable JSON-LD with its confidence breakdown, and Approve, Edit
    and Reject. A run resumes once every pending action has a decision."""

    def __init__(
        self, workspace: Workspace, run_id: str, reviews: list[ActionReview], into: ui.column
    ) -> None:
        self.workspace = workspace
        self.run_id = run_id
        self.reviews = reviews
        self.decisions: dict[str, Decision] = {}
        try:
            decider(workspace.principal)
            refusal = None
        except Forbidden as exc:
            refusal = str(exc)
        with (
            into,
            ui.column()
            .classes("w-full gap-2 border-t pt-2")
            .mark("approval-panel")
            .props('data-testid="approval-panel"'),
        ):
            ui.label(f"Approval required: {counted(len(reviews), 'action')}").classes("font-bold")
            if refusal:
                ui.label(refusal).classes("text-sm text-amber-900")
            for review in reviews:
                self._action(review, may_decide=refusal is None)
            self.state = (
                ui.label()
                .classes("text-sm")
                .mark("approval-state")
                .props('data-testid="approval-state"')
            )

    def _action(self, review: ActionReview, may_decide: bool) -> None:
        action = review.action
        with (
            ui.card()
            .classes("w-full")
            .props("flat bordered")
            .mark("pending-action")
            .props('data-testid="pending-action"')
        ):
            ui.label(f"{action.action_name}: {action.args.get('title') or ''}").classes(
                "text-sm font-semibold"
            )
            code = ui.code(_json(review.jsonld if review.jsonld is not None else action.args))
            code.classes("w-full text-xs").mark("pending-jsonld").props(
                'data-testid="pending-jsonld"'
            )
            code.copy_button.props('aria-label="Copy the JSON-LD"')
            if review.problem:
                ui.label(review.problem).classes("text-sm text-red-800")
            if review.report is not None:
                self._breakdown(review)
            if may_decide:
                with ui.row().classes("gap-2"):
                    approve = ui.button(
                        "Approve", on_click=lambda: self._decide(action.id, "approve")
                    )
                    named(approve.props("color=positive"), "approve")
                    named(
                        ui.button("Edit", on_click=lambda: self._edit(review)).props("outline"),
                        "edit",
                    )
                    reject = ui.button("Reject", on_click=lambda: self._reject(action.id))
                    named(reject.props("color=negative outline"), "reject")

    @staticmethod
    def _breakdown(review: ActionReview) -> None:
        report = review.report
        assert report is not None
        parts = report.breakdown
        verdict = "valid" if report.valid else "not valid"
        with (
            ui.column().classes("w-full gap-0").mark("confidence").props('data-testid="confidence"')
        ):
            ui.label(f"Confidence {report.confidence:.2f} ({verdict})").classes(
                "text-sm font-semibold"
            )
            ui.label(
                f"checks {parts.checks:.2f} · sources {parts.sources:.2f} · links "
                f"{parts.links:.2f}" + (f" · 0 because {parts.gate}" if parts.gate else "")
            ).classes("text-xs text-gray-700")
            for check in report.checks:
                mark = "✓" if check.passed else "✗"
                ui.label(f"{mark} {check.name}: {check.detail}").classes("text-xs")
            for link in parts.link_scores:
                ui.label(
                    f"link {link.ual}: trust {link.trust:.2f}"
                    + ("" if link.exists else f" ({link.detail})")
                ).classes("text-xs text-gray-700")

    @guarded
    async def _decide(self, action_id: str, kind: str, **extra: Any) -> None:
        self.decisions[action_id] = Decision(type=kind, action_id=action_id, **extra)
        waiting = len(self.reviews) - len(self.decisions)
        if waiting:
            self.state.text = f"{kind} noted; {counted(waiting, 'more action')} to decide"
            return
        ordered = [self.decisions[review.action.id] for review in self.reviews]
        self.state.text = "sending the decisions…"
        await self.workspace.decide(self.run_id, ordered)

    def _edit(self, review: ActionReview) -> None:
        with ui.dialog() as dialog, ui.card().classes("w-[48rem] max-w-full"):
            ui.label("Edit the JSON-LD to publish").classes("font-bold")
            text = named(
                ui.textarea(value=_json(review.jsonld))
                .classes("w-full font-mono")
                .props("rows=16"),
                "edit-jsonld",
            )

            @guarded
            async def publish_edited() -> None:
                try:
                    edited = orjson.loads(text.value or "")
                except orjson.JSONDecodeError as exc:
                    notify_error(f"The edited JSON-LD is not JSON: {exc}")
                    return
                dialog.close()
                args = {**review.action.args, "jsonld": edited}
                name = review.action.action_name
                await self._decide(
                    review.action.id, "edit", edited_action=EditedAction(name=name, args=args)
                )

            with ui.row():
                named(ui.button("Publish edited", on_click=publish_edited), "publish-edited")
                ui.button("Cancel", on_click=dialog.close).props("flat")
        dialog.open()

    def _reject(self, action_id: str) -> None:
        with ui.dialog() as dialog, ui.card().classes("w-[32rem] max-w-full"):
            ui.label("Why reject it?").classes("font-bold")
            reason = named(ui.input("Reason").classes("w-full"), "reject-reason")

            @guarded
            async def confirm() -> None:
                if not (reason.value or "").strip():
                    notify_error("A rejection needs a reason")
                    return
                dialog.close()
                await self._decide(action_id, "reject", message=reason.value.strip())

            with ui.row():
                named(
                    ui.button("Reject", on_click=confirm).props("color=negative"), "confirm-reject"
                )
                ui.button("Cancel", on_click=dialog.close).props("flat")
        dialog.open()
