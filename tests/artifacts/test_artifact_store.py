"""The artifact store's rules on every backend: in memory, SQLite and (when configured)
PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
from contextlib import aclosing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphwright.artifacts.events import ArtifactEvent
from graphwright.artifacts.memory_store import InMemoryArtifactStore
from graphwright.artifacts.store import ArtifactStore, SqlArtifactStore
from graphwright.core.artifacts import Artifact, Part, apply_update
from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput, NotFound


@pytest.fixture(params=["memory", "sql"])
def store(request: pytest.FixtureRequest, database_url: str) -> ArtifactStore:
    if request.param == "memory":
        if not database_url.startswith("sqlite"):
            pytest.skip("the in-memory store runs once, beside SQLite")
        return InMemoryArtifactStore()
    # Asked for here only: the in-memory run needs no migrated database.
    return SqlArtifactStore(request.getfixturevalue("database"))


def art(artifact_id: str, *parts: Part, **fields: Any) -> Artifact:
    return Artifact(artifact_id=artifact_id, parts=list(parts), **fields)


def content(store: ArtifactStore, artifact_id: str, **kwargs: Any) -> list[tuple[str, Any]]:
    parts = store.get(artifact_id, **kwargs).artifact.parts
    return [(p.kind, getattr(p, p.kind)) for p in parts]


def test_replace_and_append_follow_the_part_rules(store: ArtifactStore) -> None:
    store.create(
        art("a", Part(text="Hello "), Part(text="there"), Part(data={"n": 1}), name="Notes"),
        context_id="c1",
    )
    assert content(store, "a") == [("text", "Hello there"), ("data", {"n": 1})]
    store.update(art("a", Part(text=", world"), Part(data={"n": 2})), append=True)
    store.update(art("a", Part(url="https://example.org/f.pdf")), append=True)
    assert content(store, "a") == [
        ("text", "Hello there, world"),
        ("data", {"n": 1}),
        ("data", {"n": 2}),
        ("url", "https://example.org/f.pdf"),
    ]
    store.update(art("a", Part(data={"n": 3})), append=False)
    assert content(store, "a") == [
        ("text", "Hello there, world"),
        ("url", "https://example.org/f.pdf"),
        ("data", {"n": 3}),
    ]
    stored = store.get("a")
    assert (stored.version, stored.artifact.name, stored.context_id) == (4, "Notes", "c1")


def test_a_closed_artifact_refuses_appends_and_stays_unchanged(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="one ")), context_id="c1")
    closing = store.update(art("a", Part(text="two")), append=True, last_chunk=True)
    assert closing.closed
    before = store.get("a")
    events_before = store.events("c1")
    with pytest.raises(Conflict, match=r"'a' is closed.*no more appends") as refused:
        store.update(art("a", Part(text="three"), name="renamed"), append=True)
    assert refused.value.current_version == 2
    assert store.get("a") == before
    assert store.events("c1") == events_before
    assert [v.version for v in store.versions("a")] == [1, 2]
    reopened = store.update(art("a", Part(text="fresh")), append=False)
    assert (reopened.version, reopened.closed) == (3, False)
    assert content(store, "a") == [("text", "fresh")]


def test_create_update_and_scoping_errors(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="x")), context_id="c1", task_id="t1")
    with pytest.raises(Conflict, match="already exists"):
        store.create(art("a", Part(text="y")), context_id="c1")
    with pytest.raises(NotFound, match="No artifact 'missing'"):
        store.update(art("missing", Part(text="y")), append=True)
    created = store.update(art("b", Part(text="y")), append=True, context_id="c1", task_id="t2")
    assert (created.operation, created.version) == ("create", 1)
    with pytest.raises(NotFound):
        store.get("a", context_id="c2")
    with pytest.raises(NotFound):
        store.update(art("a", Part(text="z")), append=True, context_id="c2")
    with pytest.raises(NotFound):
        store.delete("a", context_id="c2")
    assert content(store, "a") == [("text", "x")]


def test_list_by_context_and_task_then_delete(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="x"), name="A"), context_id="c1", task_id="t1")
    store.create(
        art("b", Part(data=[1], media_type="application/json")), context_id="c1", task_id="t2"
    )
    store.create(art("c", Part(text="z")), context_id="c2", task_id="t1")
    assert [s.artifact_id for s in store.list(context_id="c1")] == ["a", "b"]
    assert [s.artifact_id for s in store.list(task_id="t1")] == ["a", "c"]
    assert [s.artifact_id for s in store.list(context_id="c1", task_id="t2")] == ["b"]
    assert store.list(context_id="c1")[1].media_type == "application/json"
    store.delete("a")
    assert [s.artifact_id for s in store.list(context_id="c1")] == ["b"]
    for read in (store.get, store.versions, store.delete):
        with pytest.raises(NotFound):
            read("a")


def test_every_version_can_be_read_back(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="v1"), name="first"), context_id="c1")
    store.update(art("a", Part(text="+2"), name="second"), append=True)
    store.update(art("a", Part(data=3)), append=True)
    store.update(art("a", Part(text="v4")), append=False)
    assert content(store, "a", version=1) == [("text", "v1")]
    assert content(store, "a", version=2) == [("text", "v1+2")]
    assert content(store, "a", version=3) == [("text", "v1+2"), ("data", 3)]
    assert content(store, "a", version=4) == [("data", 3), ("text", "v4")]
    assert store.get("a", version=1).artifact.name == "first"
    assert store.get("a", version=2).version == 2
    with pytest.raises(NotFound, match="no version 9; its versions run from 1 to 4"):
        store.get("a", version=9)
    assert [(v.version, v.operation) for v in store.versions("a")] == [
        (1, "create"),
        (2, "append"),
        (3, "append"),
        (4, "replace"),
    ]


def test_events_are_a2a_shaped_and_numbered_per_context(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="x"), name="A"), context_id="c1", task_id="t1")
    store.create(art("b", Part(text="y")), context_id="c2")
    store.update(art("a", Part(text="z")), append=True, last_chunk=True)
    first, second = store.events("c1")
    assert [e.sequence for e in (first, second)] == [1, 2]
    assert second.to_json_dict() == {
        "taskId": "t1",
        "contextId": "c1",
        "artifact": {"artifactId": "a", "name": "A", "parts": [{"text": "z"}]},
        "append": True,
        "lastChunk": True,
        "metadata": {"sequence": 2, "version": 2, "operation": "append"},
    }
    assert [e.sequence for e in store.events("c2")] == [1]
    assert store.events("c1", after_sequence=1) == [second]


def test_update_many_stores_all_or_none(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="kept"), Part(data=1)), context_id="c1")
    store.create(art("theirs", Part(text="x")), context_id="c2")
    before = (store.get("a"), store.versions("a"), store.events("c1"))
    batch = [
        art("a", Part(text="replaced"), Part(data=2)),
        art("new", Part(text="y")),
        art("theirs", Part(text="z")),  # another conversation's: refused, after two writes
    ]
    with pytest.raises(NotFound, match="No artifact 'theirs' in this conversation"):
        store.update_many(batch, append=False, context_id="c1")
    assert (store.get("a"), store.versions("a"), store.events("c1")) == before
    assert [s.artifact_id for s in store.list(context_id="c1")] == ["a"]
    assert content(store, "theirs") == [("text", "x")]

    writes = store.update_many(batch[:2], append=False, context_id="c1", task_id="t")
    assert [(w.artifact_id, w.operation, w.version, w.sequence) for w in writes] == [
        ("a", "replace", 2, 2),
        ("new", "create", 1, 3),
    ]
    assert content(store, "a") == [("text", "replaced"), ("data", 2)]
    assert [e.sequence for e in store.events("c1")] == [1, 2, 3]


async def test_a_delete_sends_a_tombstone_event(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="x"), name="A"), context_id="c1", task_id="t1")
    store.update(art("a", Part(text="y")), append=True)
    listener = asyncio.create_task(take(store, 4))
    await asyncio.sleep(0.05)
    await asyncio.to_thread(store.delete, "a")
    store.create(art("a", Part(text="again")), context_id="c1")
    received = await asyncio.wait_for(listener, 10)
    assert [e.sequence for e in received] == [1, 2, 3, 4]
    assert received[2].to_json_dict() == {
        "taskId": "t1",
        "contextId": "c1",
        "artifact": {"artifactId": "a", "name": "A", "parts": [{"text": ""}]},
        "append": False,
        "lastChunk": True,
        "metadata": {"sequence": 3, "version": 3, "operation": "delete"},
    }
    assert store.events("c1") == received
    assert store.get("a").version == 1
    with pytest.raises(NotFound):
        store.delete("a", context_id="c2")
    assert len(store.events("c1")) == 4


@pytest.mark.parametrize(
    "artifact",
    [
        art("a", Part(text="one\x00two")),
        art("a", Part(data={"k": ["\x00"]})),
        art("a", Part(text="x"), metadata={"\x00": 1}),
    ],
)
def test_nul_characters_are_refused_on_every_backend(
    store: ArtifactStore, artifact: Artifact
) -> None:
    store.create(art("a", Part(text="kept")), context_id="c1")
    with pytest.raises(InvalidInput, match=r"contains a NUL character \(\\u0000\)"):
        store.update(artifact, append=True)
    assert content(store, "a") == [("text", "kept")]
    binary = store.update(art("a", Part(raw=b"\x00\x01", media_type="x/y")), append=True)
    assert binary.version == 2
    assert content(store, "a")[-1] == ("raw", b"\x00\x01")


async def take(store: ArtifactStore, count: int, after: int = 0) -> list[ArtifactEvent]:
    received: list[ArtifactEvent] = []
    async with aclosing(store.subscribe("c1", after_sequence=after)) as events:
        async for event in events:
            received.append(event)
            if len(received) == count:
                return received
    raise AssertionError("the subscription ended")


async def test_subscribers_see_every_write_in_order(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="0")), context_id="c1")
    early = asyncio.create_task(take(store, 6))
    await asyncio.sleep(0.05)

    def writes() -> None:
        for n in range(1, 5):
            store.update(art("a", Part(text=str(n))), append=True, last_chunk=n == 4)
        store.create(art("b", Part(data={"k": 1})), context_id="c1")

    await asyncio.to_thread(writes)
    received = await asyncio.wait_for(early, 10)
    assert [e.sequence for e in received] == [1, 2, 3, 4, 5, 6]
    assert [e.append for e in received] == [False, True, True, True, True, False]
    assert [e.last_chunk for e in received] == [False, False, False, False, True, False]
    late = await asyncio.wait_for(take(store, 3, after=3), 10)
    assert [e.sequence for e in late] == [4, 5, 6]
    rebuilt: list[Part] = []
    for event in received[:5]:
        rebuilt = apply_update(rebuilt, event.artifact.parts, append=event.append)
    assert rebuilt == store.get("a").artifact.parts


def test_concurrent_appends_lose_nothing(store: ArtifactStore) -> None:
    store.create(art("a", Part(text="")), context_id="c1")
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            for n in range(8):
                store.update(art("a", Part(text=f"{name}{n};")), append=True)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(name,)) for name in "wxyz"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    [(kind, text)] = content(store, "a")
    assert kind == "text"
    assert sorted(text.rstrip(";").split(";")) == sorted(
        f"{w}{n}" for w in "wxyz" for n in range(8)
    )
    assert [e.sequence for e in store.events("c1")] == list(range(1, 34))
    assert store.get("a").version == 33


part_lists = st.lists(
    st.one_of(
        # Text as the doors let it through: no NUL, no lone surrogates (neither is valid there).
        st.text(
            st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=3
        ).map(lambda t: Part(text=t)),
        st.integers(0, 9).map(lambda n: Part(data=n)),
        st.binary(min_size=1, max_size=3).map(lambda b: Part(raw=b, media_type="x/y")),
    ),
    min_size=1,
    max_size=3,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(updates=st.lists(st.tuples(part_lists, st.booleans()), min_size=1, max_size=5))
def test_the_store_agrees_with_the_pure_rules(
    store: ArtifactStore, updates: list[tuple[list[Part], bool]]
) -> None:
    artifact_id = f"h-{len(store.list(context_id='hyp'))}"
    expected: list[Part] = []
    for parts, append in updates:
        expected = apply_update(expected, parts, append=append)
        store.update(art(artifact_id, *parts), append=append, context_id="hyp")
    assert store.get(artifact_id).artifact.parts == expected


def test_the_sql_event_log_survives_a_restart(database_url: str) -> None:
    database = Database(database_url)
    SqlArtifactStore(database).create(art("a", Part(text="x")), context_id="c1")
    database.dispose()
    reopened = Database(database_url)
    try:
        store = SqlArtifactStore(reopened)
        store.update(art("a", Part(text="y")), append=True)
        assert [e.sequence for e in store.events("c1")] == [1, 2]
        replayed = asyncio.run(asyncio.wait_for(take(store, 2), 10))
        assert [e.artifact.parts[0].text for e in replayed] == ["x", "y"]
    finally:
        reopened.dispose()


async def test_a_write_from_another_instance_is_filled_in_from_the_log(database: Database) -> None:
    """Two server instances on one database: live events are per process, the log is shared."""
    here, elsewhere = SqlArtifactStore(database), SqlArtifactStore(database)
    here.create(art("a", Part(text="0")), context_id="c1")
    reader = asyncio.create_task(take(here, 3))
    await asyncio.sleep(0.05)
    await asyncio.to_thread(elsewhere.update, art("a", Part(text="1")), append=True)
    await asyncio.to_thread(here.update, art("a", Part(text="2")), append=True)
    received = await asyncio.wait_for(reader, 10)
    assert [e.artifact.parts[0].text for e in received] == ["0", "1", "2"]
