"""Actions a run stops at for a person, and the decisions taken on them: read from the graph's
interrupt, checked against what waits, and handed back to the graph in LangChain's shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from graphwright.errors import Conflict, InvalidInput
from graphwright.miner.schemas import PUBLISH_TOOL, Decision, PendingAction


def decision_records(
    run_id: str,
    pending: Sequence[dict[str, Any]],
    decisions: Sequence[Decision],
    *,
    approver: str,
    at: str,
) -> list[dict[str, Any]]:
    """One record per pending action, in order; refused unless each decision fits its action."""
    if len(decisions) != len(pending):
        raise InvalidInput(
            f"Run {run_id} waits for {len(pending)} decision(s), one per pending action in "
            f"order; got {len(decisions)}"
        )
    records = []
    for action, decision in zip(pending, decisions, strict=True):
        if decision.action_id is not None and decision.action_id != action["id"]:
            raise Conflict(
                f"Action {decision.action_id} is not waiting in run {run_id} (the pending "
                f"action is {action['id']}); it may be decided already"
            )
        if decision.type not in action["allowedDecisions"]:
            raise InvalidInput(f"'{decision.type}' is not allowed for {action['id']}")
        record = {
            "actionId": action["id"],
            "name": action["actionName"],
            "type": decision.type,
            "by": approver,
            "at": at,
        }
        if decision.message:
            record["message"] = decision.message
        if decision.edited_action is not None:
            record["args"] = decision.edited_action.args
        records.append(record)
    return records


def langgraph_decision(decision: Decision) -> dict[str, Any]:
    if decision.type == "edit":
        assert decision.edited_action is not None
        edited = {"name": decision.edited_action.name, "args": decision.edited_action.args}
        return {"type": "edit", "edited_action": edited}
    if decision.type == "reject":
        return {"type": "reject", "message": decision.message}
    return {"type": "approve"}


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
