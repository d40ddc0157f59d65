"""What the chat orchestrator adds to each tool call, beyond the tool's own time.

One MCP server over stdio (the test server in tests/fixtures/chat, whose `sleep` tool waits the
time it is given, so the tool's own time is known), and the scripted fake chat model (no LLM).

- baseline: the official MCP SDK alone, `ClientSession.call_tool("sleep")` in a loop; per call,
  wall time minus the sleep. This is the floor: JSON-RPC over stdio and the server's dispatch.
- graphwright, per call: one turn through `ChatService` whose model calls `sleep` once per step
  for many steps; per call, the time from one `tool_call` event to the next minus the sleep. That
  is a whole step: the model (the fake), the MCP call, the artifacts collector, the events.
- graphwright, per turn: turns whose model asks for one `sleep` call and then answers, end to
  end (store the user's message, run the loop, store the answer and its tool call); wall time
  minus the sleep. The difference from the per-call figure is a turn's fixed cost.
Target: graphwright's per-call figure under 15 ms p50 on this machine.

Run: .venv/bin/python benchmarks/chat_overhead_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from graphwright.chat.config import StdioServer
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.models import ChatRequest
from graphwright.chat.service import ChatService
from graphwright.db import Database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.chat.fakes import ScriptedChatModel, call, chat_service, reply  # noqa: E402

SERVER = ROOT / "tests" / "fixtures" / "chat" / "flaky_server.py"
SLEEP = 0.005
TARGET_MS = 15.0


def ms(seconds: float) -> float:
    return seconds * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def baseline(calls: int) -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    overheads = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        for index in range(calls):
            started = time.perf_counter()
            await session.call_tool("sleep", {"seconds": SLEEP + index * 1e-9})
            overheads.append(time.perf_counter() - started - SLEEP)
    return overheads


def bench_service(home: Path) -> ChatService:
    database = Database(f"sqlite:///{home / 'bench.db'}")
    manager = McpManager({"bench": StdioServer(command=sys.executable, args=[str(SERVER)])})
    return chat_service(database, manager, api_base_url="http://127.0.0.1:8000", max_steps=10_000)


async def one_call_turns(service: ChatService, turns: int) -> list[float]:
    overheads = []
    for index in range(turns):
        service.model = ScriptedChatModel.with_script(
            [reply("", call("bench__sleep", seconds=SLEEP)), reply(f"done {index}")]
        )
        started = time.perf_counter()
        handle = await service.start_turn(
            ChatRequest(conversation_id=f"turn-{index}", message="go"), actor="bench"
        )
        response = await handle.response()
        overheads.append(time.perf_counter() - started - SLEEP)
        assert response["status"] == "complete" and len(response["toolCalls"]) == 1
    return overheads


async def looping_turn(service: ChatService, steps: int) -> list[float]:
    """Per call: the time from one `tool_call` event to the next, minus the tool's own time."""
    script = [reply("", call("bench__sleep", seconds=SLEEP + i * 1e-9)) for i in range(steps)]
    service.model = ScriptedChatModel.with_script([*script, reply("done")])
    handle = await service.start_turn(ChatRequest(message="loop"), actor="bench")
    stamps = [time.perf_counter() async for event in handle.events() if event.type == "tool_call"]
    response = await handle.response()
    assert len(response["toolCalls"]) == steps, response["stopReason"]
    return [later - earlier - SLEEP for earlier, later in itertools.pairwise(stamps)]


async def main(quick: bool) -> None:
    calls = 30 if quick else 300
    steps = 20 if quick else 200
    base = await baseline(calls)
    with tempfile.TemporaryDirectory() as home:
        service = bench_service(Path(home))
        await service.manager.tools()  # started once, as in a running app
        await one_call_turns(service, 3)  # warm-up: imports, first queries
        turns = await one_call_turns(service, calls)
        loop = await looping_turn(service, steps)
        await service.aclose()
        service.db.dispose()

    print(f"tool's own time per call: {ms(SLEEP):.1f} ms (sleep)")
    print(f"{'':50}{'calls':>7}{'p50 ms':>9}{'p99 ms':>9}")
    rows = [
        ("baseline: MCP SDK call_tool alone, per call", base),
        (f"graphwright: per call, in a {steps}-step turn", loop),
        ("graphwright: one-call turn, end to end (stored)", turns),
    ]
    for label, values in rows:
        p50, p99 = ms(statistics.median(values)), ms(percentile(values, 0.99))
        print(f"{label:50}{len(values):>7}{p50:>9.2f}{p99:>9.2f}")
    base_p50, call_p50 = ms(statistics.median(base)), ms(statistics.median(loop))
    turn_p50 = ms(statistics.median(turns))
    print(f"added by graphwright per tool call beyond the SDK (p50): {call_p50 - base_p50:.2f} ms")
    print(f"ratio graphwright / baseline per call (p50): {call_p50 / base_p50:.1f}x")
    fixed = turn_p50 - call_p50
    print(f"fixed cost of a turn (store the message, answer and tool call; p50): {fixed:.2f} ms")
    verdict = "meets" if call_p50 < TARGET_MS else "MISSES"
    target = f"orchestrator per tool call < {TARGET_MS:.0f} ms p50"
    print(f"target: {target} -> {verdict} ({call_p50:.2f} ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run")
    asyncio.run(main(parser.parse_args().quick))
