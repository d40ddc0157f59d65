"""Tavily web search (POST https://api.tavily.com/search) for the miner's discovery subagent.

The key comes from `TAVILY_API_KEY` (or `GRAPHWRIGHT_TAVILY_API_KEY`) and goes only in the
`Authorization: Bearer` header, never in a URL, a log line or an error. Without a key, or
offline, a search raises `TavilyNotConfigured`, whose message tells the agent (and the person)
how to turn web search on; discovery then goes on with its other sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from graphwright.errors import InvalidInput, Unavailable
from graphwright.miner.confidence import Source
from graphwright.settings import Settings
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.http import ssl_context

TAVILY_URL = "https://api.tavily.com/search"
MAX_QUERY_CHARS = 400
MAX_RESULTS = 20
SNIPPET_CHARS = 500
NOT_CONFIGURED = (
    "Web search is off: set TAVILY_API_KEY to a Tavily API key (https://app.tavily.com) to "
    "enable tavily_search. Until then, use the knowledge base, PubMed and the biomedical KG."
)
OFFLINE = "Web search is off because graphwright runs offline (GRAPHWRIGHT_OFFLINE)."
STATUS_MESSAGES = {
    401: "Tavily refused the API key (401): check TAVILY_API_KEY",
    429: "Tavily is rate-limiting these searches (429): wait and search less often",
    432: "The Tavily plan's usage limit is reached (432)",
    433: "The Tavily pay-as-you-go limit is reached (433)",
}


class TavilyNotConfigured(Unavailable):
    """No Tavily key (or offline): web search cannot run. The message says how to enable it."""


class TavilyError(SourceUnavailable):
    """Tavily answered with an error, or could not be reached."""


class TavilyResult(BaseModel):
    """One search result, in Tavily's documented fields."""

    model_config = ConfigDict(extra="ignore")

    title: str = ""
    url: str
    content: str = ""
    score: float | None = None
    raw_content: str | None = None
    published_date: str | None = None
    favicon: str | None = None


class TavilyImage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str
    description: str | None = None


class TavilyResponse(BaseModel):
    """The documented response body of POST /search."""

    model_config = ConfigDict(extra="ignore")

    query: str
    answer: str | None = None
    results: list[TavilyResult] = Field(default_factory=list)
    images: list[TavilyImage | str] = Field(default_factory=list)
    follow_up_questions: list[str] | None = None
    response_time: float | None = None
    request_id: str | None = None

    def sources(self) -> list[Source]:
        """The results as web sources, for a candidate's provenance and confidence."""
        return [Source(ref=r.url, kind="web", title=r.title or None) for r in self.results]

    def as_text(self) -> str:
        """A compact answer for a model's context: the answer, then numbered results."""
        lines = [f'Tavily results for "{self.query}":']
        if self.answer:
            lines.append(f"Answer: {self.answer}")
        for n, result in enumerate(self.results, 1):
            when = f" ({result.published_date})" if result.published_date else ""
            snippet = " ".join(result.content.split())[:SNIPPET_CHARS]
            lines.append(f"{n}. {result.title or result.url}{when}\n   {result.url}\n   {snippet}")
        if not self.results:
            lines.append("No results.")
        return "\n".join(lines)


class TavilyClient:
    def __init__(
        self,
        api_key: SecretStr | str | None,
        *,
        url: str = TAVILY_URL,
        timeout: float = 20.0,
        transport: httpx.AsyncBaseTransport | None = None,
        offline: bool = False,
    ) -> None:
        key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self._key = (key or "").strip() or None
        self.url = url
        self.timeout = timeout
        self._transport = transport
        self.offline = offline

    @classmethod
    def from_settings(
        cls, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> TavilyClient:
        return cls(
            settings.tavily_api_key,
            timeout=settings.fetch_timeout_seconds,
            transport=transport,
            offline=settings.offline,
        )

    @property
    def configured(self) -> bool:
        return self._key is not None and not self.offline

    async def search(
        self,
        query: str,
        *,
        max_results: int = 5,
        search_depth: Literal["basic", "advanced"] = "basic",
        topic: Literal["general", "news"] = "general",
        include_answer: bool = False,
        include_domains: Sequence[str] = (),
        exclude_domains: Sequence[str] = (),
        time_range: Literal["day", "week", "month", "year"] | None = None,
    ) -> TavilyResponse:
        """Search the web. TavilyNotConfigured without a key, TavilyError when Tavily fails."""
        query = query.strip()
        if not query or len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"A Tavily query has 1 to {MAX_QUERY_CHARS} characters")
        if not 1 <= max_results <= MAX_RESULTS:
            raise InvalidInput(f"max_results is 1 to {MAX_RESULTS}, not {max_results}")
        if self.offline:
            raise TavilyNotConfigured(OFFLINE)
        if self._key is None:
            raise TavilyNotConfigured(NOT_CONFIGURED)
        body: dict[str, Any] = {
            "query": query,
            "max_results": max_results,
            "search_depth": search_depth,
            "topic": topic,
            "include_answer": include_answer,
        }
        if include_domains:
            body["include_domains"] = list(include_domains)
        if exclude_domains:
            body["exclude_domains"] = list(exclude_domains)
        if time_range:
            body["time_range"] = time_range
        return _parse(await self._post(body))

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self._key}", "Content-Type": "application/json"}
        try:
            async with httpx.AsyncClient(
                transport=self._transport, timeout=self.timeout, verify=ssl_context()
            ) as client:
                response = await client.post(self.url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise TavilyError(f"Tavily did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise TavilyError(f"Tavily cannot be reached ({type(exc).__name__})") from None
        if response.is_success:
            return response
        raise TavilyError(_error_message(response))


def _error_message(response: httpx.Response) -> str:
    known = STATUS_MESSAGES.get(response.status_code)
    if known:
        return known
    detail = _detail(response)
    return f"Tavily search failed ({response.status_code}){f': {detail}' if detail else ''}"


def _detail(response: httpx.Response) -> str | None:
    """Tavily's `{"detail": {"error": "..."}}`, or a plain `detail` string."""
    try:
        payload = response.json()
    except ValueError:
        return None
    detail = payload.get("detail") if isinstance(payload, dict) else None
    if isinstance(detail, dict):
        detail = detail.get("error")
    return str(detail)[:300] if detail else None


def _parse(response: httpx.Response) -> TavilyResponse:
    try:
        return TavilyResponse.model_validate_json(response.content)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise TavilyError(
            f"Tavily returned an unexpected reply ({where}: {first['msg']})"
        ) from None
