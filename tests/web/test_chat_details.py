"""Details of the chat page through NiceGUI's `User` simulation, on real services and a scripted
chat model (tests.chat.fakes): a tool call's card (arguments, status, a failure's error), the
answer streamed token by token, and the bibliography and knowledge-graph artifact views with
their exports.

As in test_chat_page, the tiny `flaky` test server is the only MCP server.
"""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from langchain_core.outputs import ChatGenerationChunk
from nicegui import ui
from nicegui.testing.user import User
from pydantic import Field

from graphwright.core.formats import FORMATS, read_graph
from graphwright.web.turn_view import TurnView
from tests.chat.fakes import ScriptedChatModel, call, reply
from tests.web.chat_support import conversation, flaky_only, store_artifact
from tests.web.conftest import Simulated


@pytest.fixture
def mcp_servers() -> dict[str, Any]:
    return flaky_only()


async def open_artifact(simulated: Simulated, name: str, media_type: str, data: Any) -> User:
    """A new conversation holding one artifact of `data` as JSON, open on its page."""
    conversation(simulated, "c")
    store_artifact(simulated, "c", "a", name, media_type, orjson.dumps(data).decode())
    await simulated.sign_in(label="ada")
    await simulated.user.open("/c/c")
    return simulated.user


def record_names(simulated: Simulated, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The file name of each download the page offers (the simulated download drops it).

    The real `ui.download.content` encodes a str; NiceGUI's simulated one takes a str for a URL,
    so it gets the bytes the browser would."""
    names: list[str] = []
    download = simulated.user.download
    content = download.content

    def recording(payload: bytes | str, filename: str | None = None, media_type: str = "") -> None:
        names.append(filename or "")
        content(payload.encode() if isinstance(payload, str) else payload, filename, media_type)

    monkeypatch.setattr(download, "content", recording)
    return names


def codes(element: ui.element) -> list[str]:
    """The text of each code block inside `element`, in order."""
    return [e.content for e in element.descendants() if isinstance(e, ui.code)]


def assistant_text(simulated: Simulated) -> str:
    *_, last = simulated.user.find(marker="assistant-text").elements
    return last.content


async def send(simulated: Simulated, cid: str, message: str) -> None:
    """Sign in, open the conversation and send `message` to the chat model."""
    conversation(simulated, cid)
    await simulated.sign_in(label="ada")
    user = simulated.user
    await user.open(f"/c/{cid}")
    await user.should_see(marker="message-input")
    user.find(marker="message-input").type(message)
    user.find(marker="send").click()


async def until_stored(simulated: Simulated, cid: str) -> None:
    """Wait until the conversation's turn has been stored (its answer is the last message)."""
    chat = simulated.app.state.chat_service
    for _ in range(600):
        messages = chat.get_conversation(cid)["messages"]
        if messages and messages[-1]["role"] == "assistant":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the turn in {cid} was never stored")


# --- tool-call cards and streaming ----------------------------------------------------------


async def test_tool_cards_show_arguments_status_and_a_failures_error(
    simulated: Simulated,
) -> None:
    simulated.app.state.chat_service.model = ScriptedChatModel.with_script(
        [
            reply(
                "",
                call("flaky__echo", text="hello from the card"),
                call("flaky__sleep", seconds="not a number"),
            ),
            reply("One worked, one failed."),
        ]
    )
    await send(simulated, "cards", "Try both tools.")
    user = simulated.user
    # the flaky server starts on first use
    await user.should_see(marker="tool-call", content="flaky.echo · done in", retries=600)
    await user.should_see(marker="tool-call", content="flaky.sleep · failed in", retries=100)
    await user.should_see(marker="assistant-text", content="One worked, one failed.", retries=100)
    cards = {card.text.split(" · ")[0]: card for card in user.find(marker="tool-call").elements}
    assert set(cards) == {"flaky.echo", "flaky.sleep"}
    echo, sleep = cards["flaky.echo"], cards["flaky.sleep"]

    assert "failed" not in echo.text and echo.props["icon"] == "check_circle"
    arguments, result = codes(echo)
    assert orjson.loads(arguments) == {"text": "hello from the card"}
    assert result == "hello from the card"

    assert sleep.props["icon"] == "error" and "border-red-600" in sleep.classes
    arguments, error = codes(sleep)
    assert orjson.loads(arguments) == {"seconds": "not a number"}
    assert "seconds" in error and "valid number" in error  # the tool's own validation error

    def headings(card: ui.element) -> list[str]:
        return [e.text for e in card.descendants() if isinstance(e, ui.label)]

    assert headings(echo) == ["Arguments", "Result"]
    assert headings(sleep) == ["Arguments", "Error"]

    # the stored turn, opened again, shows the same cards (the page shows the answer before the
    # turn's message is stored, and an opened page draws what is stored at that moment)
    await until_stored(simulated, "cards")
    await user.open("/c/cards")
    await user.should_see(marker="tool-call", content="flaky.sleep · failed in", retries=100)
    stored = {card.text.split(" · ")[0]: card for card in user.find(marker="tool-call").elements}
    assert codes(stored["flaky.sleep"])[1] == error


class GatedChatModel(ScriptedChatModel):
    """Streams its reply's first `before` tokens, then waits for `gate` before the rest."""

    before: int = 3
    gate: Any = Field(default_factory=asyncio.Event)

    async def _astream(
        self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for index, chunk in enumerate(self._chunks(messages)):
            if index == self.before:
                await self.gate.wait()
            yield chunk


async def test_the_answer_streams_token_by_token(
    simulated: Simulated, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    on_event = TurnView.on_event

    def recording(self: TurnView, kind: str, data: dict[str, Any]) -> None:
        seen.append((kind, dict(data)))
        on_event(self, kind, data)

    monkeypatch.setattr(TurnView, "on_event", recording)
    model = GatedChatModel.with_script(["TP53 binds MDM2 in the nucleus."])
    simulated.app.state.chat_service.model = model
    await send(simulated, "stream", "Tell me about TP53.")
    user = simulated.user

    # "TP53", " ", "binds" have arrived; the rest waits behind the gate
    await user.should_see(marker="assistant-text", content="TP53 binds", retries=300)
    assert assistant_text(simulated) == "TP53 binds"
    await user.should_see(marker="cancel")  # the turn is still running
    tokens = [data["text"] for kind, data in seen if kind == "token"]
    assert tokens == ["TP53", " ", "binds"]

    model.gate.set()
    await user.should_see(marker="assistant-text", content="in the nucleus.", retries=300)
    await user.should_not_see(marker="cancel", retries=100)
    assert assistant_text(simulated) == "TP53 binds MDM2 in the nucleus."
    tokens = [data["text"] for kind, data in seen if kind == "token"]
    assert len(tokens) > 3 and "".join(tokens) == "TP53 binds MDM2 in the nucleus."
    [done] = [data for kind, data in seen if kind == "done"]
    assert done["status"] == "complete"


# --- artifact views -------------------------------------------------------------------------

CITATIONS = [
    {
        "pmid": "PMID:12345",
        "doi": "10.1000/tp53.1",
        "title": "TP53 in liver cancer",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "journal": "Nature",
        "year": 2020,
    },
    {
        "pmid": "67890",
        "title": "=BRCA1 and repair",
        "authors": "Grace Hopper",
        "journal": "Cell",
        "year": 2018,
    },
    {"doi": "https://doi.org/10.1000/XYZ.9", "title": "No PubMed entry", "year": 2021},
]


async def test_the_bibliography_is_a_sortable_table_with_links_and_exports(
    simulated: Simulated, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = await open_artifact(simulated, "Key refs", "application/vnd.bibliography", CITATIONS)
    await user.should_see(marker="bibliography", retries=100)
    await user.should_see("Bibliography: Key refs")
    await user.should_see("3 references")
    [table] = user.find(marker="bibliography").elements
    sortable = {c["name"] for c in table.columns if c.get("sortable")}
    assert sortable == {"title", "journal", "year", "pmid"}
    rows = {row["title"]: row for row in table.rows}
    assert rows["TP53 in liver cancer"]["pubmed"] == "https://pubmed.ncbi.nlm.nih.gov/12345/"
    assert rows["TP53 in liver cancer"]["doi"] == "https://doi.org/10.1000/tp53.1"
    assert rows["TP53 in liver cancer"]["authors"] == "Ada Lovelace, Alan Turing"
    assert rows["=BRCA1 and repair"]["pubmed"] == "https://pubmed.ncbi.nlm.nih.gov/67890/"
    assert rows["=BRCA1 and repair"]["doi"] == ""
    assert rows["No PubMed entry"]["pubmed"] == "" and rows["No PubMed entry"]["pmid"] == ""
    assert rows["No PubMed entry"]["doi"] == "https://doi.org/10.1000/xyz.9"
    links = table.slots["body-cell-pmid"].template
    assert ':href="props.row.pubmed"' in links and ':href="props.row.doi"' in links

    names = record_names(simulated, monkeypatch)
    user.find(marker="export-csv").click()
    downloaded = await user.download.next(timeout=10)
    parsed = list(csv.reader(io.StringIO(downloaded.content.decode())))
    assert parsed == [
        ["pmid", "doi", "title", "authors", "journal", "year", "url"],
        ["12345", "10.1000/tp53.1", "TP53 in liver cancer", "Ada Lovelace; Alan Turing",
         "Nature", "2020", "https://pubmed.ncbi.nlm.nih.gov/12345/"],
        ["67890", "", "'=BRCA1 and repair", "Grace Hopper", "Cell", "2018",
         "https://pubmed.ncbi.nlm.nih.gov/67890/"],
        ["", "10.1000/xyz.9", "No PubMed entry", "", "", "2021", ""],
    ]  # fmt: skip

    user.find(marker="export-bibtex").click()
    bibtex = (await user.download.next(timeout=10)).content.decode()
    assert bibtex.count("@article{") == 3 and "@article{pmid12345," in bibtex
    assert "author = {Ada Lovelace and Alan Turing}" in bibtex
    user.find(marker="export-ris").click()
    ris = (await user.download.next(timeout=10)).content.decode()
    assert ris.count("TY  - JOUR") == 3 and ris.count("ER  - ") == 3
    assert "TI  - TP53 in liver cancer" in ris and "AN  - 67890" in ris
    assert names == ["Key-refs.csv", "Key-refs.bib", "Key-refs.ris"]


GRAPH = {
    "nodes": [
        {"id": "HGNC:11998", "name": "TP53", "category": "gene"},
        {"id": "MONDO:0007254", "name": "breast cancer", "category": "disease"},
        {"id": "CHEBI:15365", "name": "aspirin", "category": "chemical"},
    ],
    "links": [
        {
            "source": "HGNC:11998",
            "target": "MONDO:0007254",
            "label": "associated_with",
            "evidence": ["PMID:12345"],
        },
        {"source": "CHEBI:15365", "target": "MONDO:0007254", "label": "treats"},
    ],
}


async def test_a_knowledge_graph_exports_in_every_format_the_cli_writes(
    simulated: Simulated, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = await open_artifact(simulated, "TP53 graph", "application/vnd.knowledge-graph", GRAPH)
    await user.should_see(marker="graph-export", retries=100)
    await user.should_see("3 nodes, 2 links")
    names = {n["id"]: n["name"] for n in GRAPH["nodes"]}
    links = sorted((link["source"], link["target"]) for link in GRAPH["links"])
    assert len(FORMATS) >= 9
    files = record_names(simulated, monkeypatch)
    for fmt in FORMATS.values():
        user.find(marker=f"export-{fmt.name}").click()
        downloaded = await user.download.next(timeout=10)
        assert files[-1] == f"TP53-graph{fmt.extensions[0]}", fmt.name
        assert downloaded.content, fmt.name
        assert fmt.read is not None, fmt.name  # every format the CLI writes also reads back
        back = read_graph(downloaded.content, fmt.name)
        assert {n["id"]: n.get("name") for n in back["nodes"]} == names, fmt.name
        assert sorted((x["source"], x["target"]) for x in back["links"]) == links, fmt.name
    assert len(files) == len(FORMATS)
