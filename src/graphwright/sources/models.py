"""What the source services return: the MCP tools' structuredContent (outputSchema).

Graphs are not repeated here: they travel once, as application/vnd.knowledge-graph artifacts.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Citation(BaseModel):
    pmid: str
    title: str
    authors: list[str] = Field(default_factory=list)
    journal: str | None = None
    year: int | None = None
    doi: str | None = None
    abstract: str | None = None
    mesh: list[str] = Field(default_factory=list, description="MeSH descriptors, where known.")
    synthetic: bool = Field(default=False, description="True on made-up sample records.")


class LiteratureResult(BaseModel):
    source: str = Field(description="Where the citations came from: PubMed or the sample corpus.")
    query: str | None = None
    pmidsRequested: list[str] = Field(default_factory=list)
    citations: list[Citation]
    notes: list[str] = Field(default_factory=list)


class Grant(BaseModel):
    id: str
    projectNumber: str | None = None
    title: str
    abstract: str | None = None
    principalInvestigators: list[str] = Field(default_factory=list)
    organization: str | None = None
    agency: str | None = None
    fiscalYear: int | None = None
    awardAmount: float | None = None
    startDate: str | None = None
    endDate: str | None = None
    url: str | None = None
    synthetic: bool = Field(default=False, description="True on made-up sample records.")


class GrantSearchResult(BaseModel):
    source: str
    query: str
    total: int = Field(description="Matching grants in all; `grants` is one page of them.")
    offset: int
    grants: list[Grant]
    notes: list[str] = Field(default_factory=list)


class GrantPage(BaseModel):
    title: str
    source: str = Field(description="The URL the page was fetched from (after redirects).")
    contentType: str
    convertedAt: str
    markdown: str


class Entity(BaseModel):
    id: str
    name: str
    category: str | None = None


class EntityMatch(Entity):
    score: float
    matched: str = Field(description="The name or synonym that matched.")


class Resolution(BaseModel):
    name: str
    source: str
    matches: list[EntityMatch]


class Neighbor(BaseModel):
    id: str
    name: str
    category: str | None = None
    label: str = Field(description="The link label, e.g. 'treats'.")
    direction: str = Field(description="'out' when the entity is the link's source, else 'in'.")
    evidence: list[str] = Field(default_factory=list)


class NeighborResult(BaseModel):
    source: str
    entity: Entity
    neighbors: list[Neighbor]
    notes: list[str] = Field(default_factory=list)


class PathResult(BaseModel):
    source: str
    start: Entity
    end: Entity
    maxHops: int
    paths: list[list[str]] = Field(description="Each path as its node ids, shortest first.")
    notes: list[str] = Field(default_factory=list)
