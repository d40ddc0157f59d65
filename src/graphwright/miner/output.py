"""Seed 001's output JSON from what the agent answered and what its state holds.

The workspace fields (todos, subagents, files, memory writes) come from what the run did, not
from the model's word. The model's final answer gives the summary, candidates and report; when
it is not JSON, seed 001's fallback applies (the text becomes the summary). A run stopped by its
iteration bound returns the candidates written so far, and its summary says so.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage

from graphwright.core.words import counted
from graphwright.miner.agent import BOUND_MESSAGE_NAME
from graphwright.miner.memory import file_text
from graphwright.miner.progress import RunTracker, files_of
from graphwright.miner.schemas import MinerOutput, PendingAction

CANDIDATE_DIR = "/candidates/"
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
UAL_PREFIX = "did:dkg:"


def message_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        block.get("text", "") if isinstance(block, dict) else str(block) for block in content
    )


def parse_answer(text: str) -> dict[str, Any] | None:
    """The final answer as a JSON object, or None (fences around it are allowed)."""
    match = _FENCE.match(text)
    try:
        value = orjson.loads(match.group(1) if match else text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def linked_uals(value: Any) -> list[str]:
    """Every UAL an asset refers to (its own `@id` aside), in order of appearance."""
    found: list[str] = []

    def walk(node: Any, top: bool) -> None:
        if isinstance(node, dict):
            for key, item in node.items():
                if top and key == "@id":
                    continue
                walk(item, False)
        elif isinstance(node, list):
            for item in node:
                walk(item, False)
        elif isinstance(node, str) and node.startswith(UAL_PREFIX) and node not in found:
            found.append(node)

    walk(value, True)
    return found


def candidate_files(files: dict[str, Any]) -> list[dict[str, Any]]:
    candidates = []
    for path, data in sorted(files.items()):
        if not path.startswith(CANDIDATE_DIR):
            continue
        parsed = parse_answer(file_text(data))
        if parsed is not None:
            candidates.append(parsed)
    return candidates


def with_signals(candidate: dict[str, Any]) -> dict[str, Any]:
    """A candidate with `linkedAssets` and `trustSignals` always present."""
    linked = candidate.get("linkedAssets")
    if not isinstance(linked, list):
        linked = linked_uals(candidate)
    signals = candidate.get("trustSignals")
    return {
        **candidate,
        "linkedAssets": linked,
        "trustSignals": signals if isinstance(signals, dict) else {},
    }


def build_output(
    *,
    run_id: str,
    domain_tags: list[str],
    messages: list[BaseMessage],
    files: dict[str, Any],
    tracker: RunTracker,
    pending: list[PendingAction],
) -> MinerOutput:
    last = messages[-1] if messages else None
    bound = isinstance(last, AIMessage) and last.name == BOUND_MESSAGE_NAME
    answer = None
    text = ""
    if isinstance(last, AIMessage) and not bound and not pending:
        text = message_text(last)
        answer = parse_answer(text)
    if answer is None:
        answer = {"summary": text, "candidateAssets": []}
    candidates = answer.get("candidateAssets")
    if not isinstance(candidates, list) or not candidates:
        candidates = candidate_files(files)
    summary = str(answer.get("summary") or "")
    if bound:
        summary = (
            f"{message_text(last)} These are partial results: "
            f"{counted(len(candidates), 'candidate')} so far. {summary}"
        ).strip()
    elif pending:
        summary = summary or (
            f"Waiting for a person to approve, edit or reject {counted(len(pending), 'action')}."
        )
    return MinerOutput(
        summary=summary,
        candidate_assets=[with_signals(c) for c in candidates if isinstance(c, dict)],
        domain_tags=domain_tags,
        memory_writes=tracker.memory_write_list(),
        todos=tracker.todo_list(),
        spawned_subagents=tracker.subagent_list(),
        filesystem_files=files_of(files),
        synthesized_report=str(answer.get("synthesizedReport") or ""),
        run_id=run_id,
        pending_approval=pending,
        trace=tracker.trace(),
    )
