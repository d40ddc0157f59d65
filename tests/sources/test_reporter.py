"""NIH RePORTER v2: request body, recorded response parsing, sample grants."""

from __future__ import annotations

import httpx
import orjson
import pytest

from graphwright.errors import InvalidInput
from graphwright.settings import Settings
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.reporter import (
    REPORTER_URL,
    GrantQuery,
    ReporterClient,
    SampleGrants,
    parse_search,
)
from graphwright.sources.service import REPORTER, SAMPLE_GRANTS, GrantsService
from tests.sources.support import fixture_bytes

SEARCH = fixture_bytes("reporter_search.json")


def test_query_body_follows_the_documented_criteria() -> None:
    body = GrantQuery(
        text="kinase inhibitor",
        fiscal_years=(2023, 2024),
        pi_name="Example",
        organization="Fixture University",
        limit=5,
        offset=10,
    ).body()
    assert body["criteria"] == {
        "advanced_text_search": {
            "operator": "and",
            "search_field": "projecttitle,terms,abstracttext",
            "search_text": "kinase inhibitor",
        },
        "fiscal_years": [2023, 2024],
        "pi_names": [{"any_name": "Example"}],
        "org_names": ["Fixture University"],
    }
    assert (body["offset"], body["limit"]) == (10, 5)
    assert "ProjectTitle" in body["include_fields"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "  "}, "Give words"),
        ({"text": "x", "limit": 0}, "limit must be between 1 and 50"),
        ({"text": "x", "limit": 51}, "limit must be between 1 and 50"),
        ({"text": "x", "offset": -1}, "offset must be between 0 and 1000000, not -1"),
        ({"text": "x", "offset": 2**63}, "offset must be between 0 and 1000000"),
    ],
)
def test_bad_queries_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        GrantQuery(**kwargs)


def test_recorded_response_is_parsed() -> None:
    page = parse_search(SEARCH)
    assert page.total == 2
    first, second = page.grants
    assert first == {
        "id": "99999001",
        "projectNumber": "1R01XX999001-01",
        "title": "Fixture project: knowledge graphs of kinase inhibitor response",
        "abstract": "Made-up abstract for tests. The project studies kinase inhibitor response.",
        "principalInvestigators": ["Ada Example"],
        "organization": "FIXTURE UNIVERSITY",
        "agency": "NCI",
        "fiscalYear": 2024,
        "awardAmount": 512345,
        "startDate": "2024-04-01",
        "endDate": "2029-03-31",
        "url": "https://reporter.nih.gov/project-details/99999001",
    }
    assert second["principalInvestigators"] == ["Cy Sample"]
    assert second["agency"] is None
    assert second["abstract"] is None
    assert second["url"] == "https://reporter.nih.gov/project-details/99999002"


def test_unexpected_reply_is_reported() -> None:
    with pytest.raises(SourceUnavailable, match="unexpected reply"):
        parse_search(b'{"error": "bad"}')


async def test_client_posts_the_query() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=SEARCH)

    client = ReporterClient(transport=httpx.MockTransport(handler))
    page = await client.search(GrantQuery(text="kinase", limit=2))
    assert len(page.grants) == 2
    [request] = seen
    assert request.method == "POST"
    assert str(request.url) == REPORTER_URL
    assert orjson.loads(request.content)["criteria"]["advanced_text_search"]["search_text"] == (
        "kinase"
    )


async def test_service_falls_back_to_sample_grants() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(503))
    service = GrantsService.from_settings(Settings(offline=False), transport=transport)
    result = await service.search(GrantQuery(text="Parkinson"))
    assert result.source == SAMPLE_GRANTS
    assert "NIH RePORTER unavailable (HTTPStatusError)" in result.notes[0]
    assert result.grants[0].synthetic


async def test_service_uses_reporter_when_online() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=SEARCH))
    service = GrantsService.from_settings(Settings(offline=False), transport=transport)
    result = await service.search(GrantQuery(text="kinase"))
    assert result.source == REPORTER
    assert result.total == 2
    assert not result.grants[0].synthetic


def test_sample_grants_are_synthetic_and_filterable() -> None:
    samples = SampleGrants.bundled()
    assert all(g["synthetic"] and g["id"].startswith("synthetic-") for g in samples.grants.values())
    page = samples.search(GrantQuery(text="cancer", fiscal_years=(2024,)))
    assert page.total >= 2
    assert all(g["fiscalYear"] == 2024 for g in page.grants)
    paged = samples.search(GrantQuery(text="cancer", fiscal_years=(2024,), limit=1, offset=1))
    assert paged.grants == page.grants[1:2]
    assert samples.search(GrantQuery(text="cancer", pi_name="nobody-at-all")).total == 0
