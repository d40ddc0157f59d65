"""A chat model that follows the miner's prompts, as a careful model would, and decides each
step by rules over what it has been offered so far (its messages), never by a fixed count of
turns. Each agent is told apart by its system prompt.

- orchestrator: plans with `write_todos`, calls discovery, enrichment and validation through
  `task` (updating its todos between them), reads each candidate validation accepted and calls
  `dkg_publish_asset` with it as written, then answers with the JSON the prompt asks for;
- discovery: reads its notes, plans, queries the knowledge base, writes a research file and
  appends a pattern to its notes;
- enrichment: reads its schema notes, looks for related assets, writes the candidate (JSON-LD
  with provenance, domain tags and linked assets, as its prompt says) under /candidates/;
- validation: reads its rules and the candidate, calls `validate_candidate`, and accepts the
  candidate when the confidence is at least ACCEPT_AT.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

import orjson
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from tests.miner.scripted import ROLES

ACCEPT_AT = 0.5
_ids = itertools.count()
_GUTTER = re.compile(r"^\s*\d+(?:\.\d+)?  ", re.MULTILINE)


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"f_{name}_{next(_ids)}", "type": "tool_call"}


def _calls(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    return [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]


def _results(messages: Sequence[BaseMessage], name: str) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage) and m.name == name]


def _file_text(read: str) -> str:
    """A `read_file` result without its line-number gutter."""
    return _GUTTER.sub("", read)


def _json_in(text: str) -> Any:
    start = text.find("{")
    return orjson.loads(text[start : text.rfind("}") + 1]) if start >= 0 else None


class PromptFollower(GenericFakeChatModel):
    messages: Any = Field(default_factory=lambda: iter(()))
    candidate: dict[str, Any] = Field(default_factory=dict)
    candidate_path: str = "/candidates/candidate.jsonld"
    calls: list[str] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> PromptFollower:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        system = next((m for m in messages if isinstance(m, SystemMessage)), None)
        prompt = system.text if system else ""
        role = next((r for r, mark in ROLES.items() if mark in prompt), "unknown")
        self.calls.append(role)
        reply = getattr(self, f"_{role}", self._unknown)(prompt, messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
        return self._generate(*args, **kwargs)

    @staticmethod
    def _unknown(prompt: str, messages: list[BaseMessage]) -> AIMessage:
        return AIMessage("nothing to do")

    @staticmethod
    def _say(*calls: dict[str, Any], text: str = "") -> AIMessage:
        return AIMessage(text, tool_calls=list(calls))

    @staticmethod
    def _notes(prompt: str, label: str) -> str:
        """The first memory note path the prompt names after `label`."""
        found = re.search(re.escape(label) + r"\s*(/memories/\S+?\.md)", prompt)
        assert found, f"the prompt names no note after {label!r}"
        return found.group(1)

    # -- the orchestrator ----------------------------------------------------------------------

    def _orchestrator(self, prompt: str, messages: list[BaseMessage]) -> AIMessage:
        calls = _calls(messages)
        tasks = [c["args"].get("subagent_type") for c in calls if c["name"] == "task"]
        todos = [c for c in calls if c["name"] == "write_todos"]
        steps = ["Discover facts", "Build candidates", "Validate candidates", "Publish"]
        if not todos:
            return self._say(_call("write_todos", todos=self._todos(steps, 0)))
        question = next(m.text for m in messages if isinstance(m, HumanMessage))
        for done, subagent in enumerate(("discovery", "enrichment", "validation")):
            if subagent in tasks:
                continue
            if len(todos) <= done:  # mark the last step done first, as the prompt asks
                return self._say(_call("write_todos", todos=self._todos(steps, done)))
            return self._say(_call("task", description=question, subagent_type=subagent))
        verdict = _results(messages, "task")[-1]
        if "accepted" not in verdict:
            return self._final(None, "Validation accepted no candidate.")
        reads = _results(messages, "read_file")
        if not reads:
            return self._say(_call("read_file", file_path=self.candidate_path))
        candidate = _json_in(_file_text(reads[-1]))
        published = _results(messages, "dkg_publish_asset")
        if not published:
            title = str(candidate.get("name", "candidate"))
            return self._say(_call("dkg_publish_asset", jsonld=candidate, title=title))
        return self._final(candidate, published[-1])

    @staticmethod
    def _todos(steps: list[str], done: int) -> list[dict[str, str]]:
        return [
            {
                "content": step,
                "status": "completed" if n < done else "in_progress" if n == done else "pending",
            }
            for n, step in enumerate(steps)
        ]

    def _final(self, candidate: dict[str, Any] | None, outcome: str) -> AIMessage:
        answer = {
            "summary": outcome,
            "candidateAssets": [candidate] if candidate else [],
            "synthesizedReport": f"{self.candidate.get('name')}: {outcome}",
        }
        return self._say(text=orjson.dumps(answer).decode())

    # -- the subagents -------------------------------------------------------------------------

    def _discovery(self, prompt: str, messages: list[BaseMessage]) -> AIMessage:
        notes = self._notes(prompt, "Start by reading your notes:")
        calls = {c["name"] for c in _calls(messages)}
        name = str(self.candidate.get("name", ""))
        if "read_file" not in calls:
            return self._say(_call("read_file", file_path=notes))
        if "write_todos" not in calls:
            plan = [{"content": "Query the knowledge base", "status": "in_progress"}]
            return self._say(_call("write_todos", todos=plan))
        if "dkg_sparql" not in calls:
            query = (
                "SELECT ?s ?name WHERE { GRAPH ?g { ?s <http://schema.org/name> ?name } "
                f'FILTER(CONTAINS(LCASE(STR(?name)), "{name.split()[0].lower()}")) }} LIMIT 10'
            )
            return self._say(_call("dkg_sparql", query=query))
        if "write_file" not in calls:
            return self._say(
                _call("write_file", file_path="/research/facts.md", content=f"# {name}\n"),
                _call(
                    "edit_file",
                    file_path=notes,
                    old_string="## Patterns\n",
                    new_string="## Patterns\n- Pattern: the knowledge base first\n",
                ),
            )
        return self._say(text=f"Fact: {name} (sources: {self._sources()}).")

    def _sources(self) -> str:
        provenance = self.candidate.get("provenance") or {}
        return ", ".join(provenance.get("sources") or []) or "none"

    def _enrichment(self, prompt: str, messages: list[BaseMessage]) -> AIMessage:
        calls = {c["name"] for c in _calls(messages)}
        if "read_file" not in calls:
            return self._say(
                _call("read_file", file_path=self._notes(prompt, "schema notes first:"))
            )
        if "write_file" not in calls:
            content = orjson.dumps(self.candidate, option=orjson.OPT_INDENT_2).decode()
            return self._say(_call("write_file", file_path=self.candidate_path, content=content))
        return self._say(text=f"Wrote {self.candidate_path}")

    def _validation(self, prompt: str, messages: list[BaseMessage]) -> AIMessage:
        calls = _calls(messages)
        reads = [c for c in calls if c["name"] == "read_file"]
        if not reads:
            return self._say(_call("read_file", file_path=self._notes(prompt, "rules first:")))
        if len(reads) == 1:
            return self._say(_call("read_file", file_path=self.candidate_path))
        reports = _results(messages, "validate_candidate")
        if not reports:
            candidate = _json_in(_file_text(_results(messages, "read_file")[-1]))
            return self._say(_call("validate_candidate", candidate=candidate))
        confidence = float(orjson.loads(reports[-1])["confidence"])
        verdict = "accepted" if confidence >= ACCEPT_AT else "rejected"
        return self._say(text=f"{self.candidate_path}: {verdict}, confidence {confidence:.2f}")
