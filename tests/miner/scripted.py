"""A scripted chat model for the miner's agents: each agent (the orchestrator and the three
subagents, told apart by their system prompts) answers from its own list of messages, in
order, whatever order the graph calls them in. And the standard scripts the tests use."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import orjson
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

ROLES = {
    "orchestrator": "knowledge miner's orchestrator",
    "discovery": "discovery subagent",
    "enrichment": "enrichment subagent",
    "validation": "validation subagent",
}
_ids = itertools.count()


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{name}_{next(_ids)}", "type": "tool_call"}


def say(*calls: dict[str, Any], text: str = "") -> AIMessage:
    return AIMessage(text, tool_calls=list(calls))


class ScriptedModel(GenericFakeChatModel):
    messages: Any = Field(default_factory=lambda: iter(()))
    scripts: dict[str, list[AIMessage]] = Field(default_factory=dict)
    calls: list[str] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        role = self._role(messages)
        self.calls.append(role)
        script = self.scripts.get(role) or []
        reply = script.pop(0) if script else AIMessage(f"{role}: nothing more to do")
        fresh = AIMessage(
            reply.content,
            tool_calls=[{**c, "id": f"{c['id']}_{next(_ids)}"} for c in reply.tool_calls],
        )
        return ChatResult(generations=[ChatGeneration(message=fresh)])

    async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
        return self._generate(*args, **kwargs)

    @staticmethod
    def _role(messages: list[BaseMessage]) -> str:
        system = next((m for m in messages if isinstance(m, SystemMessage)), None)
        text = system.text if system else ""
        return next((role for role, mark in ROLES.items() if mark in text), "unknown")


ASPIRIN = {
    "@context": "https://schema.org/",
    "@id": "urn:graphwright:test:aspirin-cox1",
    "@type": "Drug",
    "name": "aspirin inhibits COX-1",
    "identifier": "test:aspirin-cox1",
    "relatedTo": {"@id": "did:dkg:hardhat1:31337/0x0000000000000000000000000000000000000000/1"},
}


def enriched_aspirin(link: str | None = None, **changes: Any) -> dict[str, Any]:
    """A candidate as the enrichment prompt asks for it: JSON-LD with provenance sources, the
    domain tags and, given `link`, a link by UAL to an existing asset."""
    linked = {"relatedTo": {"@id": link}, "linkedAssets": [link]} if link else {}
    return {
        "@context": "https://schema.org/",
        "@id": "urn:graphwright:test:aspirin",
        "@type": "Drug",
        "name": "aspirin",
        "identifier": "CHEBI:15365",
        "description": "aspirin irreversibly inhibits COX-1",
        **linked,
        "provenance": {
            "sources": ["PMID:5284360", "https://en.wikipedia.org/wiki/Aspirin"],
            "discoveredAt": "2025-01-01T00:00:00Z",
            "confidence": 0.8,
        },
        "domainTags": ["drugs"],
        **changes,
    }


def full_run(
    tag: str | None,
    *,
    note_line: str = "- Pattern: PubMed first for drug targets",
    candidate: dict[str, Any] | None = None,
) -> dict[str, list[AIMessage]]:
    """A whole run: plan, the three subagents (discovery appends to its notes), one publish
    call, then the final JSON."""
    candidate = candidate or ASPIRIN
    notes = f"/memories/knowledge/{tag or 'global'}/discovery-notes.md"
    text = orjson.dumps(candidate).decode()
    return {
        "orchestrator": [
            say(
                call(
                    "write_todos",
                    todos=[
                        {"content": "Discover facts", "status": "in_progress"},
                        {"content": "Enrich and validate", "status": "pending"},
                    ],
                ),
                call("task", description="Find facts on aspirin", subagent_type="discovery"),
            ),
            say(call("task", description="Build candidates", subagent_type="enrichment")),
            say(call("task", description="Validate candidates", subagent_type="validation")),
            say(call("dkg_publish_asset", jsonld=candidate, title="aspirin and COX-1")),
            say(
                text=orjson.dumps(
                    {
                        "summary": "One candidate found and published.",
                        "candidateAssets": [{**candidate, "trustSignals": {"confidence": 0.8}}],
                        "synthesizedReport": "aspirin inhibits COX-1 (validated).",
                    }
                ).decode()
            ),
        ],
        "discovery": [
            say(call("read_file", file_path=notes)),
            say(
                call(
                    "edit_file",
                    file_path=notes,
                    old_string="## Patterns\n",
                    new_string=f"## Patterns\n{note_line}\n",
                ),
                call("write_file", file_path="/research/aspirin.md", content="# aspirin\nCOX-1"),
            ),
            say(text="aspirin inhibits COX-1 (PMID:1)."),
        ],
        "enrichment": [
            say(call("write_file", file_path="/candidates/aspirin.jsonld", content=text)),
            say(text="Wrote /candidates/aspirin.jsonld"),
        ],
        "validation": [
            say(
                call("dkg_sparql", query="SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"),
                call("validate_candidate", candidate=candidate),
            ),
            say(text="aspirin: accepted, confidence 0.8"),
        ],
    }
