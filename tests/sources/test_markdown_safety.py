"""Fetched pages become markdown that is safe to render: checked by rendering it.

The renderer is deliberately permissive (raw HTML on, every link scheme accepted), so these
tests hold for a UI that does no sanitising of its own.
"""

from __future__ import annotations

import html

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from graphwright.sources.webfetch import (
    TITLE_MAX_CHARS,
    FetchedPage,
    html_to_markdown,
    plain_title,
    text_to_markdown,
    to_markdown_page,
    truncate_at_line,
)
from tests.sources.support import GRANT_PAGE

RENDERED_TAGS = {
    "div", "p", "a", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th",
    "td", "code", "pre", "ul", "ol", "li", "blockquote", "em", "strong", "s", "br", "hr",
}  # fmt: skip
SAFE_SCHEMES = ("http://", "https://", "mailto:")


def render(markdown: str) -> lxml.html.HtmlElement:
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    renderer.validateLink = lambda url: True  # a naive UI: no scheme filter of its own
    return lxml.html.fragment_fromstring(renderer.render(markdown), create_parent="div")


def assert_inert(markdown: str) -> lxml.html.HtmlElement:
    """Only formatting elements, no handlers, no inline media, links only to safe schemes."""
    root = render(markdown)
    for element in root.iter():
        assert isinstance(element.tag, str), f"raw HTML comment/PI leaked: {markdown!r}"
        assert element.tag in RENDERED_TAGS, f"<{element.tag}> rendered from {markdown!r}"
        allowed = {"a": {"href"}, "code": {"class"}}.get(element.tag, set())
        assert set(element.attrib) <= allowed, f"{element.attrib} rendered from {markdown!r}"
        if element.tag == "a":
            assert element.get("href", "").startswith(SAFE_SCHEMES), element.get("href")
    return root


def links(root: lxml.html.HtmlElement) -> list[tuple[str, str]]:
    return [(a.text_content(), a.get("href")) for a in root.iter("a")]


def html_page(body: str, title: str = "Grant") -> FetchedPage:
    document = f"<html><head><title>{title}</title></head><body>{body}</body></html>"
    return FetchedPage("https://grants.example/project/7", 200, "text/html", document)


# -- text/markdown and text/plain pages are shown, never rendered ---------------------------------

HOSTILE_TEXT = (
    "<script>alert(1)</script>\n[x](javascript:alert(1))\n<img src=x onerror=alert(1)>\n"
    "![t](http://evil/track.png)\n```\n<script>alert(2)</script>\n````"
)


