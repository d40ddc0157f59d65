"""What A2A adds to a chat turn, and 50 concurrent streaming tasks checked chunk by chunk.

A live graphwright (uvicorn, tasks in a2a-sdk's DatabaseTaskStore on SQLite by default, or the
`--database-url` given) and a2a-sdk's own client, in one process.

- overhead per turn: the same turn (`/flaky.echo hello`: one MCP tool call over stdio, the turn
  stored) run four ways, round robin, each in a fresh conversation: the chat service in process
  (the turn itself: the baseline), `POST /api/chat` with stream=false, A2A `SendMessage`
  (blocking) and A2A `SendStreamingMessage` to its final event. A2A's overhead is its p50 minus
  the baseline's.
  Target: under 20 ms p50.
- concurrency: 50 `SendStreamingMessage` tasks at once, answered by a fake model that echoes the
  message word by word, with one chunk per token (`CHUNK_SECONDS = 0`). Every task's answer
  chunks must arrive whole and in order (first creates, the rest append, only the last has
  `lastChunk`), carry only that task's text, and match what GetTask returns afterwards.

Run: .venv/bin/python benchmarks/a2a_bench.py [--quick] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import uvicorn
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from graphwright.a2a import executor as a2a_executor
from graphwright.app import create_app
from graphwright.chat.models import ChatRequest
from graphwright.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
FLAKY = ROOT / "tests" / "fixtures" / "chat" / "flaky_server.py"
TURN = "/flaky.echo hello"
TARGET_MS = 20.0
CONCURRENT = 50
WORDS = 40


class EchoChatModel(BaseChatModel):
    """A fake model that answers with the user's message, streamed one token at a time."""

    @property
    def _llm_type(self) -> str:
        return "echo"

    def bind_tools(self, tools: Any, **kwargs: Any) -> EchoChatModel:
        return self

    def _tokens(self, messages: list[BaseMessage]) -> Iterator[str]:
        text = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
        for index, word in enumerate(text.split(" ")):
            yield word if index == 0 else f" {word}"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        content = "".join(self._tokens(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=content))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for token in self._tokens(messages):
            yield ChatGenerationChunk(message=AIMessageChunk(content=token))
            await asyncio.sleep(0)


def ms(seconds: float) -> float:
    return seconds * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def request(text: str, *, context_id: str | None = None) -> SendMessageRequest:
    message = Message(
        role=Role.ROLE_USER,
        message_id=uuid.uuid4().hex,
        context_id=context_id or str(uuid.uuid4()),
        parts=[Part(text=text)],
    )
    return SendMessageRequest(message=message)


async def timed(runs: int, turn: Any) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await turn()
        times.append(time.perf_counter() - started)
    return times


async def overhead(app: Any, base: str, token: str, runs: int) -> dict[str, list[float]]:
    service = app.state.chat_service
    headers = {"Authorization": f"Bearer {token}"}
    http = httpx.AsyncClient(base_url=base, headers=headers, timeout=120)
    blocking = await client(base, token, streaming=False)
    streaming = await client(base, token, streaming=True)

    async def in_process() -> None:
        handle = await service.start_turn(ChatRequest(message=TURN), actor="bench")
        assert (await handle.response())["status"] == "complete"

    async def rest() -> None:
        response = await http.post("/api/chat", json={"message": TURN, "stream": False})
        assert response.json()["data"]["status"] == "complete"

    async def a2a_blocking() -> None:
        [event] = [e async for e in blocking.send_message(request(TURN))]
        assert event.task.status.state == TaskState.TASK_STATE_COMPLETED

    async def a2a_streaming() -> None:
        events = [e async for e in streaming.send_message(request(TURN))]
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED

    ways = {
        "chat turn in process (baseline)": in_process,
        "POST /api/chat, stream=false": rest,
        "A2A SendMessage (blocking)": a2a_blocking,
        "A2A SendStreamingMessage": a2a_streaming,
    }
    for turn in ways.values():  # warm-up: MCP servers, first queries, imports
        await timed(3, turn)
    # Round robin, so that a change in the machine's load falls on every way alike.
    results: dict[str, list[float]] = {label: [] for label in ways}
    for _ in range(runs):
        for label, turn in ways.items():
            results[label] += await timed(1, turn)
    await http.aclose()
    await blocking.close()
    await streaming.close()
    return results


async def client(base: str, token: str, *, streaming: bool) -> Client:
    http = httpx.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(300, connect=60)
    )
    return await ClientFactory(
        ClientConfig(streaming=streaming, httpx_client=http)
    ).create_from_url(base)


async def one_stream(streaming: Client, index: int) -> tuple[str, str, list[Any]]:
    text = " ".join(f"t{index}w{word}" for word in range(WORDS))
    events = [event async for event in streaming.send_message(request(text))]
    return text, events[0].task.id, events


