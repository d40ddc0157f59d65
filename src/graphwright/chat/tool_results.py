"""A turn's tool results as they arrive: what the model reads of each, and the artifacts they
bring, merged into the turn's.

A result may be megabytes of graph, so each is read and merged in a worker thread, off the event
loop every user's requests wait on. Parallel calls' results merge one at a time, and none after
the turn's artifacts are settled (a cancelled turn settles while a result may still be read).
"""

from __future__ import annotations

import threading
from typing import Any

from graphwright.artifacts.collectors import ErrorNote, collect
from graphwright.artifacts.turn import TurnArtifacts
from graphwright.chat.mcp_manager import FullCallToolResult, ToolSpec
from graphwright.core.artifacts import ChatArtifact
from graphwright.mcpkit import readable_tool_error


class ToolResults:
    """The results of one turn's calls; `artifacts` is None in Graph Mode, where tools write to
    the conversation's graph and no artifact is made."""

    def __init__(self, artifacts: TurnArtifacts | None) -> None:
        self._artifacts = artifacts
        self._merging = threading.Lock()
        self._settled: list[ChatArtifact] | Exception | None = None

    def read(
        self, result: FullCallToolResult, *, tool: str, call_id: str, spec: ToolSpec
    ) -> tuple[str, bool, list[ErrorNote]]:
        """The result's text for the model, whether the call failed, and the notes on the
        artifacts it brought. Blocks: run it in a worker thread."""
        collected = collect(result, tool=tool, call_id=call_id, output_schema=spec.output_schema)
        text, is_error = model_text(collected.model_content), collected.is_error
        if is_error:  # another SDK's raw validation report, worded for people
            text = readable_tool_error(text)
        with self._merging:
            if self._artifacts is None or self._settled is not None:
                return text, is_error, []
            known = len(self._artifacts.errors)
            self._artifacts.add_result(collected)
            return text, is_error, self._artifacts.errors[known:]

    def settle(self) -> list[ChatArtifact]:
        """The turn's artifacts, merged once; later results are not added. Blocks while a
        result merges. A failure to merge is raised again on every later call: merging again
        would work on artifacts the failed merge had half changed."""
        with self._merging:
            if self._settled is None:
                try:
                    self._settled = [] if self._artifacts is None else self._artifacts.finalize()
                except Exception as exc:
                    self._settled = exc
            if isinstance(self._settled, Exception):
                raise self._settled
            return self._settled


def model_text(items: list[dict[str, Any]]) -> str:
    """A result's content items as the text the model reads."""
    texts = []
    for item in items:
        kind = item.get("type")
        if kind == "text":
            texts.append(str(item.get("text", "")))
        elif kind == "resource_link":
            texts.append(f"[link: {item.get('name') or ''} {item.get('uri', '')}]".strip())
        elif kind == "resource" and isinstance(item.get("resource"), dict):
            texts.append(str(item["resource"].get("text") or "[binary resource]"))
        else:
            texts.append(f"[{kind} content]")
    return "\n".join(texts) or "(the tool returned no content)"