@pytest.mark.parametrize("content_type", ["text/markdown", "text/plain"])
def test_text_pages_are_fenced_and_render_as_code(content_type: str) -> None:
    page = FetchedPage("https://x.example/a", 200, content_type, HOSTILE_TEXT)
    converted = to_markdown_page(page, default_title="NIH Grant Details")
    root = assert_inert(converted.markdown)
    [block] = root.findall("pre")
    assert block.text_content() == HOSTILE_TEXT + "\n"
    assert converted.markdown.startswith("`````")  # longer than the ```` run in the page
    assert not links(root)
    assert converted.title == "NIH Grant Details"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`~ \n<>[]()!|*_\\&#-abc")), max_size=80))
def test_no_text_can_leave_its_fence(text: str) -> None:
    root = assert_inert(text_to_markdown(text, "text/markdown"))
    [block] = root.findall("pre")
    assert block.text_content() == text.strip("\n") + "\n"


# -- HTML: markdownify must not turn text back into markup ----------------------------------------


def test_escaped_html_in_text_stays_text() -> None:
    markdown = html_to_markdown("<p>&lt;script&gt;alert(3)&lt;/script&gt; &lt;b&gt;x&lt;/b&gt;</p>")
    root = assert_inert(markdown)
    assert root.text_content().strip() == "<script>alert(3)</script> <b>x</b>"


def test_markdown_syntax_in_text_stays_text() -> None:
    text = "[l](javascript:alert(2)) and ![img](http://evil/track.png) <http://x/> *b* _i_ `c`"
    root = assert_inert(html_to_markdown(f"<p>{html.escape(text)}</p>"))
    assert not links(root)
    assert root.find(".//em") is None and root.find(".//code") is None
    assert root.text_content().strip() == text


@pytest.mark.parametrize(
    "href",
    ["javascript:alert(1)", "JaVaScRiPt&#58;alert(1)", " java\tscript:x", "data:text/html,x"],
)
def test_links_to_other_schemes_keep_only_their_text(href: str) -> None:
    root = assert_inert(html_to_markdown(f'<p>See <a href="{href}">this</a>.</p>'))
    assert not links(root)
    assert root.text_content().strip() == "See this."


def test_an_href_cannot_break_out_of_its_link() -> None:
    body = '<a href="http://a/)[y](javascript:alert(4)">br</a> <a href="http://x/ &quot;t=1">q</a>'
    root = assert_inert(html_to_markdown(f"<p>{body}</p>"))
    assert links(root) == [
        ("br", "http://a/%29%5By%5D%28javascript:alert%284%29"),
        ("q", "http://x/%20%22t=1"),
    ]


def test_ordinary_links_still_work() -> None:
    body = (
        '<a href="https://reporter.nih.gov/project-details/123?x=1&amp;y=2">RePORTER</a> '
        '<a href="mailto:grants@nih.gov">mail</a> <a href="/about">About</a> '
        '<a href="https://x.example/" title="&quot;) [z](javascript:1)">t</a>'
    )
    root = assert_inert(to_markdown_page(html_page(f"<p>{body}</p>"), default_title="d").markdown)
    assert links(root) == [
        ("RePORTER", "https://reporter.nih.gov/project-details/123?x=1&y=2"),
        ("mail", "mailto:grants@nih.gov"),
        ("About", "https://grants.example/about"),  # relative links resolve against the page
        ("t", "https://x.example/"),  # link titles are dropped
    ]


def test_relative_links_without_a_base_are_dropped() -> None:
    root = assert_inert(html_to_markdown('<p><a href="/about">About</a></p>'))
    assert not links(root)


def test_images_become_links_not_inline_images() -> None:
    body = (
        '<p><img src="https://cdn.example/logo.png" alt="NIH [logo]"> '
        '<img src="http://evil/track.png"> <img src="javascript:alert(1)" alt="js"> '
        '<img src="data:image/png;base64,AAAA" alt="inline"> <img src=x onerror=alert(1)> '
        '<a href="https://nih.gov/"><img src="https://cdn.example/b.png" alt="banner"></a></p>'
    )
    root = assert_inert(to_markdown_page(html_page(body), default_title="d").markdown)
    assert root.find(".//img") is None
    assert links(root) == [
        ("Image: NIH [logo]", "https://cdn.example/logo.png"),
        ("Image", "http://evil/track.png"),
        ("Image", "https://grants.example/project/x"),
        ("banner", "https://nih.gov/"),  # no image link nested inside a link
    ]
    assert "js" in root.text_content() and "inline" in root.text_content()


def test_code_cannot_break_out_of_its_span_or_fence() -> None:
    body = (
        "<p><code>x\n&lt;script&gt;alert(5)&lt;/script&gt;</code></p>"
        "<pre>a\n```\n&lt;script&gt;alert(6)&lt;/script&gt;\n</pre>"
        "<p><kbd>k\n&lt;iframe src=x&gt;</kbd></p>"
    )
    root = assert_inert(html_to_markdown(body))
    codes = [code.text_content() for code in root.iter("code")]
    assert codes == [
        "x <script>alert(5)</script>",
        "a\n```\n<script>alert(6)</script>\n",
        "k <iframe src=x>",
    ]


def test_active_elements_are_removed() -> None:
    body = (
        "<svg onload=alert(1)></svg><iframe src=javascript:alert(1)></iframe>"
        "<style>x</style><script>alert(1)</script><p onclick=alert(1)>kept</p>"
    )
    root = assert_inert(html_to_markdown(body))
    assert root.text_content().strip() == "kept"


# -- tables ---------------------------------------------------------------------------------------


def table_rows(root: lxml.html.HtmlElement) -> list[list[str]]:
    [table] = root.findall("table")
    return [[cell.text_content() for cell in row] for row in table.iter("tr")]


