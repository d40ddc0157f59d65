"""Fetch a web page without letting a URL reach private networks, then turn it into markdown.

Every hop (the first URL and each redirect) is resolved, every address is vetted, and the
connection goes to the vetted address itself (the hostname travels in Host and TLS SNI), so a
DNS answer that changes between check and connect (rebinding) cannot redirect the request.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import lxml.html
import nh3
from markdownify import markdownify

from graphwright.errors import GraphwrightError, InvalidInput

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]

MAX_REDIRECTS = 5
REDIRECT_STATUSES = {301, 302, 303, 307, 308}
ALLOWED_CONTENT_TYPES = {"text/html", "text/plain", "text/markdown", "application/xhtml+xml"}
HTML_TYPES = {"text/html", "application/xhtml+xml"}

METADATA_ADDRESSES = {
    ipaddress.ip_address("169.254.169.254"): "cloud metadata",
    ipaddress.ip_address("fd00:ec2::254"): "cloud metadata",
}
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchRefused(InvalidInput):
    """The URL, an address it resolves to, or the response is not allowed."""


class FetchFailed(GraphwrightError):
    """The page could not be fetched (network error, timeout)."""


def refusal_reason(address: IPAddress) -> str | None:
    """Why `address` may not be fetched, or None when it is a public address."""
    if address in METADATA_ADDRESSES:
        return METADATA_ADDRESSES[address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "IPv4-mapped IPv6"
        if address in NAT64:
            return "NAT64-embedded IPv4"
        embedded = address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None and (reason := refusal_reason(embedded)):
            return f"6to4/Teredo-embedded {reason} IPv4"
        if address.is_site_local:
            return "site-local"
    checks = (
        (address.is_loopback, "loopback"),
        (address.is_unspecified, "unspecified"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (isinstance(address, ipaddress.IPv4Address) and address in CGNAT, "carrier-grade NAT"),
        (address.is_private, "private"),
        (address.is_reserved, "reserved"),
        (not address.is_global, "non-public"),
    )
    return next((reason for failed, reason in checks if failed), None)


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchRefused(f"Cannot resolve host '{host}': {exc.strerror}") from None
    return [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]


@dataclass(frozen=True)
class FetchedPage:
    url: str
    status_code: int
    content_type: str
    text: str


@dataclass(frozen=True)
class MarkdownPage:
    title: str
    markdown: str
    source: str
    content_type: str
    converted_at: str


class SafeFetcher:
    """GET http(s) URLs under the SSRF rules above, a size cap, a timeout and a type check."""

    def __init__(
        self,
        *,
        allow_hosts: Iterable[str] = (),
        max_bytes: int = 5 * 1024 * 1024,
        timeout: float = 20.0,
        resolver: Resolver = system_resolver,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.allow_hosts = {host.lower().strip("[]") for host in allow_hosts}
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.resolver = resolver
        self.transport = transport

    async def fetch(self, url: str) -> FetchedPage:
        """The page at `url`; the whole exchange, redirects included, has one timeout."""
        try:
            async with asyncio.timeout(self.timeout):
                return await self._fetch(url)
        except TimeoutError:
            raise FetchFailed(f"Fetching {url} took longer than {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise FetchFailed(f"Could not fetch {url}: {exc or type(exc).__name__}") from None

    async def _fetch(self, url: str) -> FetchedPage:
        current = self._parse(url)
        # No environment proxy: the connection goes to the address vetted above, and only there.
        async with httpx.AsyncClient(
            transport=self.transport, timeout=self.timeout, follow_redirects=False, trust_env=False
        ) as client:
            for _ in range(MAX_REDIRECTS + 1):
                request = await self._pinned_request(client, current)
                response = await client.send(request, stream=True)
                try:
                    if response.status_code in REDIRECT_STATUSES:
                        current = self._redirect_target(current, response)
                        continue
                    return await self._read(current, response)
                finally:
                    await response.aclose()
        raise FetchRefused(f"Too many redirects (more than {MAX_REDIRECTS}) from {url}")

    def _parse(self, raw: str) -> httpx.URL:
        try:
            url = httpx.URL(raw.strip())
        except httpx.InvalidURL as exc:
            raise FetchRefused(f"Not a valid URL: {raw!r} ({exc})") from None
        if url.scheme not in {"http", "https"}:
            raise FetchRefused(f"Only http and https URLs can be fetched, not '{url.scheme}:'")
        if not url.host:
            raise FetchRefused(f"The URL {raw!r} has no host")
        if url.userinfo:
            raise FetchRefused("URLs with a user name or password are not fetched")
        return url

    def _redirect_target(self, current: httpx.URL, response: httpx.Response) -> httpx.URL:
        location = response.headers.get("location")
        if not location:
            raise FetchRefused(f"{current} redirected ({response.status_code}) without a Location")
        return self._parse(str(current.join(location)))

    async def _vetted_address(self, url: httpx.URL) -> IPAddress:
        host = url.host.lower()
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        addresses = [literal] if literal is not None else await self.resolver(host, port)
        if not addresses:
            raise FetchRefused(f"Host '{host}' resolves to no address")
        if host in self.allow_hosts:
            return addresses[0]
        for address in addresses:
            reason = refusal_reason(address)
            if reason is not None:
                shown = host if literal is not None else f"{host} ({address})"
                raise FetchRefused(
                    f"Refused to fetch {url}: {shown} is a blocked address ({reason}). "
                    "Add the host to GRAPHWRIGHT_FETCH_ALLOW_HOSTS to allow it."
                )
        return addresses[0]

    async def _pinned_request(self, client: httpx.AsyncClient, url: httpx.URL) -> httpx.Request:
        """A request to the vetted IP itself; the name goes in Host and TLS SNI."""
        address = await self._vetted_address(url)
        host_header = url.netloc.decode("ascii")
        request = client.build_request(
            "GET",
            url.copy_with(host=str(address)),
            headers={"Host": host_header, "Accept": ", ".join(sorted(ALLOWED_CONTENT_TYPES))},
        )
        request.extensions["sni_hostname"] = url.host
        return request

    async def _read(self, url: httpx.URL, response: httpx.Response) -> FetchedPage:
        if response.status_code >= 400:
            raise FetchRefused(f"{url} answered HTTP {response.status_code}")
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type not in ALLOWED_CONTENT_TYPES:
            raise FetchRefused(
                f"{url} is '{content_type or 'of no stated type'}'; only "
                f"{', '.join(sorted(ALLOWED_CONTENT_TYPES))} pages are fetched"
            )
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            raise self._too_large(url)
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body.extend(chunk)
            if len(body) > self.max_bytes:
                raise self._too_large(url)
        try:
            text = body.decode(response.charset_encoding or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            text = body.decode("utf-8", errors="replace")
        return FetchedPage(str(url), response.status_code, content_type, text)

    def _too_large(self, url: httpx.URL) -> FetchRefused:
        return FetchRefused(f"{url} is larger than the {self.max_bytes:,}-byte limit")


CONTENT_FREE_TAGS = {"head", "title", "script", "style", "noscript", "template", "iframe", "svg"}


def page_title(html: str) -> str | None:
    try:
        tree = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return None
    for path in ("//title", "//h1"):
        found = tree.xpath(path)
        if found:
            text = " ".join(found[0].text_content().split())
            if text:
                return text
    return None


def html_to_markdown(html: str) -> str:
    """Sanitise (nh3: no script, style or handlers) and convert; tables become pipe tables."""
    clean = nh3.clean(
        html,
        tags=nh3.ALLOWED_TAGS - {"img", "map", "area"},
        clean_content_tags=CONTENT_FREE_TAGS,
        url_schemes={"http", "https", "mailto"},
        link_rel=None,
    )
    markdown = markdownify(clean, heading_style="ATX", bullets="-", strip=["span"])
    lines = [line.rstrip() for line in markdown.splitlines()]
    return "\n".join(_collapse_blank_lines(lines)).strip() + "\n"


def _collapse_blank_lines(lines: list[str]) -> list[str]:
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    return kept


def to_markdown_page(page: FetchedPage, *, default_title: str) -> MarkdownPage:
    if page.content_type in HTML_TYPES:
        title = page_title(page.text) or default_title
        markdown = html_to_markdown(page.text)
    else:
        title = default_title
        markdown = page.text
    return MarkdownPage(
        title=title,
        markdown=markdown,
        source=page.url,
        content_type=page.content_type,
        converted_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
