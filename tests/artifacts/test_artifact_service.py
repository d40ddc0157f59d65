"""ArtifactService: the LLM's artifact tools, replay from a version, and turns across a
conversation."""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from typing import Any

import pytest
from pydantic import ValidationError

from graphwright.artifacts.collectors import collect
from graphwright.artifacts.service import (
    ArtifactService,
    ArtifactUpdateInput,
    DeleteArtifactInput,
    GetArtifactInput,
    ListArtifactsInput,
)
from graphwright.artifacts.store import SqlArtifactStore
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, ChatArtifact
from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput, NotFound
from tests.artifacts.support import fixture


@pytest.fixture
def service(database: Database) -> ArtifactService:
    return ArtifactService(SqlArtifactStore(database))


def update(**arguments: Any) -> ArtifactUpdateInput:
    """Arguments as an MCP client would send them: A2A JSON field names."""
    return ArtifactUpdateInput.model_validate(arguments)


def test_tool_inputs_use_a2a_names_and_double_as_json_schemas() -> None:
    schema = ArtifactUpdateInput.model_json_schema(by_alias=True)
    assert set(schema["properties"]) == {"artifact", "append", "lastChunk"}
    assert "artifactId" in schema["$defs"]["Artifact"]["properties"]
    assert "mediaType" in schema["$defs"]["Part"]["properties"]
    assert set(GetArtifactInput.model_json_schema(by_alias=True)["properties"]) == {
        "artifactId",
        "version",
    }


