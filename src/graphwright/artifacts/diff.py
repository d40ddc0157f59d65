"""What changed between two versions of an artifact, in the terms of its type: nodes and links
of a knowledge graph, citations of a bibliography, lines of anything else."""

from __future__ import annotations

import difflib
from typing import Any

import orjson

from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, ChatArtifact
from graphwright.core.bibliography import citation_pmid, normalize_doi, title_key

MAX_DIFF_LINES = 400


def compare(before: ChatArtifact, after: ChatArtifact) -> dict[str, Any]:
    """`{"kind": "graph" | "bibliography" | "text", ...}` with what was added and removed."""
    if before.type == after.type == KNOWLEDGE_GRAPH:
        found = _json_pair(before, after)
        if found is not None:
            return _graph_diff(*found)
    if before.type == after.type == BIBLIOGRAPHY:
        found = _json_pair(before, after)
        if found is not None and all(isinstance(side, list) for side in found):
            return _bibliography_diff(*found)
    lines = list(
        difflib.unified_diff(
            before.content.splitlines(),
            after.content.splitlines(),
            "before",
            "after",
            lineterm="",
        )
    )
    return {
        "kind": "text",
        "lines": lines[:MAX_DIFF_LINES],
        "truncated": len(lines) > MAX_DIFF_LINES,
    }


def _json_pair(before: ChatArtifact, after: ChatArtifact) -> tuple[Any, Any] | None:
    try:
        return orjson.loads(before.content), orjson.loads(after.content)
    except orjson.JSONDecodeError:
        return None


def _link_key(link: dict[str, Any]) -> tuple[str, str, str]:
    return str(link.get("source")), str(link.get("label") or ""), str(link.get("target"))


def _graph_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    nodes_before = {n["id"]: n for n in before.get("nodes", []) if isinstance(n, dict)}
    nodes_after = {n["id"]: n for n in after.get("nodes", []) if isinstance(n, dict)}
    links_before = {_link_key(link) for link in before.get("links", []) if isinstance(link, dict)}
    links_after = {_link_key(link) for link in after.get("links", []) if isinstance(link, dict)}
    return {
        "kind": "graph",
        "nodesAdded": [nodes_after[k] for k in sorted(nodes_after.keys() - nodes_before)],
        "nodesRemoved": [nodes_before[k] for k in sorted(nodes_before.keys() - nodes_after)],
        "linksAdded": [list(k) for k in sorted(links_after - links_before)],
        "linksRemoved": [list(k) for k in sorted(links_before - links_after)],
    }


def _citation_key(citation: dict[str, Any]) -> str:
    return (
        citation_pmid(citation) or normalize_doi(citation.get("doi")) or repr(title_key(citation))
    )


def _bibliography_diff(before: list[Any], after: list[Any]) -> dict[str, Any]:
    old = {_citation_key(c): c for c in before if isinstance(c, dict)}
    new = {_citation_key(c): c for c in after if isinstance(c, dict)}
    return {
        "kind": "bibliography",
        "added": [new[k] for k in new if k not in old],
        "removed": [old[k] for k in old if k not in new],
    }
