"""Fetch a web page without letting a URL reach private networks, then turn it into markdown.

Every hop (the first URL and each redirect) is resolved, every address is vetted, and the
connection goes to the vetted address itself (the hostname travels in Host and TLS SNI), so a
DNS answer that changes between check and connect (rebinding) cannot redirect the request.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import unicodedata
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

import httpx
import lxml.html
import nh3
from bs4 import Tag
from markdownify import MarkdownConverter, chomp, strip_pre

from graphwright.errors import GraphwrightError, InvalidInput
from graphwright.sources.http import ssl_context

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
            transport=self.transport,
            timeout=self.timeout,
            follow_redirects=False,
            trust_env=False,
            verify=ssl_context(trust_env=False),
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
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
IMAGE_SCHEMES = frozenset({"http", "https"})
TITLE_MAX_CHARS = 200
# Characters that could end a markdown link destination early, start a title or split a table row.
UNSAFE_IN_DESTINATION = re.compile(r"[\s()<>\"'\\`|\[\]{}^\x00-\x1f\x7f]")
# A pipe after an even number of backslashes (none included) would split a table cell.
UNESCAPED_PIPE = re.compile(r"(?<!\\)((?:\\\\)*)\|")
TITLE_SPECIALS = re.compile(r"([\\`*_\[\]<>&])")
BACKTICK_RUN = re.compile(r"`+")


def page_title(html: str) -> str | None:
    """The raw text of the page's <title> (or first <h1>); `plain_title` makes it safe."""
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


def plain_title(text: str) -> str:
    """`text` on one line, capped, with markdown and HTML specials backslash-escaped."""
    printable = "".join(" " if unicodedata.category(char) == "Cc" else char for char in text)
    title = " ".join(printable.split())
    if len(title) > TITLE_MAX_CHARS:
        title = title[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return TITLE_SPECIALS.sub(r"\\\1", title)


def safe_url(raw: str | None, *, base: str | None, schemes: frozenset[str]) -> str | None:
    """`raw` made absolute against `base` if it has a scheme in `schemes`, else None.

    Characters that could end a markdown link destination are percent-encoded, so the URL
    cannot break out of `[text](url)` or a table row.
    """
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        parts = urlsplit(urljoin(base, raw) if base else raw)
    except ValueError:
        return None
    if parts.scheme not in schemes:
        return None
    return UNSAFE_IN_DESTINATION.sub(lambda found: quote(found.group(), safe=""), urlunsplit(parts))


def fenced(text: str, info: str = "") -> str:
    """`text` as a fenced code block; the fence is longer than any backtick run in it."""
    longest = max((len(run) for run in BACKTICK_RUN.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


class SafeMarkdownConverter(MarkdownConverter):
    """markdownify for untrusted pages: links only to http(s)/mailto and without titles, images
    as plain links (no inline loading, so no tracking pixels), code that cannot leave its span or
    fence, and pipes escaped inside table cells. Text escaping comes from escape_misc."""

    def __init__(self, *, base_url: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.base_url = base_url

    def convert_a(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        if "_noformat" in parent_tags:
            return text
        prefix, suffix, text = chomp(text)
        if not text:
            return ""
        href = safe_url(el.get("href"), base=self.base_url, schemes=LINK_SCHEMES)
        link = text if href is None else f"[{text}]({href})"
        return f"{prefix}{link}{suffix}"

    def convert_img(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        alt = " ".join((el.get("alt") or "").split())
        if "_noformat" in parent_tags:
            return alt
        alt = self.escape(alt, parent_tags)
        src = safe_url(el.get("src"), base=self.base_url, schemes=IMAGE_SCHEMES)
        if src is None or "a" in parent_tags:  # links cannot nest in markdown
            return alt
        return f"[Image{': ' + alt if alt else ''}]({src})"

    def convert_code(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        # A line break in a code span could start an HTML block on the next line.
        return super().convert_code(el, text.replace("\n", " "), parent_tags)

    convert_kbd = convert_code
    convert_samp = convert_code

    def convert_pre(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        text = strip_pre(text)
        return f"\n\n{fenced(text)}\n\n" if text else ""

    def convert_td(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return super().convert_td(el, UNESCAPED_PIPE.sub(r"\1\\|", text), parent_tags)

    def convert_th(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return super().convert_th(el, UNESCAPED_PIPE.sub(r"\1\\|", text), parent_tags)


def html_to_markdown(html: str, *, base_url: str | None = None) -> str:
    """Sanitise (nh3: no script, style or handlers), then convert with every markdown special
    in the text escaped; relative links resolve against `base_url` (dropped without one)."""
    clean = nh3.clean(
        html,
        tags=nh3.ALLOWED_TAGS - {"map", "area"},
        clean_content_tags=CONTENT_FREE_TAGS,
        url_schemes=set(LINK_SCHEMES),
        link_rel=None,
    )
    converter = SafeMarkdownConverter(
        base_url=base_url,
        heading_style="ATX",
        bullets="-",
        strip=["span"],
        escape_misc=True,
        escape_asterisks=True,
        escape_underscores=True,
    )
    # Split on "\n" only: splitlines() would also break at U+2028 and the like, which markdown
    # does not, turning a character inside a code span into a real line break.
    lines = [line.rstrip() for line in converter.convert(clean).split("\n")]
    return "\n".join(_collapse_blank_lines(lines)).strip() + "\n"


def _collapse_blank_lines(lines: list[str]) -> list[str]:
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    return kept


def text_to_markdown(text: str, content_type: str) -> str:
    """A text or markdown page shown verbatim: fenced, so none of it is rendered as markup."""
    body = text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    info = "markdown" if content_type == "text/markdown" else "text"
    return fenced(body, info) + "\n"


def truncate_at_line(markdown: str, limit: int) -> str:
    """At most `limit` characters of `markdown`, cut at a line break.

    Code spans never hold a line break here, so the cut cannot leave one open (an open span
    would expose its raw content as markup); a fence left open still renders as code.
    """
    if len(markdown) <= limit:
        return markdown
    return markdown[: max(markdown.rfind("\n", 0, limit + 1), 0)]


def to_markdown_page(page: FetchedPage, *, default_title: str) -> MarkdownPage:
    if page.content_type in HTML_TYPES:
        title = page_title(page.text) or default_title
        markdown = html_to_markdown(page.text, base_url=page.url)
    else:
        title = default_title
        markdown = text_to_markdown(page.text, page.content_type)
    return MarkdownPage(
        title=plain_title(title),
        markdown=markdown,
        source=page.url,
        content_type=page.content_type,
        converted_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
