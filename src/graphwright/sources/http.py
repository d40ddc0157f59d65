"""The one way the source clients call a remote API."""

from __future__ import annotations

from typing import Any

import httpx

from graphwright.sources.errors import SourceUnavailable


async def fetch_bytes(
    method: str,
    url: str,
    *,
    label: str,
    transport: httpx.AsyncBaseTransport | None,
    timeout: float,
    **request: Any,
) -> bytes:
    """The body of a successful reply; network and HTTP errors become SourceUnavailable."""
    try:
        async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
            response = await client.request(method, url, **request)
            response.raise_for_status()
    except httpx.HTTPError as exc:
        raise SourceUnavailable(f"{label} unavailable ({type(exc).__name__})") from None
    return response.content
