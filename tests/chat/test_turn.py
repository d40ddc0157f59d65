"""The turn loop against a real MCP server over stdio (a tiny test server) and a scripted model."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
from langchain_core.messages import ToolMessage

from graphwright.artifacts.turn import TurnArtifacts
from graphwright.chat import tool_results
from graphwright.chat.config import StdioServer
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.models import Mode
from graphwright.chat.turn import Turn, TurnContext
from tests.chat.fakes import ScriptedChatModel, SlowSettling, call, reply

FLAKY = Path(__file__).parents[1] / "fixtures" / "chat" / "flaky_server.py"


def flaky(timeout: float = 10) -> StdioServer:
    return StdioServer(command=sys.executable, args=[str(FLAKY)], timeout=timeout)


# One set of server processes for the module: starting Python MCP servers is the slow part.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def manager() -> AsyncIterator[McpManager]:
    manager = McpManager({"flaky": flaky(timeout=1.5), "steady": flaky(), "graph": flaky()})
    yield manager
    await manager.aclose()


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        self.events.append((kind, data))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [data for event, data in self.events if event == kind]


async def run_turn(
    manager: McpManager,
    script: list[Any],
    *,
    message: str = "hello",
    mode: Mode = Mode.NORMAL,
    max_steps: int = 8,
    database_context: dict[str, Any] | None = None,
) -> tuple[Turn, Recorder, ScriptedChatModel]:
    model = ScriptedChatModel.with_script(script)
    recorder = Recorder()
    context = TurnContext(
        "c1",
        mode,
        message,
        artifacts=None if mode is Mode.GRAPH else TurnArtifacts(),
        database_context=database_context,
        max_steps=max_steps,
    )
    turn = Turn(context, manager=manager, model=model, emit=recorder)
    await turn.run()
    return turn, recorder, model


async def test_parallel_calls_then_an_answer(manager: McpManager) -> None:
    script = [
        reply("Looking.", call("flaky__sleep", seconds=0.4), call("flaky__echo", text="x")),
        reply("All done."),
    ]
    await manager.tools()  # started, so the timing below is the calls' own
    started = time.perf_counter()
    turn, events, model = await run_turn(manager, script)
    assert time.perf_counter() - started < 0.75  # the 0.4 s sleep overlapped the echo
    assert turn.stop_reason == "answered"
    assert turn.text == "Looking.\n\nAll done."
    assert [e["tool"] for e in events.of("tool_call")] == ["flaky.sleep", "flaky.echo"]
    assert {e["text"] for e in events.of("tool_result")} == {"slept 0.4", "x"}
    assert "".join(e["text"] for e in events.of("token")) == "Looking.All done."
    # the second model call saw both results, in the order the model asked for them
    results = [m for m in model.received[1] if isinstance(m, ToolMessage)]
    assert [m.content for m in results] == ["slept 0.4", "x"]
    tools = ["echo", "pid", "sleep", "context", "chain", "odd", "crash"]
    assert model.offered == [
        [f"{server}__{tool}" for server in ("flaky", "steady") for tool in tools]
    ]
    kinds = [kind for kind, _ in events.events]
    assert kinds[0] == "status" and "tool_call" in kinds


async def test_results_are_read_and_merged_off_the_event_loop(
    manager: McpManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool's result may be megabytes of graph (a 6.5 MB one held the loop for 0.3 s, every
    request of every user waiting): reading it, merging it into the turn's artifacts and settling
    them run in worker threads, and the two parallel results merge one at a time."""
    where: list[tuple[str, bool]] = []
    loop_thread = threading.get_ident()

    def recorded(name: str, function: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            where.append((name, threading.get_ident() == loop_thread))
            return function(*args, **kwargs)

        return run

    merging: list[int] = []

    def merge_slowly(artifacts: TurnArtifacts, collected: Any) -> None:
        merging.append(1)
        time.sleep(0.05)  # long enough for the other result's thread to come in
        assert len(merging) == 1, "two results merged at once"
        merging.pop()
        add_result(artifacts, collected)

    add_result = TurnArtifacts.add_result
    monkeypatch.setattr(tool_results, "collect", recorded("collect", tool_results.collect))
    monkeypatch.setattr(TurnArtifacts, "add_result", recorded("add_result", merge_slowly))
    monkeypatch.setattr(TurnArtifacts, "finalize", recorded("finalize", TurnArtifacts.finalize))
    script = [
        reply("", call("flaky__chain", ids=["A", "B"]), call("flaky__chain", ids=["B", "C"])),
        reply("Done."),
    ]
    turn, _, _ = await run_turn(manager, script)
    assert sorted(where) == sorted(
        [("collect", False)] * 2 + [("add_result", False)] * 2 + [("finalize", False)]
    )
    [graph] = turn.artifacts
    assert {node["id"] for node in orjson.loads(graph.content)["nodes"]} == {"A", "B", "C"}


async def test_a_turn_cancelled_while_a_result_is_read_stores_the_call_with_its_artifact(
    manager: McpManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read goes on in its thread after the cancel and may bring its artifact in: the call
    that brought it is logged, so the stored turn never holds an artifact without its call."""
    reading, collect = threading.Event(), tool_results.collect

    def slow_collect(*args: Any, **kwargs: Any) -> Any:
        reading.set()
        time.sleep(0.3)
        return collect(*args, **kwargs)

    monkeypatch.setattr(tool_results, "collect", slow_collect)
    context = TurnContext("c1", Mode.NORMAL, "/flaky.chain A,B", artifacts=TurnArtifacts())
    turn = Turn(context, manager=manager, model=None, emit=Recorder())
    running = asyncio.create_task(turn.run())
    while not reading.is_set():
        await asyncio.sleep(0.01)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await turn.finish()
    assert [(call.tool, call.is_error) for call in turn.calls] == [("chain", False)]
    [graph] = turn.artifacts
    assert {node["id"] for node in orjson.loads(graph.content)["nodes"]} == {"A", "B"}


async def test_a_turn_cancelled_while_its_artifacts_settle_keeps_them(
    manager: McpManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel landing in the turn's last step, while `finish` settles the artifacts in a thread,
    must not leave the turn finished without them: the caller's own `finish` gets the same ones,
    announced once."""
    settling = SlowSettling(monkeypatch, 0.3)
    context = TurnContext("c1", Mode.NORMAL, "/flaky.chain A,B", artifacts=TurnArtifacts())
    events = Recorder()
    turn = Turn(context, manager=manager, model=None, emit=events)
    running = asyncio.create_task(turn.run())
    await settling.started()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await turn.finish()
    [graph] = turn.artifacts
    assert {node["id"] for node in orjson.loads(graph.content)["nodes"]} == {"A", "B"}
    assert len(events.of("artifact")) == 1


async def test_a_failure_to_settle_is_kept_not_merged_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Settling again after a failure would work on artifacts the failed merge had half
    changed: the same failure is raised again instead (a cancelled turn's `finish` asks twice)."""
    tries: list[int] = []

    def finalize(_artifacts: TurnArtifacts) -> list[Any]:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("merge broke half way")
        return []

    monkeypatch.setattr(TurnArtifacts, "finalize", finalize)
    results = tool_results.ToolResults(TurnArtifacts())
    for _ in range(2):
        with pytest.raises(RuntimeError, match="half way"):
            results.settle()
    assert len(tries) == 1


async def test_a_repeated_identical_call_stops_the_turn(manager: McpManager) -> None:
    script = [
        reply("", call("flaky__echo", text="same")),
        reply("", call("flaky__echo", text="same")),
        reply("never reached"),
    ]
    turn, events, model = await run_turn(manager, script)
    assert turn.stop_reason == "repeated_call"
    assert len(events.of("tool_call")) == 1
    assert len(model.received) == 2
    assert "flaky.echo again" in turn.text


async def test_max_steps_bounds_the_loop(manager: McpManager) -> None:
    script = [reply("", call("flaky__echo", text=str(i))) for i in range(5)]
    turn, events, model = await run_turn(manager, script, max_steps=3)
    assert turn.stop_reason == "max_steps"
    assert len(model.received) == 3
    assert len(events.of("tool_result")) == 3
    assert "3 steps" in turn.text


async def test_a_crash_is_an_error_for_that_call_and_the_next_turn_restarts(
    manager: McpManager,
) -> None:
    pid = await manager.call_tool("flaky", "pid", {})
    script = [
        reply("", call("flaky__crash"), call("steady__echo", text="other server")),
        reply("", call("flaky__echo", text="after the crash")),
        reply("Done despite the crash."),
    ]
    turn, events, model = await run_turn(manager, script)
    errors = events.of("error")
    assert errors and errors[0]["tool"] == "flaky.crash"
    answers = [m for m in model.received[1] if isinstance(m, ToolMessage)]
    assert [m.status for m in answers] == ["error", "success"]
    assert "stopped during the call" in errors[0]["message"]
    assert turn.stop_reason == "answered"
    assert turn.text == "Done despite the crash."
    results = {e["callId"]: e for e in events.of("tool_result")}
    assert sum(e["isError"] for e in results.values()) == 1
    # started again on its next use, as a new process
    assert manager.connections["flaky"].starts == 2
    again = await manager.call_tool("flaky", "pid", {})
    assert again.result is not None and pid.result is not None
    assert again.result.content[0].text != pid.result.content[0].text


async def test_a_slow_tool_times_out_and_the_turn_goes_on(manager: McpManager) -> None:
    script = [reply("", call("flaky__sleep", seconds=5)), reply("ok")]
    started = time.perf_counter()
    turn, events, _ = await run_turn(manager, script)
    assert time.perf_counter() - started < 4
    assert "did not answer within 1.5 s" in events.of("error")[0]["message"]
    assert turn.text == "ok"


async def test_tools_outside_the_mode_are_refused(manager: McpManager) -> None:
    script = [reply("", call("graph__echo", text="x"), call("nope__tool")), reply("fine")]
    _, events, model = await run_turn(manager, script)
    assert [e["tool"] for e in events.of("error")] == ["graph__echo", "nope__tool"]
    assert not events.of("tool_call")
    assert all(not name.startswith("graph__") for name in model.offered[0])


async def test_graph_mode_offers_graph_tools_and_injects_the_context(
    manager: McpManager, caplog: pytest.LogCaptureFixture
) -> None:
    ours = {"conversationId": "c1", "apiBaseUrl": "http://127.0.0.1:1", "accessToken": "gw_secret"}
    forged = {"conversationId": "other", "apiBaseUrl": "http://evil", "accessToken": "stolen"}
    script = [
        reply("", call("graph__context", databaseContext=forged), call("flaky__echo", text="x")),
        reply("", call("graph__context")),
        reply("done"),
    ]
    turn, events, model = await run_turn(manager, script, mode=Mode.GRAPH, database_context=ours)
    assert all(name.startswith("graph__") for name in model.offered[0])
    seen = [orjson.loads(e["text"]) for e in events.of("tool_result")]
    assert seen == [ours, ours]
    assert "Discarded a databaseContext" in caplog.text and "stolen" not in caplog.text
    shown = events.of("tool_call")[0]["arguments"]["databaseContext"]
    assert shown["accessToken"] == "[redacted]"
    assert turn.artifacts == [] and not events.of("artifact")
    assert [e["tool"] for e in events.of("error")] == ["flaky__echo"]


async def test_without_a_model_plain_text_gets_the_hint(manager: McpManager) -> None:
    recorder = Recorder()
    context = TurnContext("c1", Mode.NORMAL, "what is TP53?", artifacts=TurnArtifacts())
    turn = Turn(context, manager=manager, model=None, emit=recorder)
    await turn.run()
    assert "GRAPHWRIGHT_MODEL=provider:model" in turn.text
    assert turn.stop_reason == "no_model"


async def test_slash_commands_run_in_order(manager: McpManager) -> None:
    recorder = Recorder()
    message = "/flaky.echo first\n/flaky.nothing\n/flaky.echo text=second\n/help"
    context = TurnContext("c1", Mode.NORMAL, message, artifacts=TurnArtifacts())
    turn = Turn(context, manager=manager, model=None, emit=recorder)
    await turn.run()
    assert [e["text"] for e in recorder.of("tool_result")] == ["first", "second"]
    assert "No tool 'flaky.nothing'" in recorder.of("error")[0]["message"]
    assert "`/flaky.sleep <seconds>`" in turn.text
    # Every tool is listed, grouped by the mode that offers it.
    here, graph_mode = turn.text.split("In Graph Mode", 1)
    assert "/graph.echo" not in here and "`/graph.echo <text>`" in graph_mode


async def test_mixed_text_and_commands_without_a_model(manager: McpManager) -> None:
    recorder = Recorder()
    message = "Please look these up.\n/flaky.echo first\nand then summarise\n/flaky.echo second"
    context = TurnContext("c1", Mode.NORMAL, message, artifacts=TurnArtifacts())
    turn = Turn(context, manager=manager, model=None, emit=recorder)
    await turn.run()
    assert [e["text"] for e in recorder.of("tool_result")] == ["first", "second"]
    assert "GRAPHWRIGHT_MODEL=provider:model" in turn.text
    assert not recorder.of("error")


@pytest.mark.parametrize(
    ("mode", "line", "words"),
    [
        (Mode.NORMAL, "/graph.echo x", ["Graph Mode", '"mode": "graph_mode"']),
        (Mode.GRAPH, "/flaky.echo x", ["normal", '"mode": "normal"']),
    ],
)
async def test_a_tool_of_the_other_mode_gets_a_hint(
    manager: McpManager, mode: Mode, line: str, words: list[str]
) -> None:
    recorder = Recorder()
    artifacts = None if mode is Mode.GRAPH else TurnArtifacts()
    context = TurnContext("c1", mode, line, artifacts=artifacts)
    turn = Turn(context, manager=manager, model=None, emit=recorder)
    await turn.run()
    message = recorder.of("error")[0]["message"]
    for word in words:
        assert word in message, message
    assert "No tool" not in message


async def test_invalid_arguments_are_worded_one_line_per_field(manager: McpManager) -> None:
    _, events, _ = await run_turn(
        manager, [reply("", call("flaky__sleep", seconds="soon")), reply("ok")]
    )
    [result] = events.of("tool_result")
    assert result["isError"]
    text = result["text"]
    assert "validation error for" not in text and "pydantic.dev" not in text
    assert "seconds:" in text and "'soon'" in text


async def test_a_model_failure_is_an_error_event_and_ends_the_turn(manager: McpManager) -> None:
    turn, events, _ = await run_turn(manager, [])  # the model has nothing to say: it raises
    assert turn.stop_reason == "model_error"
    assert events.of("error")[0]["message"].startswith("The model could not answer:")
    assert turn.text.startswith("The model could not answer:")


@pytest.mark.parametrize(
    ("message", "with_model", "started"),
    [
        ("/steady.echo text=hi", False, {"steady"}),
        ("/steady.echo text=hi\n/flaky.echo text=ho", True, {"steady", "flaky"}),
        ("/nowhere.echo text=hi", False, set()),
        ("hello", False, set()),
        ("/help", False, {"steady", "flaky", "spare"}),
        ("/steady.echo text=hi\nand tell me more", True, {"steady", "flaky", "spare"}),
        ("hello", True, {"steady", "flaky", "spare"}),
    ],
)
async def test_a_turn_starts_only_the_servers_it_needs(
    message: str, with_model: bool, started: set[str]
) -> None:
    """A turn of commands starts the servers they name, /help and a turn the model answers
    every one of the mode's, and words without a model none: each server is a process of its own,
    seconds of CPU to start on a busy machine."""
    manager = McpManager({"steady": flaky(), "flaky": flaky(), "spare": flaky()})
    model = ScriptedChatModel.with_script([reply("An answer.")]) if with_model else None
    context = TurnContext("c1", Mode.NORMAL, message, artifacts=TurnArtifacts())
    try:
        await Turn(context, manager=manager, model=model, emit=Recorder()).run()
        running = {name for name, c in manager.connections.items() if c.running}
        assert running == started
    finally:
        await manager.aclose()
