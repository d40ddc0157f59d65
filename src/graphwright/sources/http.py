"""The one way the source clients call a remote API."""

from __future__ import annotations

import functools
import ssl
from typing import Any

import httpx

from graphwright.sources.errors import SourceUnavailable


@functools.cache
def ssl_context(*, trust_env: bool = True) -> ssl.SSLContext:
    """httpx's default TLS context, built once: loading the CA bundle costs more than a typical
    request (~150 ms), and each new client would otherwise load it again."""
    return httpx.create_ssl_context(trust_env=trust_env)


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
        async with httpx.AsyncClient(
            transport=transport, timeout=timeout, verify=ssl_context()
        ) as client:
            response = await client.request(method, url, **request)
            response.raise_for_status()
    except httpx.HTTPError as exc:
        raise SourceUnavailable(f"{label} unavailable ({type(exc).__name__})") from None
    return response.content
