"""Pieces every page uses: the frame, the signed-in caller, and service calls off the event loop
whose errors become readable notifications (never a stack trace)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

import nh3
from nicegui import app, ui
from nicegui.element import Element
from pydantic import ValidationError

from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.errors import GraphwrightError, problems
from graphwright.web.context import WebContext

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")
E = TypeVar("E", bound=Element)

SIGN_IN = "/signin"
# NiceGUI's blue and Quasar's green and cyan carry white text at under 3.1:1; these darker
# ones reach WCAG AA (4.5:1), as does the colour of links on white.
PRIMARY = "#1d4ed8"
POSITIVE = "#15803d"
INFO = "#0369a1"
MODE_NAMES = {"normal": "Normal", "graph_mode": "Graph Mode"}
# Tool results are markdown with headings: keep them at reading size inside messages.
PAGE_CSS = """
.nicegui-link { color: #1d4ed8; }
.nicegui-markdown h1 { font-size: 1.25rem; line-height: 1.6rem; margin: 0.4rem 0; }
.nicegui-markdown h2 { font-size: 1.1rem; line-height: 1.4rem; margin: 0.4rem 0; }
.nicegui-markdown h3, .nicegui-markdown h4 { font-size: 1rem; margin: 0.3rem 0; }
.nicegui-markdown table { border-collapse: collapse; }
.nicegui-markdown th, .nicegui-markdown td { border: 1px solid #d1d5db; padding: 2px 6px; }
"""


class ActionFailed(Exception):
    """A service refused an action; the person has been told why."""


async def io(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a service call in a thread; a refusal is shown as a notification and re-raised as
    ActionFailed, so the handler that called it stops there."""
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except GraphwrightError as exc:
        notify_error(str(exc))
        raise ActionFailed(str(exc)) from exc


async def call(pending: Awaitable[T]) -> T:
    """Await an async service call; a refusal is shown and re-raised as ActionFailed (as `io`)."""
    try:
        return await pending
    except GraphwrightError as exc:
        notify_error(str(exc))
        raise ActionFailed(str(exc)) from exc


def notify_error(message: str) -> None:
    ui.notify(message, type="negative", multi_line=True, close_button="Close", timeout=8000)


def guarded(handler: Callable[P, Awaitable[Any]]) -> Callable[P, Awaitable[None]]:
    """An event handler whose failures end as a notification, not a traceback in the page."""

    @functools.wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            await handler(*args, **kwargs)
        except ActionFailed:
            return
        except GraphwrightError as exc:
            notify_error(str(exc))
        except ValidationError as exc:  # what was typed breaks a rule of a service's input
            notify_error(invalid_input(exc))
        except Exception as exc:
            log.exception("A page action failed")
            notify_error(f"Something went wrong: {type(exc).__name__}. The server log has details.")

    return run


def invalid_input(exc: ValidationError) -> str:
    """What is wrong with the input, as the REST API says it (`title: String should...`)."""
    return "; ".join(problems(exc.errors(include_url=False))[:5])


def browser_id() -> str | None:
    return app.storage.browser.get("id")


def signed_in(context: WebContext) -> Principal | None:
    return context.sessions.principal(browser_id())


def allowed(principal: Principal, conversation_id: str) -> bool:
    try:
        AuthService.authorize(principal, conversation_id)
    except GraphwrightError:
        return False
    return True


def safe_html(html: str) -> str:
    """Markdown output with scripts, handlers and unknown tags removed; links open safely."""
    return nh3.clean(html, link_rel="noopener noreferrer nofollow")


def markdown(text: str) -> ui.markdown:
    return ui.markdown(text, sanitize=safe_html)


def frame(context: WebContext, principal: Principal, title: str) -> None:
    """The header of every signed-in page: where you are, the way home and sign-out."""
    ui.page_title(f"{title} · graphwright")
    ui.colors(primary=PRIMARY, positive=POSITIVE, info=INFO)
    ui.add_css(PAGE_CSS)
    with ui.header().classes("items-center gap-4 bg-slate-800 text-white px-4 py-2"):
        ui.link("graphwright", "/").classes("text-lg font-bold text-white no-underline")
        named(ui.label(title).classes("text-base truncate"), "page-title")
        ui.space()
        ui.link("Knowledge base", "/kb").classes("text-sm text-white").mark("nav-kb").props(
            'data-testid="nav-kb"'
        )
        ui.link("Knowledge miner", "/miner").classes("text-sm text-white").props(
            'data-testid="miner-nav"'
        )
        ui.label(f"Signed in as {principal.shown_as}").classes("text-sm")

        @guarded
        async def sign_out() -> None:
            identity = browser_id()
            if identity is not None:
                context.sessions.sign_out(identity)
            ui.navigate.to(SIGN_IN)

        ui.button("Sign out", on_click=sign_out).props("flat color=white").classes(
            "text-white"
        ).mark("sign-out").props('data-testid="sign-out"')


def named(element: E, name: str) -> E:
    """A marker for NiceGUI's simulated user and a data-testid for the browser."""
    return element.mark(name).props(f'data-testid="{name}"')


def choice(options: Any, label: str, name: str, **kwargs: Any) -> ui.select:
    """A named drop-down whose label screen readers read out too."""
    return named(ui.select(options, label=label, **kwargs).props(f'aria-label="{label}"'), name)


def whole_number(label: str, name: str) -> ui.number:
    """A named field for a count or a version: a whole number from 0."""
    return named(ui.number(label, min=0, precision=0), name)


def model_banner(context: WebContext, notice: str) -> None:
    """Shown while no language model answers: what is missing, how to set it (the chat
    service's one line), and that slash commands work meanwhile. Compact, and a person who has
    read it can close it for the rest of this browser's session."""
    browser = browser_id()
    if context.sessions.banner_dismissed(browser):
        return
    with named(
        ui.row().classes(
            "w-full bg-amber-100 text-amber-950 px-3 py-1 rounded items-center no-wrap gap-2"
        ),
        "model-banner-row",
    ) as row:
        ui.icon("info").props('aria-hidden="true"')
        ui.label(notice).classes("grow text-sm leading-tight").mark("model-banner").props(
            'data-testid="model-banner"'
        )

        def dismiss() -> None:
            context.sessions.dismiss_banner(browser)
            row.delete()

        named(
            ui.button(icon="close", on_click=dismiss).props(
                'flat dense round size=sm aria-label="Dismiss this notice"'
            ),
            "dismiss-banner",
        )


def code(text: str, language: str | None = "python") -> ui.code:
    """`ui.code` whose copy button has a name screen readers read out (NiceGUI gives it none)."""
    block = ui.code(text, language=language)
    button = getattr(block, "copy_button", None)
    if button is not None:
        button.props('aria-label="Copy to the clipboard"')
    return block