@pytest.mark.parametrize(
    ("artifact", "message"),
    [
        ({"artifactId": "a", "parts": []}, "at least 1"),
        ({"artifactId": "a", "parts": [{"text": "x", "data": {"y": 1}}]}, "exactly one of"),
        ({"artifactId": "a", "parts": [{"raw": "%%%"}]}, "base64"),
    ],
)
def test_malformed_tool_input_is_refused_with_the_reason(
    artifact: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        update(artifact=artifact)


def test_the_four_tools(service: ArtifactService) -> None:
    first = service.artifact_update(
        update(artifact={"artifactId": "notes", "name": "Notes", "parts": [{"text": "Hello "}]}),
        context_id="conv-1",
        task_id="msg-1",
    )
    assert (first.operation, first.version, first.sequence) == ("create", 1, 1)
    service.artifact_update(
        update(
            artifact={"artifactId": "notes", "parts": [{"text": "World"}]},
            append=True,
            lastChunk=True,
        ),
        context_id="conv-1",
    )
    with pytest.raises(Conflict, match="closed"):
        service.artifact_update(
            update(artifact={"artifactId": "notes", "parts": [{"text": "!"}]}, append=True),
            context_id="conv-1",
        )
    stored = service.get_artifact(GetArtifactInput(artifact_id="notes"), context_id="conv-1")
    assert stored.artifact.parts[0].text == "Hello World"
    assert stored.closed
    old = service.get_artifact(
        GetArtifactInput.model_validate({"artifactId": "notes", "version": 1}), context_id="conv-1"
    )
    assert old.artifact.parts[0].text == "Hello "
    with pytest.raises(NotFound):
        service.get_artifact(GetArtifactInput(artifact_id="notes"), context_id="conv-2")
    listed = service.list_artifacts(ListArtifactsInput(), context_id="conv-1")
    assert [(s.artifact_id, s.task_id, s.version) for s in listed] == [("notes", "msg-1", 2)]
    assert service.list_artifacts(ListArtifactsInput(task_id="other"), context_id="conv-1") == []
    deleted = service.delete_artifact(DeleteArtifactInput(artifact_id="notes"), context_id="conv-1")
    assert deleted.to_json_dict() == {"artifactId": "notes", "deleted": True}
    assert service.list_artifacts(ListArtifactsInput(), context_id="conv-1") == []


async def test_replay_from_a_version(service: ArtifactService) -> None:
    for n in range(3):
        service.artifact_update(
            update(artifact={"artifactId": "a", "parts": [{"text": str(n)}]}, append=n > 0),
            context_id="conv-1",
        )
    service.artifact_update(
        update(artifact={"artifactId": "b", "parts": [{"data": 1}]}), context_id="conv-1"
    )

    async def first_two() -> list[int]:
        seen: list[int] = []
        stream = service.subscribe("conv-1", artifact_id="a", from_version=2)
        async with aclosing(stream) as events:
            async for event in events:
                seen.append(event.sequence)
                if len(seen) == 3:
                    return seen
        return seen

    assert await asyncio.wait_for(first_two(), 10) == [2, 3, 4]
    with pytest.raises(NotFound, match="no version 7"):
        service.subscribe("conv-1", artifact_id="a", from_version=7)


def run_turn(service: ArtifactService, results: list[dict[str, Any]], turn_id: str) -> list[Any]:
    turn = service.start_turn("conv-1", carry_over=True)
    for index, result in enumerate(results):
        turn.add_result(collect(result, tool="t", call_id=f"{turn_id}-{index}"))
    artifacts = turn.finalize()
    service.save_turn("conv-1", artifacts, task_id=turn_id)
    return artifacts


def test_carried_artifacts_become_versions_in_the_store(service: ArtifactService) -> None:
    bibliography_v1, graph_v1 = run_turn(
        service,
        [
            fixture("seed003_pubmed_bibliography.json"),
            fixture("seed003_medik_knowledge_graph.json"),
        ],
        "turn-1",
    )
    more = {
        "content": [],
        "artifacts": [
            {
                "type": KNOWLEDGE_GRAPH,
                "title": "Knowledge Graph",
                "content": {"nodes": [{"id": "HGNC:7989", "name": "NR1H4"}], "links": []},
            }
        ],
    }
    [graph_v2] = run_turn(service, [more], "turn-2")
    assert graph_v2.artifact_id == graph_v1.artifact_id
    assert graph_v2.metadata["previousVersionId"] == graph_v1.id
    assert len(json.loads(graph_v2.content)["nodes"]) == 4

    versions = service.versions(graph_v1.artifact_id, context_id="conv-1")
    assert [v.operation for v in versions] == ["create", "replace"]
    listed = service.list_artifacts(ListArtifactsInput(), context_id="conv-1")
    assert sorted(s.media_type for s in listed) == [BIBLIOGRAPHY, KNOWLEDGE_GRAPH]

    [graph_v3] = run_turn(service, [more], "turn-3")
    assert graph_v3.metadata["previousVersionId"] == graph_v2.id
    assert service.start_turn("conv-1", carry_over=False).finalize() == []
    assert bibliography_v1.type == BIBLIOGRAPHY


def chat(artifact_id: str, content: str, *, type: str = "text/markdown") -> ChatArtifact:
    return ChatArtifact(
        id=artifact_id, artifact_id=artifact_id, type=type, title="T", content=content
    )


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (chat("elsewhere", "# moved"), NotFound, "No artifact 'elsewhere' in this conversation"),
        (chat("pdf", "%%% not base64", type="application/pdf"), InvalidInput, "base64"),
    ],
)
def test_a_turn_is_saved_whole_or_not_at_all(
    service: ArtifactService, bad: ChatArtifact, error: type[Exception], message: str
) -> None:
    service.artifact_update(
        update(artifact={"artifactId": "elsewhere", "parts": [{"text": "x"}]}), context_id="conv-2"
    )
    service.save_turn("conv-1", [chat("kept", "v1")], task_id="turn-1")
    before = service.get_artifact(GetArtifactInput(artifact_id="kept"), context_id="conv-1")
    turn = [chat("kept", "v2"), chat("notes", "# new"), bad]
    with pytest.raises(error, match=message):
        service.save_turn("conv-1", turn, task_id="turn-2")
    listed = service.list_artifacts(ListArtifactsInput(), context_id="conv-1")
    assert [(s.artifact_id, s.version) for s in listed] == [("kept", 1)]
    after = service.get_artifact(GetArtifactInput(artifact_id="kept"), context_id="conv-1")
    assert after == before
    assert [e.sequence for e in service.store.events("conv-1")] == [1]

    writes = service.save_turn("conv-1", turn[:2], task_id="turn-2")
    assert [(w.artifact_id, w.version, w.sequence) for w in writes] == [
        ("kept", 2, 2),
        ("notes", 1, 3),
    ]


async def test_deleting_an_artifact_is_an_event(service: ArtifactService) -> None:
    service.artifact_update(
        update(artifact={"artifactId": "a", "name": "A", "parts": [{"text": "x"}]}),
        context_id="conv-1",
    )
    service.delete_artifact(DeleteArtifactInput(artifact_id="a"), context_id="conv-1")
    stream = service.subscribe("conv-1")
    async with aclosing(stream) as events:
        created = await asyncio.wait_for(anext(events), 10)
        deleted = await asyncio.wait_for(anext(events), 10)
    assert (created.metadata["operation"], deleted.metadata["operation"]) == ("create", "delete")
    assert (deleted.artifact.artifact_id, deleted.last_chunk, deleted.append) == ("a", True, False)
