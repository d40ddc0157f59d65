"""Offline, `/kg.queryNeighbors GENE` finds a neighbourhood for every gene the docs use: the genes
queried or added as `type=gene` in README.md and docs/, and every sample-graph gene they name."""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path

import pytest

from tests.mcp.support import stdio_session, text_of

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def doc_genes() -> list[str]:
    text = "\n".join(path.read_text() for path in DOCS)
    kg = json.loads(
        resources.files("graphwright.sources.sample_data").joinpath("kg.json").read_text()
    )
    sample_genes = {node["name"] for node in kg["nodes"] if node["category"] == "Gene"}
    added = set(re.findall(r"label=(\w+) type=gene", text))
    queried = set(re.findall(r"/kg\.queryNeighbors (\w+)", text))
    named = set(re.findall(r"\b[A-Z][A-Z0-9]{1,9}\b", text)) & sample_genes
    return sorted(added | queried | named)


def test_the_docs_use_genes() -> None:
    assert {"TP53", "MDM2", "CDKN1A"} <= set(doc_genes())


@pytest.mark.parametrize("gene", doc_genes())
async def test_a_doc_gene_has_a_neighbourhood_offline(gene: str, tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRAPHWRIGHT_")}
    env |= {"GRAPHWRIGHT_HOME": str(tmp_path), "GRAPHWRIGHT_OFFLINE": "true"}
    async with stdio_session("kg", env) as session:
        result = await session.call_tool("queryNeighbors", {"curieOrName": gene})
    assert not result.is_error, text_of(result)
    answer = result.structured_content
    assert answer["entity"]["name"] == gene
    assert len(answer["neighbors"]) >= 2, answer  # a neighbourhood, not a lone node