def test_tables_survive() -> None:
    root = assert_inert(to_markdown_page(html_page(GRANT_PAGE), default_title="d").markdown)
    assert table_rows(root) == [
        ["Field", "Value"],
        ["Project number", "FIXTURE-0001"],
        ["Principal investigator", "Ada Example"],
        ["Award", "$512,345"],
    ]
    assert ("RePORTER", "https://reporter.nih.gov/") in links(root)


def test_pipes_and_markup_inside_cells_stay_in_their_cell() -> None:
    body = (
        "<table><tr><th>a|b</th><th>c</th></tr>"
        "<tr><td>&lt;b onmouseover=1&gt;</td><td><code>x|y</code></td></tr>"
        '<tr><td><a href="https://x.example/a|b">l|m</a></td><td>\\|<pre>p|&lt;i&gt;</pre></td></tr>'
        "</table>"
    )
    root = assert_inert(html_to_markdown(body))
    assert table_rows(root) == [
        ["a|b", "c"],
        ["<b onmouseover=1>", "x|y"],
        ["l|m", "\\|  p|<i>"],
    ]
    assert links(root) == [("l|m", "https://x.example/a%7Cb")]


# -- titles ---------------------------------------------------------------------------------------


def test_title_is_plain_escaped_text() -> None:
    page = html_page("<p>x</p>", title="T<script>x</script> [a](javascript:1) *b* _c_ `d`")
    converted = to_markdown_page(page, default_title="d")
    assert converted.title == r"T\<script\>x\</script\> \[a\](javascript:1) \*b\* \_c\_ \`d\`"
    root = assert_inert(f"# {converted.title}\n")
    assert root.find("h1").text_content() == "T<script>x</script> [a](javascript:1) *b* _c_ `d`"


def test_title_whitespace_is_collapsed_and_length_capped() -> None:
    assert plain_title("  Kinase\n\t grant\x00 \u2028 2026  ") == "Kinase grant 2026"
    long = plain_title("word " * 100)
    assert len(long) == TITLE_MAX_CHARS and long.endswith("…")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>[]()!`*_\\&|=-+ \n\tab1.:/")), max_size=60))
def test_any_title_renders_as_plain_heading_text(text: str) -> None:
    root = assert_inert(f"# {plain_title(text)}\n")
    [heading] = root
    assert heading.tag == "h1" and len(heading) == 0
    assert heading.text_content() == " ".join(text.split())


# -- everything at once ---------------------------------------------------------------------------

FRAGMENTS = [
    "<script>", "</script>", "javascript:", "alert(1)", "[", "](", ")", "![", "`", "```", "|",
    "\\", "\n", "\n\n", " ", "    ", "&lt;", "&amp;", "<", ">", "onerror=", '"', "'", "x", "*",
    "_", "#", "- ", "1. ", "= ", "~~", "http://a/", "mailto:", "\u2028", "\r", "\t", "<http://b>",
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join), st.integers(0, 2000))
def test_no_text_or_url_becomes_active_markup(text: str, cut: int) -> None:
    t, a = html.escape(text, quote=False), html.escape(text, quote=True)
    body = (
        f"<h2>{t}</h2><p>{t}</p><ul><li>{t}</li></ul><blockquote>{t}</blockquote>"
        f'<p><a href="{a}">{t}</a> <a href="http://a/{a}">l</a> <img src="https://i/{a}" alt="{a}">'
        f"<code>{t}</code></p><pre>{t}</pre>"
        f"<table><tr><th>{t}</th><th>h</th></tr><tr><td><code>{t}</code></td><td>{t}</td></tr></table>"
    )
    markdown = to_markdown_page(html_page(body, title=t), default_title="d").markdown
    for row in table_rows(assert_inert(markdown)):
        assert len(row) == 2
    assert_inert(truncate_at_line(markdown, cut))  # the preview the model gets is cut too


def test_truncation_never_leaves_a_code_span_open() -> None:
    html_text = "<p>intro</p><p>a <code>&lt;img src=x onerror=alert(1)&gt; b</code></p>"
    markdown = html_to_markdown(html_text)
    limit = markdown.index("> b") + 1
    assert render(markdown[:limit]).find(".//img") is not None  # what a plain cut would do
    assert truncate_at_line(markdown, limit) == "intro\n"
    assert truncate_at_line(markdown, len(markdown)) == markdown
