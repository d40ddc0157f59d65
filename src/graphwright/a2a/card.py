"""graphwright's A2A agent card: who it is, where it listens, how to authenticate, its skills.

Every skill runs as a chat turn. With a model configured the message is plain language; without
one, slash commands call the tools directly (`/help` lists them), so each skill's examples show
both.
"""

from __future__ import annotations

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from graphwright import __version__
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN

RPC_PATH = "/a2a"
REST_PATH = "/a2a/rest"
BEARER = "bearer"
CACHE_CONTROL = "public, max-age=300"

DESCRIPTION = (
    "graphwright gathers biomedical knowledge through MCP tools (PubMed, NIH grants, biomedical "
    "knowledge graphs) and returns it as artifacts: one merged knowledge graph "
    f"({KNOWLEDGE_GRAPH}), one de-duplicated bibliography ({BIBLIOGRAPHY}) and markdown "
    f"documents ({MARKDOWN}). A context is a conversation: follow-up messages in the same "
    "contextId continue it, and its graph and bibliography grow as new artifact versions. In "
    "Graph Mode a conversation owns one versioned graph that you edit together with the agent. "
    "Send slash commands (/help lists them) to call tools directly when no model is configured."
)


def _skills() -> list[AgentSkill]:
    return [
        AgentSkill(
            id="knowledge-graph",
            name="Build a knowledge graph",
            description=(
                "Answers a biomedical question with a knowledge graph merged from knowledge-graph "
                "queries (neighbours, paths between entities), nodes by id and links by source, "
                "label and target, with evidence unioned."
            ),
            tags=["knowledge graph", "biomedical", "translator"],
            examples=[
                "How are TP53 and BRCA1 related?",
                "/kg.queryNeighbors TP53",
                "/kg.findPaths TP53 BRCA1",
            ],
            output_modes=[KNOWLEDGE_GRAPH, MARKDOWN],
        ),
        AgentSkill(
            id="bibliography",
            name="Gather a bibliography",
            description=(
                "Searches PubMed and returns the citations as one bibliography, de-duplicated by "
                "PMID across searches and turns."
            ),
            tags=["pubmed", "literature", "citations"],
            examples=[
                "Find recent papers on BRCA1 and breast cancer",
                "/literature.searchPubMed TP53",
            ],
            output_modes=[BIBLIOGRAPHY, MARKDOWN],
        ),
        AgentSkill(
            id="grant",
            name="Fetch and summarise a grant",
            description=(
                "Searches NIH RePORTER and turns a grant's page into a markdown document."
            ),
            tags=["grants", "nih", "reporter"],
            examples=[
                "Which NIH grants study TP53 in 2024?",
                "/grants.searchGrants TP53",
                "/grants.fetchGrant https://reporter.nih.gov/project-details/10000000",
            ],
            output_modes=[MARKDOWN],
        ),
        AgentSkill(
            id="graph-mode",
            name="Edit a conversation's graph (Graph Mode)",
            description=(
                'In Graph Mode (message metadata {"mode": "graph_mode"}) the conversation owns '
                "one persistent, versioned graph: add, update and remove nodes and edges, undo and "
                "redo, analyse it. A data part holding a knowledge graph is merged into it. Each "
                "change is reported as a status update with the new graph version."
            ),
            tags=["graph mode", "editing", "undo"],
            examples=["Add TP53 and MDM2 and link them", "/graph.getGraphState", "/graph.undo"],
            input_modes=["text/plain", KNOWLEDGE_GRAPH],
            output_modes=["text/plain", MARKDOWN],
        ),
        AgentSkill(
            id="knowledge-miner",
            name="Mine knowledge",
            description=(
                "Turns a question into validated JSON-LD knowledge assets; publishing them "
                "needs a person's approval."
            ),
            tags=["knowledge assets", "json-ld", "dkg"],
            examples=["Mine knowledge about TP53 inhibitors"],
        ),
    ]


def agent_card(base_url: str) -> AgentCard:
    """The card, with JSON-RPC at `base_url` + /a2a (preferred: first) and HTTP+JSON at
    `base_url` + /a2a/rest."""
    return AgentCard(
        name="graphwright",
        description=DESCRIPTION,
        version=__version__,
        provider=AgentProvider(organization="graphwright", url=base_url),
        supported_interfaces=[
            AgentInterface(
                url=f"{base_url.rstrip('/')}{path}",
                protocol_binding=binding.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            )
            for path, binding in (
                (RPC_PATH, TransportProtocol.JSONRPC),
                (REST_PATH, TransportProtocol.HTTP_JSON),
            )
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        security_schemes={
            BEARER: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer",
                    bearer_format="graphwright token",
                    description=(
                        "A graphwright token (`graphwright token create`); a token scoped to one "
                        "conversation may only use that context."
                    ),
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={BEARER: StringList(list=[])})],
        default_input_modes=["text/plain", KNOWLEDGE_GRAPH],
        default_output_modes=["text/plain", MARKDOWN, KNOWLEDGE_GRAPH, BIBLIOGRAPHY],
        skills=_skills(),
    )
