"""NIH research grants: the RePORTER v2 project search API and the offline sample grants.

A grant is a plain dict: id, projectNumber, title, abstract, principalInvestigators,
organization, agency, fiscalYear, awardAmount, startDate, endDate, url (and `synthetic: true`
on the sample grants, which are all made up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import httpx
import orjson

from graphwright.errors import InvalidInput
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.http import fetch_bytes
from graphwright.sources.textindex import FullTextIndex

REPORTER_URL = "https://api.reporter.nih.gov/v2/projects/search"
MAX_LIMIT = 50
MAX_OFFSET = 1_000_000  # the paging bound of graphwright's own list routes
SEARCH_FIELDS = "projecttitle,terms,abstracttext"
INCLUDE_FIELDS = [
    "ApplId",
    "ProjectNum",
    "ProjectTitle",
    "AbstractText",
    "PrincipalInvestigators",
    "Organization",
    "AgencyIcAdmin",
    "FiscalYear",
    "AwardAmount",
    "ProjectStartDate",
    "ProjectEndDate",
    "ProjectDetailUrl",
]

Grant = dict[str, Any]


@dataclass(frozen=True)
class GrantQuery:
    text: str
    fiscal_years: Sequence[int] = field(default_factory=tuple)
    pi_name: str | None = None
    organization: str | None = None
    limit: int = 10
    offset: int = 0

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise InvalidInput("Give words to search grants for")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, not {self.limit}")
        if not 0 <= self.offset <= MAX_OFFSET:
            raise InvalidInput(f"offset must be between 0 and {MAX_OFFSET}, not {self.offset}")

    def criteria(self) -> dict[str, Any]:
        criteria: dict[str, Any] = {
            "advanced_text_search": {
                "operator": "and",
                "search_field": SEARCH_FIELDS,
                "search_text": self.text,
            }
        }
        if self.fiscal_years:
            criteria["fiscal_years"] = list(self.fiscal_years)
        if self.pi_name:
            criteria["pi_names"] = [{"any_name": self.pi_name}]
        if self.organization:
            criteria["org_names"] = [self.organization]
        return criteria

    def body(self) -> dict[str, Any]:
        return {
            "criteria": self.criteria(),
            "include_fields": INCLUDE_FIELDS,
            "offset": self.offset,
            "limit": self.limit,
            "sort_field": "fiscal_year",
            "sort_order": "desc",
        }


@dataclass(frozen=True)
class GrantPage:
    total: int
    grants: list[Grant]


def _date(value: Any) -> str | None:
    return str(value)[:10] if value else None


def grant_from_project(project: dict[str, Any]) -> Grant:
    """One RePORTER `results[]` project as a grant dict."""
    pis = [
        pi.get("full_name") or " ".join(p for p in (pi.get("first_name"), pi.get("last_name")) if p)
        for pi in project.get("principal_investigators") or []
    ]
    organization = project.get("organization") or {}
    agency = project.get("agency_ic_admin") or {}
    appl_id = project.get("appl_id")
    return {
        "id": str(appl_id) if appl_id is not None else project.get("project_num"),
        "projectNumber": project.get("project_num"),
        "title": " ".join(str(project.get("project_title") or "").split()),
        "abstract": project.get("abstract_text") or None,
        "principalInvestigators": [pi for pi in pis if pi],
        "organization": organization.get("org_name"),
        "agency": agency.get("abbreviation") or agency.get("name"),
        "fiscalYear": project.get("fiscal_year"),
        "awardAmount": project.get("award_amount"),
        "startDate": _date(project.get("project_start_date")),
        "endDate": _date(project.get("project_end_date")),
        "url": project.get("project_detail_url")
        or (f"https://reporter.nih.gov/project-details/{appl_id}" if appl_id else None),
    }


def parse_search(payload: bytes) -> GrantPage:
    try:
        reply = orjson.loads(payload)
        total = int(reply["meta"]["total"])
        projects = reply["results"] or []
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise SourceUnavailable(f"NIH RePORTER returned an unexpected reply ({exc})") from None
    grants = [grant_from_project(p) for p in projects if isinstance(p, dict)]
    return GrantPage(total=total, grants=grants)


class ReporterClient:
    def __init__(
        self,
        *,
        url: str = REPORTER_URL,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 20.0,
    ) -> None:
        self.url = url
        self.transport = transport
        self.timeout = timeout

    async def search(self, query: GrantQuery) -> GrantPage:
        reply = await fetch_bytes(
            "POST",
            self.url,
            label="NIH RePORTER",
            transport=self.transport,
            timeout=self.timeout,
            json=query.body(),
        )
        return parse_search(reply)


class SampleGrants:
    """The made-up grants in sample_data/grants.json, searched by relevance."""

    def __init__(self, grants: list[Grant]) -> None:
        self.grants = {grant["id"]: grant for grant in grants}
        self.index = FullTextIndex(
            {"title": 10.0, "abstract": 2.0, "people": 3.0, "organization": 3.0},
            (
                (
                    grant["id"],
                    {
                        "title": grant["title"],
                        "abstract": grant.get("abstract") or "",
                        "people": " ".join(grant["principalInvestigators"]),
                        "organization": grant.get("organization") or "",
                    },
                )
                for grant in grants
            ),
        )

    @classmethod
    def bundled(cls) -> SampleGrants:
        data = resources.files("graphwright.sources.sample_data").joinpath("grants.json")
        return cls(orjson.loads(data.read_bytes())["grants"])

    def search(self, query: GrantQuery) -> GrantPage:
        ranked = [self.grants[i] for i in self.index.search(query.text, len(self.grants))]
        matching = [grant for grant in ranked if _passes_filters(grant, query)]
        return GrantPage(
            total=len(matching), grants=matching[query.offset : query.offset + query.limit]
        )


def _passes_filters(grant: Grant, query: GrantQuery) -> bool:
    if query.fiscal_years and grant.get("fiscalYear") not in query.fiscal_years:
        return False
    if query.pi_name and not any(
        query.pi_name.lower() in pi.lower() for pi in grant["principalInvestigators"]
    ):
        return False
    return not (
        query.organization
        and query.organization.lower() not in (grant.get("organization") or "").lower()
    )