def check_stream(text: str, task_id: str, events: list[Any]) -> list[str]:
    """What is wrong with one task's stream (nothing: an empty list)."""
    problems = []
    chunks = [
        e.artifact_update
        for e in events
        if e.HasField("artifact_update")
        and e.artifact_update.artifact.artifact_id.endswith("answer")
    ]
    if any(chunk.task_id != task_id for chunk in chunks):
        problems.append("a chunk of another task")
    if [c.append for c in chunks] != [False] + [True] * (len(chunks) - 1):
        problems.append("append flags out of order")
    if [c.last_chunk for c in chunks] != [False] * (len(chunks) - 1) + [True]:
        problems.append("lastChunk not on the last chunk alone")
    streamed = "".join(part.text for c in chunks for part in c.artifact.parts)
    if streamed != text:
        problems.append("chunks lost or reordered")
    if events[-1].status_update.status.state != TaskState.TASK_STATE_COMPLETED:
        problems.append("did not complete")
    return problems


async def concurrency(app: Any, base: str, token: str) -> tuple[float, int, int, list[str]]:
    app.state.chat_service.model = EchoChatModel()
    a2a_executor.CHUNK_SECONDS = 0.0  # one chunk per token: the hardest case for ordering
    streaming = await client(base, token, streaming=True)
    blocking = await client(base, token, streaming=False)
    started = time.perf_counter()
    results = await asyncio.gather(*(one_stream(streaming, i) for i in range(CONCURRENT)))
    seconds = time.perf_counter() - started
    problems: list[str] = []
    chunks = 0
    for expected, task_id, events in results:
        found = check_stream(expected, task_id, events)
        stored = await blocking.get_task(GetTaskRequest(id=task_id))
        answer = next(a for a in stored.artifacts if a.artifact_id.endswith("answer"))
        if "".join(part.text for part in answer.parts) != expected:
            found.append("stored answer differs from the stream")
        chunks += len(answer.parts)
        problems += [f"task {task_id}: {problem}" for problem in found]
    await streaming.close()
    await blocking.close()
    return seconds, chunks, len(results), problems


@contextmanager
def own_schema(database_url: str | None) -> Iterator[str | None]:
    """On PostgreSQL, a schema of its own, dropped afterwards: the run never migrates a schema
    that others use."""
    if database_url is None or make_url(database_url).get_backend_name() != "postgresql":
        yield database_url
        return
    schema = f"a2a_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in database_url else "?"
    try:
        yield f"{database_url}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


async def main(quick: bool, database_url: str | None) -> None:
    with own_schema(database_url) as url:
        await run(quick, url)


async def run(quick: bool, database_url: str | None) -> None:
    runs = 20 if quick else 100
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory)
        servers = {
            "flaky": {"command": sys.executable, "args": [str(FLAKY)]},
            "grants": {"disabled": True},
        }
        (home / "mcp_servers.json").write_text(json.dumps({"mcpServers": servers}))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        settings = Settings(
            home=home, offline=True, api_url=base, port=port, database_url=database_url
        )
        app = create_app(settings)
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.02)
        token = app.state.auth_service.mint(label="a2a bench")
        try:
            results = await overhead(app, base, token, runs)
            seconds, chunks, tasks, problems = await concurrency(app, base, token)
        finally:
            server.should_exit = True
            await serving

    backend = "PostgreSQL" if database_url else "SQLite"
    print(f"turn: {TURN!r}, fresh conversation each time; tasks on {backend}")
    print(f"{'':40}{'turns':>7}{'p50 ms':>9}{'p99 ms':>9}")
    for label, values in results.items():
        p50, p99 = ms(statistics.median(values)), ms(percentile(values, 0.99))
        print(f"{label:40}{len(values):>7}{p50:>9.2f}{p99:>9.2f}")
    medians = {label: ms(statistics.median(values)) for label, values in results.items()}
    base_p50, rest_p50, a2a_p50, stream_p50 = medians.values()
    print(
        f"A2A overhead per turn beyond the chat turn (p50): {a2a_p50 - base_p50:.2f} ms "
        f"(streaming: {stream_p50 - base_p50:.2f} ms; over POST /api/chat: "
        f"{a2a_p50 - rest_p50:.2f} ms)"
    )
    print(f"ratio A2A / chat turn (p50): {a2a_p50 / base_p50:.2f}x")
    verdict = "meets" if a2a_p50 - base_p50 < TARGET_MS else "MISSES"
    print(f"target: A2A overhead < {TARGET_MS:.0f} ms p50 -> {verdict}")
    print(
        f"{tasks} concurrent streaming tasks: {chunks} answer chunks in {seconds:.2f} s; "
        f"lost or reordered: {len(problems)}"
    )
    for problem in problems[:10]:
        print(f"  {problem}")
    if problems:
        raise SystemExit(1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run")
    parser.add_argument("--database-url", help="SQLAlchemy URL (default: SQLite in a temp dir)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.quick, arguments.database_url))
