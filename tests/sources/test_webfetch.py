"""SSRF-safe fetching and HTML-to-markdown conversion."""

from __future__ import annotations

import asyncio
import ipaddress
import re
from collections.abc import Iterator

import httpx
import pytest

from graphwright.sources.webfetch import (
    FetchedPage,
    FetchFailed,
    FetchRefused,
    SafeFetcher,
    html_to_markdown,
    refusal_reason,
    to_markdown_page,
)
from tests.sources.support import GRANT_PAGE, GrantSite, serve_locally


def resolver_for(table: dict[str, list[str]]):
    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        calls.append(host)
        return [ipaddress.ip_address(a) for a in table[host]]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("240.0.0.1", "private"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("fd00:ec2::254", "cloud metadata"),
        ("::ffff:127.0.0.1", "IPv4-mapped IPv6"),
        ("::ffff:8.8.8.8", "IPv4-mapped IPv6"),
        ("64:ff9b::a00:1", "NAT64-embedded IPv4"),
        ("2002:7f00:1::", "6to4/Teredo-embedded loopback IPv4"),
        ("2002:a00:1::", "6to4/Teredo-embedded private IPv4"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "6to4/Teredo-embedded private IPv4"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("8.8.8.8", None),
        ("93.184.216.34", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_refusal_reasons(address: str, reason: str | None) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("http://127.0.0.1/", "127.0.0.1 is a blocked address (loopback)"),
        ("http://10.0.0.1/admin", "10.0.0.1 is a blocked address (private)"),
        ("http://169.254.169.254/latest/meta-data/", "(cloud metadata)"),
        ("http://[::1]:8080/", "::1 is a blocked address (loopback)"),
        ("http://[::ffff:127.0.0.1]/", "(IPv4-mapped IPv6)"),
        ("https://100.100.100.200/", "(carrier-grade NAT)"),
        ("http://localhost/", "localhost (127.0.0.1) is a blocked address (loopback)"),
    ],
)
async def test_private_and_loopback_urls_are_refused(url: str, named: str) -> None:
    with pytest.raises(FetchRefused, match=r"Refused to fetch .*" + re.escape(named)):
        await SafeFetcher().fetch(url)


async def test_a_name_resolving_to_loopback_is_refused() -> None:
    resolver = resolver_for({"innocent.example": ["93.184.216.34", "127.0.0.1"]})
    transport = httpx.MockTransport(lambda request: pytest.fail("must not connect"))
    fetcher = SafeFetcher(resolver=resolver, transport=transport)
    with pytest.raises(FetchRefused, match=r"innocent\.example \(127\.0\.0\.1\) .*loopback"):
        await fetcher.fetch("http://innocent.example/page")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "Only http and https"),
        ("ftp://example.org/x", "Only http and https"),
        ("gopher://example.org/", "Only http and https"),
        ("http://user:secret@example.org/", "user name or password"),
        ("http:///nohost", "no host"),
    ],
)
async def test_bad_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(FetchRefused, match=message):
        await SafeFetcher().fetch(url)


async def test_connects_to_the_vetted_address_with_host_and_sni() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"content-type": "text/html"}, text=GRANT_PAGE)

    resolver = resolver_for({"grants.example": ["93.184.216.34"]})
    fetcher = SafeFetcher(resolver=resolver, transport=httpx.MockTransport(handler))
    page = await fetcher.fetch("https://grants.example/project/1?x=2")

    [request] = seen
    assert request.url.host == "93.184.216.34"
    assert request.url.path == "/project/1"
    assert request.headers["host"] == "grants.example"
    assert request.extensions["sni_hostname"] == "grants.example"
    assert resolver.calls == ["grants.example"]  # resolved once: nothing to rebind
    assert page.url == "https://grants.example/project/1?x=2"
    assert page.content_type == "text/html"


async def test_every_redirect_is_checked() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "http://metadata.internal/latest"})

    resolver = resolver_for(
        {"grants.example": ["93.184.216.34"], "metadata.internal": ["169.254.169.254"]}
    )
    fetcher = SafeFetcher(resolver=resolver, transport=httpx.MockTransport(handler))
    with pytest.raises(FetchRefused, match=r"metadata\.internal .*cloud metadata"):
        await fetcher.fetch("http://grants.example/")


