"""The sign-in page: paste a token; it is checked and kept server-side for this browser."""

from __future__ import annotations

from nicegui import ui
from starlette.responses import RedirectResponse

from graphwright.errors import GraphwrightError
from graphwright.web.common import SIGN_IN, browser_id, guarded, signed_in
from graphwright.web.context import WebContext


def register(context: WebContext) -> None:
    @ui.page(SIGN_IN, title="Sign in · graphwright")
    def sign_in_page() -> RedirectResponse | None:
        if signed_in(context) is not None:
            return RedirectResponse("/")
        with ui.card().classes("absolute-center w-[28rem] max-w-full"):
            ui.label("Sign in to graphwright").classes("text-xl font-bold")
            ui.markdown(
                "Paste an API token. Make one on the server with `graphwright token create`."
            )
            token = (
                ui.input("Token", password=True, password_toggle_button=True)
                .props('autocomplete=off aria-label="API token" autofocus')
                .classes("w-full")
                .mark("token")
                .props('data-testid="token"')
            )
            problem = (
                ui.label()
                .classes("text-red-800")
                .mark("sign-in-error")
                .props('data-testid="sign-in-error"')
            )

            @guarded
            async def submit() -> None:
                identity = browser_id()
                if not token.value or not token.value.strip():
                    problem.text = "Paste a token first."
                    return
                if identity is None:
                    problem.text = "This browser sent no session cookie; allow cookies and reload."
                    return
                try:
                    context.sessions.sign_in(identity, token.value)
                except GraphwrightError as exc:
                    problem.text = str(exc)
                    return
                token.value = ""
                ui.navigate.to("/")

            token.on("keydown.enter", submit)
            ui.button("Sign in", on_click=submit).props("color=primary").mark("sign-in").props(
                'data-testid="sign-in"'
            )
        return None
