"""The artifact model: A2A v1.0 JSON, chat view <-> A2A view, and the part update rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from graphwright.core.artifacts import (
    BIBLIOGRAPHY,
    KNOWLEDGE_GRAPH,
    MARKDOWN,
    Artifact,
    ChatArtifact,
    Chunk,
    Part,
    apply_update,
    assemble,
    from_chat,
    plan_update,
    to_chat,
)
from graphwright.errors import InvalidInput

FIXTURES = Path(__file__).parent.parent / "fixtures" / "artifacts"


def texts(parts: list[Part]) -> list[tuple[str, Any]]:
    return [(p.kind, getattr(p, p.kind)) for p in parts]


# --- A2A JSON -----------------------------------------------------------------------------------


def test_a2a_json_uses_v1_field_names_and_base64_bytes() -> None:
    artifact = Artifact(
        artifact_id="a-1",
        name="Plot",
        parts=[
            Part(raw=b"\x89PNG", media_type="image/png", filename="plot.png"),
            Part(url="https://example.org/x.pdf", media_type="application/pdf"),
        ],
        metadata={"k": 1},
    )
    wire = artifact.to_json_dict()
    assert wire == {
        "artifactId": "a-1",
        "name": "Plot",
        "parts": [
            {"raw": "iVBORw==", "mediaType": "image/png", "filename": "plot.png"},
            {"url": "https://example.org/x.pdf", "mediaType": "application/pdf"},
        ],
        "metadata": {"k": 1},
    }
    assert Artifact.model_validate_json(json.dumps(wire)) == artifact


@pytest.mark.parametrize(
    "fields",
    [{}, {"text": "a", "data": {"b": 1}}, {"url": "https://x", "raw": b"1"}, {"data": None}],
)
def test_a_part_holds_exactly_one_content(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="exactly one of text, raw, url or data"):
        Part(**fields)


def test_an_artifact_needs_at_least_one_part() -> None:
    with pytest.raises(ValidationError, match="at least 1"):
        Artifact(parts=[])


# --- views --------------------------------------------------------------------------------------


def test_seed_chat_artifacts_round_trip_through_the_a2a_view() -> None:
    seed = json.loads((FIXTURES / "seed003_chat_artifacts.json").read_text())
    for item in seed:
        chat = ChatArtifact.model_validate(item)
        artifact = from_chat(chat)
        assert to_chat(artifact, chat.position).to_json_dict() == item
    bibliography, markdown, graph = (from_chat(ChatArtifact.model_validate(i)) for i in seed)
    assert bibliography.parts[0].kind == "data"
    assert bibliography.parts[0].media_type == BIBLIOGRAPHY
    assert bibliography.parts[0].data[0]["pmid"] == "1000001"
    assert markdown.parts[0].text.startswith("# Mechanisms")
    assert markdown.parts[0].media_type == MARKDOWN
    assert graph.parts[0].data["nodes"][0]["id"] == "NCBIGene:7157"
    assert graph.parts[0].media_type == KNOWLEDGE_GRAPH


def test_binary_and_url_parts_in_the_chat_view() -> None:
    png = Artifact(
        artifact_id="p", name="Plot", parts=[Part(raw=b"\x00\x01", media_type="image/png")]
    )
    chat = to_chat(png)
    assert (chat.type, chat.content) == ("image/png", "AAE=")
    assert from_chat(chat) == png
    link = Artifact(
        artifact_id="u",
        name="Paper",
        description="the full text",
        parts=[Part(url="https://example.org/a.pdf", media_type="application/pdf")],
    )
    chat = to_chat(link, 3)
    assert (chat.type, chat.content, chat.position) == (
        "text/uri-list",
        "https://example.org/a.pdf",
        3,
    )
    assert from_chat(chat) == link


def test_a_version_id_different_from_the_artifact_id_survives_both_views() -> None:
    chat = ChatArtifact(
        id="v2",
        artifact_id="kg",
        type=KNOWLEDGE_GRAPH,
        title="Knowledge Graph",
        content='{"nodes":[],"links":[]}',
        metadata={"previousVersionId": "kg"},
    )
    artifact = from_chat(chat)
    assert artifact.artifact_id == "kg"
    assert artifact.metadata == {"previousVersionId": "kg", "versionId": "v2"}
    assert to_chat(artifact) == chat


def test_a_multi_part_artifact_has_no_chat_view() -> None:
    artifact = Artifact(artifact_id="m", parts=[Part(text="a"), Part(data=[1])])
    with pytest.raises(InvalidInput, match="has 2 parts"):
        to_chat(artifact)


def test_binary_chat_content_must_be_base64() -> None:
    chat = ChatArtifact(id="b", artifact_id="b", type="image/png", title="x", content="not base64!")
    with pytest.raises(InvalidInput, match="base64"):
        from_chat(chat)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
chat_types = st.sampled_from(
    [KNOWLEDGE_GRAPH, BIBLIOGRAPHY, MARKDOWN, "text/plain", "application/json", "image/png"]
)


@given(
    media_type=chat_types,
    data=json_values,
    text=st.text(max_size=30),
    raw=st.binary(max_size=30),
    language=st.none() | st.just("markdown"),
    metadata=st.none() | st.dictionaries(st.sampled_from(["source", "k"]), st.text(max_size=5)),
)
def test_chat_view_round_trips_for_every_type_we_produce(
    media_type: str,
    data: Any,
    text: str,
    raw: bytes,
    language: str | None,
    metadata: dict[str, str] | None,
) -> None:
    if media_type in (KNOWLEDGE_GRAPH, BIBLIOGRAPHY, "application/json"):
        content = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    elif media_type == "image/png":
        content = to_chat(Artifact(parts=[Part(raw=raw or b"\x00")])).content
    else:
        content = text
    chat = ChatArtifact(
        id="i",
        artifact_id="i",
        type=media_type,
        title="t",
        content=content,
        position=2,
        language=language,
        metadata=metadata or None,
    )
    assert to_chat(from_chat(chat), 2) == chat


# --- update semantics ---------------------------------------------------------------------------


def test_replace_concatenates_new_text_and_keeps_other_kinds() -> None:
    existing = [Part(text="Hello "), Part(data={"a": 1}), Part(text="World")]
    result = apply_update(existing, [Part(text="Good"), Part(text="bye")], append=False)
    assert texts(result) == [("data", {"a": 1}), ("text", "Goodbye")]


def test_replace_of_data_replaces_every_data_part() -> None:
    existing = [Part(text="t"), Part(data=1), Part(data=2)]
    result = apply_update(existing, [Part(data=3)], append=False)
    assert texts(result) == [("text", "t"), ("data", 3)]


def test_append_concatenates_text_and_adds_other_kinds_as_separate_parts() -> None:
    existing = [Part(text="Hello "), Part(data={"a": 1})]
    result = apply_update(
        existing,
        [Part(text="World"), Part(data={"b": 2}), Part(url="https://x.org/f")],
        append=True,
    )
    assert texts(result) == [
        ("text", "Hello World"),
        ("data", {"a": 1}),
        ("data", {"b": 2}),
        ("url", "https://x.org/f"),
    ]


def test_append_adds_text_when_there_was_none() -> None:
    assert texts(apply_update([Part(data=1)], [Part(text="x")], append=True)) == [
        ("data", 1),
        ("text", "x"),
    ]


def test_an_update_needs_parts() -> None:
    with pytest.raises(InvalidInput, match="at least one part"):
        plan_update([], append=True)


parts_strategy = st.lists(
    st.one_of(
        st.text(max_size=4).map(lambda t: Part(text=t)),
        st.integers().map(lambda n: Part(data=n)),
        st.sampled_from(["https://a", "https://b"]).map(lambda u: Part(url=u)),
    ),
    min_size=1,
    max_size=4,
)


@given(st.lists(st.tuples(parts_strategy, st.booleans()), min_size=1, max_size=6))
def test_folding_chunks_equals_applying_updates_one_by_one(
    updates: list[tuple[list[Part], bool]],
) -> None:
    """The chunk log a store keeps assembles to what the pure rules give."""
    parts: list[Part] = []
    log: list[tuple[Chunk, bool]] = []  # (chunk, dropped)
    for new, append in updates:
        parts = apply_update(parts, new, append=append)
        plan = plan_update(new, append=append)
        log = [(c, dropped or c.part.kind in plan.drop_kinds) for c, dropped in log]
        log += [(c, False) for c in plan.chunks]
        assert assemble(c for c, dropped in log if not dropped) == parts