async def test_redirect_loops_stop() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(301, headers={"location": "/again"})

    resolver = resolver_for({"loop.example": ["93.184.216.34"]})
    fetcher = SafeFetcher(resolver=resolver, transport=httpx.MockTransport(handler))
    with pytest.raises(FetchRefused, match="Too many redirects"):
        await fetcher.fetch("http://loop.example/")


@pytest.mark.parametrize("content_type", ["application/pdf", "image/png", ""])
async def test_other_content_types_are_refused(content_type: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=b"%PDF")

    resolver = resolver_for({"files.example": ["93.184.216.34"]})
    fetcher = SafeFetcher(resolver=resolver, transport=httpx.MockTransport(handler))
    with pytest.raises(FetchRefused, match="only application/xhtml"):
        await fetcher.fetch("http://files.example/x")


async def test_size_cap_applies_to_streamed_bodies() -> None:
    async def chunks():
        for _ in range(100):
            yield b"x" * 1024

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/plain"}, content=chunks())

    resolver = resolver_for({"big.example": ["93.184.216.34"]})
    fetcher = SafeFetcher(
        resolver=resolver, transport=httpx.MockTransport(handler), max_bytes=10_000
    )
    with pytest.raises(FetchRefused, match="larger than the 10,000-byte limit"):
        await fetcher.fetch("http://big.example/")


async def test_timeout_is_a_clear_error() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200)

    resolver = resolver_for({"slow.example": ["93.184.216.34"]})
    fetcher = SafeFetcher(resolver=resolver, transport=httpx.MockTransport(handler), timeout=0.2)
    with pytest.raises(FetchFailed, match=r"longer than 0\.2 s"):
        await fetcher.fetch("http://slow.example/")


class LocalSite(GrantSite):
    """The grant page, and at /start a redirect to this same loopback site; paths are recorded."""

    requested: list[str] = []

    def do_GET(self) -> None:
        LocalSite.requested.append(self.path)
        if self.path == "/start":
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/secret")
            self.end_headers()
            return
        super().do_GET()


@pytest.fixture
def local_site() -> Iterator[int]:
    LocalSite.requested = []
    with serve_locally(LocalSite) as port:
        yield port


async def test_redirect_to_loopback_from_an_allowed_host_is_refused(local_site: int) -> None:
    """The first hop is allowed (allow-listed intranet name); its redirect to 127.0.0.1 is not."""
    resolver = resolver_for({"intranet.example": ["127.0.0.1"]})
    fetcher = SafeFetcher(allow_hosts=["intranet.example"], resolver=resolver)
    with pytest.raises(FetchRefused, match=r"127\.0\.0\.1 is a blocked address \(loopback\)"):
        await fetcher.fetch(f"http://intranet.example:{local_site}/start")
    assert LocalSite.requested == ["/start"]


async def test_allow_listed_host_is_fetched_and_converted(local_site: int) -> None:
    fetcher = SafeFetcher(allow_hosts=["127.0.0.1"])
    page = await fetcher.fetch(f"http://127.0.0.1:{local_site}/grant")
    converted = to_markdown_page(page, default_title="NIH Grant Details")
    assert converted.title == "Fixture Grant: Kinase Inhibitor Networks"
    assert converted.source == f"http://127.0.0.1:{local_site}/grant"
    assert converted.content_type == "text/html"
    assert "| Award | $512,345 |" in converted.markdown


def test_html_to_markdown_keeps_tables_and_drops_active_content() -> None:
    markdown = html_to_markdown(GRANT_PAGE)
    assert "| Field | Value |" in markdown
    assert "| --- | --- |" in markdown
    assert "| Project number | FIXTURE-0001 |" in markdown
    assert "| Principal investigator | Ada Example |" in markdown
    assert "# Fixture Grant: Kinase Inhibitor Networks" in markdown
    assert "## Details" in markdown
    assert "[RePORTER](https://reporter.nih.gov/)" in markdown
    for gone in ("alert", "tracking", "javascript:", "steal", "font-family", "iframe", "ads."):
        assert gone not in markdown


def test_plain_text_pages_are_shown_verbatim_in_a_fence() -> None:
    page = FetchedPage("https://x.example/a.md", 200, "text/markdown", "# Title\n\nBody\n")
    converted = to_markdown_page(page, default_title="NIH Grant Details")
    assert converted.markdown == "```markdown\n# Title\n\nBody\n```\n"
    assert converted.title == "NIH Grant Details"
