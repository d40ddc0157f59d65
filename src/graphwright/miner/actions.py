"""Actions a run stops at for a person, and the decisions taken on them.

Each publish that waits is a publication request in the knowledge base's queue. Whoever
decides it, through whichever door, decides the request; the run's decisions are then read
from the requests (who, when, approve or edit or reject, the UAL) and handed back to the graph
in LangChain's shape, with the publishes the miner dropped rejected with their reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from graphwright.core.words import counted
from graphwright.errors import Conflict, InvalidInput
from graphwright.knowledge.schemas import PublicationRequestView
from graphwright.miner.schemas import PUBLISH_TOOL, Decision, PendingAction

DECIDED = ("published", "rejected")


def check_decisions(
    run_id: str, pending: Sequence[PendingAction], decisions: Sequence[Decision]
) -> None:
    """Refused unless there is one decision per pending action, in order, each allowed."""
    if len(decisions) != len(pending):
        raise InvalidInput(
            f"Run {run_id} waits for {counted(len(pending), 'decision')}, one per pending action "
            f"in order; got {len(decisions)}"
        )
    for action, decision in zip(pending, decisions, strict=True):
        if decision.action_id is not None and decision.action_id != action.id:
            raise Conflict(
                f"Action {decision.action_id} is not waiting in run {run_id} (the pending "
                f"action is {action.id}); it may be decided already"
            )
        if decision.type not in action.allowed_decisions:
            raise InvalidInput(f"'{decision.type}' is not allowed for {action.id}")


def already(decision: Decision, request: PublicationRequestView) -> bool:
    """Whether a decided request already stands for `decision` (decided elsewhere the same
    way); a different decision on it is refused."""
    if request.status not in DECIDED:
        return False
    if (decision.type == "reject") == (request.status == "rejected"):
        return True
    raise Conflict(
        f"Publication request {request.id} is already {request.status} by {request.decided_by}"
    )


def request_records(
    pending: Sequence[PendingAction], requests: Sequence[PublicationRequestView]
) -> list[dict[str, Any]]:
    """The run's decision records, one per pending action, from its decided request."""
    records = []
    for action, request in zip(pending, requests, strict=True):
        edited = bool((request.details or {}).get("edited"))
        kind = "reject" if request.status == "rejected" else "edit" if edited else "approve"
        record: dict[str, Any] = {
            "actionId": action.id,
            "name": action.action_name,
            "type": kind,
            "by": request.decided_by,
            "at": request.decided_at.isoformat() if request.decided_at else None,
            "requestId": request.id,
            "trustSignals": (request.details or {}).get("trustSignals"),
            "keys": (request.details or {}).get("keys"),
        }
        if request.status == "rejected":
            record["message"] = request.reason
        else:
            record["ual"] = request.ual
            if request.revision_of:
                record["revisionOf"] = request.revision_of
        if edited:
            record["args"] = {"jsonld": request.content}
        records.append(record)
    return records


def resume_decisions(
    order: Sequence[PendingAction],
    records: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The graph's decisions for every action it stopped at, in its order: from the records
    (a person's, or a dropped publish's rejection)."""
    decisions = []
    for action in order:
        record = records.get(action.id)
        if record is None:
            raise Conflict(f"No decision recorded for action {action.id}")
        if record["type"] == "reject":
            decisions.append({"type": "reject", "message": _why(record)})
        elif record["type"] == "edit":
            args = {**action.args, **record["args"]}
            decisions.append(
                {"type": "edit", "edited_action": {"name": action.action_name, "args": args}}
            )
        else:
            decisions.append({"type": "approve"})
    return decisions


def _why(record: Mapping[str, Any]) -> str:
    if record.get("dropped"):
        return f"Not offered for publication: {record['message']}"
    return str(record.get("message") or "rejected")


def pending_actions(state: Any) -> list[PendingAction]:
    """The actions the graph stopped at, each with its tool call id."""
    if not state.interrupts:
        return []
    value = state.interrupts[0].value or {}
    requests = value.get("action_requests") or []
    configs = {c["action_name"]: c for c in value.get("review_configs") or []}
    messages = state.values.get("messages") or []
    last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    calls = [c["id"] for c in (last_ai.tool_calls if last_ai else []) if c["name"] in configs]
    ids = calls + [f"action-{index}" for index in range(len(calls), len(requests))]
    return [
        PendingAction(
            id=action_id,
            action_name=request["name"],
            args=request.get("args") or {},
            description=request.get("description"),
            allowed_decisions=list(configs[request["name"]]["allowed_decisions"]),
        )
        for request, action_id in zip(requests, ids, strict=False)
    ]


def publish_outcomes(messages: Sequence[Any]) -> dict[str, str]:
    """What each publish call came to, by tool call id (the UAL, a rejection, or an error)."""
    return {
        message.tool_call_id: str(message.content)
        for message in messages
        if isinstance(message, ToolMessage) and message.name == PUBLISH_TOOL
    }
