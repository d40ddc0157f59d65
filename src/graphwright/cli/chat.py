"""`graphwright chat`: a terminal chat with a running graphwright server, for people who live in a
shell.

A thin adapter over the chat API (`POST /api/chat`, an SSE stream of the chat service's events):
the answer streams in as it is written, tool calls and artifacts show as they happen, and slash
commands (`/help` lists them) complete with Tab once the chat has named them. Every line goes to
one conversation, so follow-ups continue it.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import orjson
import typer
from rich.markup import escape

from graphwright.chat.slash import HELP, slash_words
from graphwright.cli.common import console, fail
from graphwright.settings import get_settings

QUIT = {"/quit", "/exit"}
CLIENT_COMMANDS = {f"/{HELP}", *QUIT}


def chat(
    message: Annotated[
        str | None,
        typer.Argument(help="One message to send; without it, a prompt reads line after line."),
    ] = None,
    conversation: Annotated[
        str | None,
        typer.Option("--conversation", "-c", help="Continue this conversation (default: new)."),
    ] = None,
    graph_mode: Annotated[
        bool, typer.Option("--graph-mode", help="Chat in Graph Mode (graph tools only).")
    ] = False,
    url: Annotated[
        str | None,
        typer.Option("--url", help="The server (default: GRAPHWRIGHT_API_URL, else this host's)."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option("--token", help="A token (default: GRAPHWRIGHT_TOKEN).", show_default=False),
    ] = None,
) -> None:
    """Chat with a running graphwright server in the terminal (/quit ends it)."""
    settings = get_settings()
    bearer = token or (settings.token.get_secret_value() if settings.token else None)
    if not bearer:
        raise fail("no token: pass --token or set GRAPHWRIGHT_TOKEN (graphwright token create)")
    base = url or settings.api_base_url
    session = ChatSession(base, bearer, conversation or str(uuid.uuid4()), graph_mode)
    with session:
        if message is not None:
            session.send(message)
            return
        console.print(
            f"[dim]Conversation {escape(session.conversation_id)} on {escape(base)}; "
            "/help lists the tools, /quit ends.[/]"
        )
        for line in _lines(session.words):
            if line.strip() in QUIT:
                return
            if line.strip():
                session.send(line)


class ChatSession:
    """One conversation over the chat API; `send` prints a turn as its events arrive."""

    def __init__(self, url: str, token: str, conversation_id: str, graph_mode: bool) -> None:
        self.conversation_id = conversation_id
        self.mode = "graph_mode" if graph_mode else None
        self.words = set(CLIENT_COMMANDS)
        self._http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=None
        )

    def __enter__(self) -> ChatSession:
        return self

    def __exit__(self, *_: object) -> None:
        self._http.close()

    def send(self, message: str) -> None:
        body: dict[str, Any] = {"conversationId": self.conversation_id, "message": message}
        if self.mode:
            body["mode"] = self.mode
        try:
            for kind, data in self._events(body):
                self._show(kind, data)
        except httpx.HTTPError as exc:
            raise fail(
                f"cannot reach the graphwright server at {self._http.base_url}: {exc}"
            ) from None

    def _events(self, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        with self._http.stream("POST", "/api/chat", json=body) as response:
            if response.status_code != 200:
                raise fail(_error_text(response))
            kind = None
            for line in response.iter_lines():
                if line.startswith("event:"):
                    kind = line.removeprefix("event:").strip()
                elif line.startswith("data:") and kind is not None:
                    yield kind, orjson.loads(line.removeprefix("data:").strip())
                    kind = None

    def _show(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "token":
            console.print(escape(data.get("text", "")), end="", highlight=False, soft_wrap=True)
        elif kind == "tool_call":
            console.print(f"\n[dim]→ {escape(str(data.get('tool')))}[/]", highlight=False)
        elif kind == "artifact":
            title = data.get("title") or data.get("type") or "artifact"
            console.print(f"[cyan]▣ {escape(str(title))}[/]", highlight=False)
        elif kind == "error":
            console.print(f"\n[red]{escape(str(data.get('message')))}[/]", highlight=False)
        elif kind == "done":
            # In place: the prompt's completer holds this very set.
            self.words.update(slash_words(str(data.get("content", ""))))
            console.print()
            if data.get("status") != "complete":
                console.print(f"[yellow]({escape(str(data.get('status')))})[/]")


def _lines(words: set[str]) -> Iterator[str]:
    """Lines typed at a prompt with slash completion; plain lines when stdin is not a terminal."""
    if not sys.stdin.isatty():
        yield from (line.rstrip("\n") for line in sys.stdin)
        return
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import Completer, Completion

    class SlashCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterator[Completion]:
            word = document.get_word_before_cursor(WORD=True)
            if word.startswith("/"):
                for candidate in sorted(words):
                    if candidate.startswith(word):
                        yield Completion(candidate, start_position=-len(word))

    prompt: PromptSession[str] = PromptSession(completer=SlashCompleter())
    while True:
        try:
            yield prompt.prompt("> ")
        except (EOFError, KeyboardInterrupt):
            return


def _error_text(response: httpx.Response) -> str:
    response.read()
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code}: {response.text[:200]}"
