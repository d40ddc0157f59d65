"""The Tavily client against recorded replies in Tavily's documented shape (httpx MockTransport):
the request it sends, typed results, every documented error, and no key."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest

from graphwright.errors import InvalidInput
from graphwright.miner.tavily import (
    TAVILY_URL,
    TavilyClient,
    TavilyError,
    TavilyNotConfigured,
)
from graphwright.settings import Settings

RECORDED = Path(__file__).parent.parent / "fixtures" / "tavily"
KEY = "tvly-test-0123456789"


def recorded(name: str) -> bytes:
    return (RECORDED / name).read_bytes()


def replying(
    status: int, body: bytes, seen: list[httpx.Request] | None = None
) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, content=body, headers={"content-type": "application/json"})

    return httpx.MockTransport(handler)


async def test_a_search_posts_the_documented_body_with_a_bearer_key() -> None:
    seen: list[httpx.Request] = []
    client = TavilyClient(KEY, transport=replying(200, recorded("search_answer.json"), seen))
    answer = await client.search(
        "  celecoxib COX-2 selectivity ", max_results=3, include_answer=True,
        include_domains=["example.org"], time_range="year",
    )  # fmt: skip
    [request] = seen
    assert (request.method, str(request.url)) == ("POST", TAVILY_URL)
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(request.url) and KEY.encode() not in request.content
    assert orjson.loads(request.content) == {
        "query": "celecoxib COX-2 selectivity",
        "max_results": 3,
        "search_depth": "basic",
        "topic": "general",
        "include_answer": True,
        "include_domains": ["example.org"],
        "time_range": "year",
    }
    assert answer.answer == "Celecoxib is a selective COX-2 inhibitor."
    assert [r.url for r in answer.results] == [
        "https://example.org/celecoxib-cox2",
        "https://example.com/nsaids",
    ]
    assert answer.results[0].score == 0.91 and answer.response_time == 1.09
    text = answer.as_text()
    assert "Answer: Celecoxib is a selective COX-2 inhibitor." in text
    assert "1. Celecoxib and COX-2 (example page)" in text
    assert "Celecoxib selectively inhibits cyclooxygenase-2" in text  # whitespace folded
    assert [(s.ref, s.resolved_kind) for s in answer.sources()] == [
        ("https://example.org/celecoxib-cox2", "web"),
        ("https://example.com/nsaids", "web"),
    ]


async def test_news_results_carry_their_date_and_image_objects_parse() -> None:
    client = TavilyClient(KEY, transport=replying(200, recorded("search_news.json")))
    answer = await client.search("COX-2 inhibitor trial", topic="news")
    [result] = answer.results
    assert result.published_date == "Mon, 10 Nov 2025 09:00:00 GMT"
    assert result.favicon == "https://example.net/favicon.ico"
    assert answer.images[0].url == "https://example.org/figure.png"  # type: ignore[union-attr]
    assert "(Mon, 10 Nov 2025 09:00:00 GMT)" in answer.as_text()


async def test_without_a_key_the_error_says_how_to_set_one() -> None:
    called: list[httpx.Request] = []
    client = TavilyClient(None, transport=replying(200, b"{}", called))
    assert not client.configured
    with pytest.raises(TavilyNotConfigured, match="set TAVILY_API_KEY"):
        await client.search("anything")
    offline = TavilyClient(KEY, offline=True, transport=replying(200, b"{}", called))
    with pytest.raises(TavilyNotConfigured, match="offline"):
        await offline.search("anything")
    assert called == []


def test_the_key_comes_from_tavily_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert TavilyClient.from_settings(settings).configured
    assert KEY not in repr(settings)
    monkeypatch.delenv("TAVILY_API_KEY")
    assert not TavilyClient.from_settings(Settings(_env_file=None)).configured  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (401, b'{"detail": {"error": "Unauthorized: missing or invalid API key."}}',
         "refused the API key"),
        (429, b'{"detail": {"error": "Too many requests"}}', "rate-limiting"),
        (432, b'{"detail": {"error": "plan limit"}}', "usage limit"),
        (433, b'{"detail": {"error": "pay-as-you-go limit"}}', "pay-as-you-go"),
        (400, b'{"detail": {"error": "Invalid topic. Must be \'general\' or \'news\'."}}',
         r"failed \(400\): Invalid topic"),
        (500, b"<html>oops</html>", r"failed \(500\)$"),
    ],
)  # fmt: skip
async def test_documented_errors_become_clear_messages(
    status: int, body: bytes, message: str
) -> None:
    client = TavilyClient(KEY, transport=replying(status, body))
    with pytest.raises(TavilyError, match=message) as caught:
        await client.search("celecoxib")
    assert KEY not in str(caught.value)


async def test_a_timeout_and_a_malformed_reply_are_errors_too() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    client = TavilyClient(KEY, timeout=2.5, transport=httpx.MockTransport(slow))
    with pytest.raises(TavilyError, match=r"within 2\.5 s"):
        await client.search("celecoxib")
    malformed = TavilyClient(KEY, transport=replying(200, b'{"results": [{"title": "no url"}]}'))
    with pytest.raises(TavilyError, match="unexpected reply"):
        await malformed.search("celecoxib")


async def test_bad_arguments_are_refused_before_any_request() -> None:
    client = TavilyClient(KEY, transport=replying(200, recorded("search_answer.json")))
    with pytest.raises(InvalidInput, match="1 to 400 characters"):
        await client.search("   ")
    with pytest.raises(InvalidInput, match="1 to 400 characters"):
        await client.search("x" * 401)
    with pytest.raises(InvalidInput, match="max_results is 1 to 20"):
        await client.search("celecoxib", max_results=21)
