"""What changed between two versions of an artifact."""

from __future__ import annotations

import orjson

from graphwright.artifacts.diff import compare
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN, ChatArtifact


def chat(kind: str, content: object) -> ChatArtifact:
    text = content if isinstance(content, str) else orjson.dumps(content).decode()
    return ChatArtifact(id="a", artifact_id="a", type=kind, title="t", content=text)


def test_graph_versions_differ_by_nodes_and_links() -> None:
    before = {"nodes": [{"id": "A", "name": "a"}, {"id": "B"}], "links": [
        {"source": "A", "target": "B", "label": "binds"}]}  # fmt: skip
    after = {"nodes": [{"id": "A"}, {"id": "C"}], "links": [
        {"source": "A", "target": "C", "label": "binds"}]}  # fmt: skip
    found = compare(chat(KNOWLEDGE_GRAPH, before), chat(KNOWLEDGE_GRAPH, after))
    assert found["kind"] == "graph"
    assert [n["id"] for n in found["nodesAdded"]] == ["C"]
    assert [n["id"] for n in found["nodesRemoved"]] == ["B"]
    assert found["linksAdded"] == [["A", "binds", "C"]]
    assert found["linksRemoved"] == [["A", "binds", "B"]]


def test_bibliography_versions_differ_by_citation() -> None:
    before = [{"pmid": "1", "title": "one"}, {"doi": "10.1/x", "title": "two"}]
    after = [{"pmid": "PMID:1", "title": "one"}, {"title": "three", "year": "2020"}]
    found = compare(chat(BIBLIOGRAPHY, before), chat(BIBLIOGRAPHY, after))
    assert [c["title"] for c in found["added"]] == ["three"]
    assert [c["title"] for c in found["removed"]] == ["two"]


def test_other_types_differ_by_lines() -> None:
    found = compare(chat(MARKDOWN, "a\nb\n"), chat(MARKDOWN, "a\nc\n"))
    assert found["kind"] == "text"
    assert "-b" in found["lines"] and "+c" in found["lines"]
