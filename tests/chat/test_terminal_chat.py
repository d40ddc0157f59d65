"""`graphwright chat`: the terminal chat streams a turn from a live server, runs slash commands
without a model, and keeps one conversation across lines."""

from __future__ import annotations

import asyncio
import os
import pty
import selectors
import signal
import sys
import time

import pytest
from typer.testing import CliRunner

from graphwright.chat.slash import slash_words
from graphwright.cli import app
from tests.chat.conftest import Live
from tests.chat.fakes import ScriptedChatModel
from tests.conftest import free_port

ON_THE_LIVE_SERVER = pytest.mark.asyncio(loop_scope="module")


async def _chat(live: Live, *args: str, lines: str = "") -> str:
    url = str(live.client.base_url)
    outcome = await asyncio.to_thread(
        CliRunner().invoke,
        app,
        ["chat", "--url", url, "--token", live.token, *args],
        input=lines,
        terminal_width=200,
    )
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


@ON_THE_LIVE_SERVER
async def test_a_message_streams_the_models_answer(live: Live) -> None:
    live.service.model = ScriptedChatModel.with_script(["TP53 binds MDM2, as far as I know."])
    output = await _chat(live, "--conversation", "term-1", "How are TP53 and MDM2 related?")
    assert "TP53 binds MDM2, as far as I know." in output
    conversation = await live.client.get("/api/conversations/term-1")
    messages = conversation.json()["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


@ON_THE_LIVE_SERVER
async def test_lines_continue_one_conversation_and_slash_commands_work_without_a_model(
    live: Live,
) -> None:
    live.service.model = None
    output = await _chat(live, "--conversation", "term-2", lines="/help\n/quit\n")
    assert "Tools you can call" in output
    assert "/graph.addNode" in output or "/kg." in output
    conversation = await live.client.get("/api/conversations/term-2")
    assert conversation.status_code == 200


def test_slash_completion_offers_the_tools_an_answer_named() -> None:
    words = slash_words("- `/kg.queryNeighbors ENTITY`: neighbours\n- `/graph.undo`")
    assert words == {"/kg.queryNeighbors", "/graph.undo"}


PROMPT_READY = "\x1b[?2004h"


class Terminal:
    """A process on a pseudo-terminal, as a person at a keyboard meets it: what it writes is
    read as it comes, and keys are typed one by one."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the terminal is its stdin, stdout and stderr
            os.execve(argv[0], argv, env)
        self.seen = b""

    def expect(self, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.text}")
            # poll, not select: a test process may hold more than 1,024 descriptors
            with selectors.PollSelector() as selector:
                selector.register(self.fd, selectors.EVENT_READ)
                ready = selector.select(min(left, 0.5))
            if ready:
                try:
                    self.seen += os.read(self.fd, 65536)
                except OSError:  # the process ended
                    raise AssertionError(f"ended before {text!r}:\n{self.text}") from None

    def type(self, keys: str) -> None:
        for key in keys:
            os.write(self.fd, key.encode())
            time.sleep(0.05)

    @property
    def text(self) -> str:
        return self.seen.decode(errors="replace")

    def close(self) -> None:
        os.kill(self.pid, signal.SIGTERM)
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def _terminal_chat(live: Live, conversation: str) -> Terminal:
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "40",
           "PROMPT_TOOLKIT_NO_CPR": "1"}  # fmt: skip
    argv = [sys.executable, "-m", "graphwright", "chat", "--url", str(live.client.base_url),
            "--token", live.token, "--conversation", conversation]  # fmt: skip
    return Terminal(argv, env)


def _tab_completes_after_help(live: Live) -> str:
    terminal = _terminal_chat(live, "term-tab")
    try:
        terminal.expect("ends.")
        terminal.type("/help\r")
        terminal.expect("Tools you can call")
        terminal.seen = b""
        # The next prompt turns bracketed paste on again: the answer is done and its tool names
        # are in the completer's words (a pause in the output under load proves nothing).
        terminal.expect(PROMPT_READY)
        terminal.seen = b""
        terminal.type("/kg.queryNei\t")
        terminal.expect("queryNeighbors")
        terminal.type(" TP53\r")
        terminal.expect("TP53", timeout=120)
        terminal.type("/quit\r")
        return terminal.text
    finally:
        terminal.close()


@ON_THE_LIVE_SERVER
async def test_tab_completes_tool_names_once_help_has_named_them(live: Live) -> None:
    live.service.model = None
    await asyncio.to_thread(_tab_completes_after_help, live)
    for _ in range(200):
        conversation = (await live.client.get("/api/conversations/term-tab")).json()["data"]
        said = [m["content"] for m in conversation["messages"] if m["role"] == "user"]
        if len(said) == 2:
            break
        await asyncio.sleep(0.1)
    assert said == ["/help", "/kg.queryNeighbors TP53"]


def test_a_connection_error_names_the_url_it_tried() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    outcome = CliRunner().invoke(app, ["chat", "--url", url, "--token", "gw_x", "hello"])
    assert outcome.exit_code == 2
    assert f"cannot reach the graphwright server at {url}" in outcome.output
