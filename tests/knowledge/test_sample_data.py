"""Removing the bundled sample data (issue 31, point 17): the sample collections leave the
store whole, in one update, while the person's own assets stay; their requests stay as
`removed`, so that no collection number is given twice and the sample data never comes back.
On the embedded store and an Oxigraph server, with requests on every database backend."""

from __future__ import annotations

from typing import Any

import pytest

from graphwright.errors import Conflict, InvalidInput
from graphwright.knowledge.backends.dkg_node import DkgNodeKnowledgeBase
from graphwright.knowledge.service import KnowledgeService
from graphwright.knowledge.ual import Ual
from tests.knowledge.conftest import DRUGS


async def publish(knowledge: KnowledgeService, content: Any) -> str:
    request = knowledge.request_publication(content, requested_by="tester")
    published = await knowledge.approve(request.id, approver="alice")
    assert published.ual
    return published.ual


async def listed(knowledge: KnowledgeService) -> list[tuple[str, bool]]:
    return [(c.ual, c.synthetic) for c in await knowledge.collections(limit=100)]


async def test_removing_the_sample_data_leaves_the_users_assets(
    knowledge: KnowledgeService,
) -> None:
    assert await knowledge.load_sample_data() == 3
    ours = await publish(knowledge, DRUGS)  # the user's aspirin beside the sample's
    samples = knowledge.sample_collections()
    assert [s.title for s in samples] == [
        "Sample drugs and their targets",
        "Sample human genes",
        "Sample diseases and drugs used for them",
    ]

    removal = await knowledge.remove_sample_data(actor="alice")

    assert removal.removed == samples
    assert await listed(knowledge) == [(ours, False)]
    quads = (await knowledge.export()).decode()
    for sample in samples:  # no public graph, current-graph entry or metadata is left
        assert f"{sample.ual}>" not in quads and f"{sample.ual}/" not in quads, sample.ual
    assert "aspirin" in quads  # the user's
    names = await knowledge.query("SELECT ?n WHERE { GRAPH ?g { ?s <http://schema.org/name> ?n } }")
    assert sorted(row["n"]["value"] for row in names.rows) == ["aspirin", "metformin"]
    requests, _ = knowledge.list_requests(status="removed")
    assert {r.ual for r in requests} == {s.ual for s in samples}
    assert all(r.reason and "removed with the sample data by alice" in r.reason.lower()
               for r in requests)  # fmt: skip
    with pytest.raises(Conflict, match="already removed"):
        await knowledge.approve(requests[0].id, approver="alice")

    # Collection numbers are never given twice: the next is past every removed one.
    after = Ual.parse(await publish(knowledge, DRUGS[0]))
    assert after.kc_id == 5
    assert (await knowledge.remove_sample_data(actor="alice")).removed == []


async def test_removed_sample_data_does_not_come_back(knowledge: KnowledgeService) -> None:
    await knowledge.load_sample_data()
    await knowledge.remove_sample_data(actor="alice")
    assert await listed(knowledge) == []  # the store is empty, as at the first start
    assert await knowledge.load_sample_data() == 0
    again = KnowledgeService(knowledge._db, knowledge.backend)
    await again.ensure_started(sample_data=True)
    assert await listed(again) == []


async def test_a_refused_removal_removes_nothing(
    knowledge: KnowledgeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    await knowledge.load_sample_data()
    before = await listed(knowledge)

    async def refuse(_collections: Any) -> None:
        raise InvalidInput("the store refused")

    monkeypatch.setattr(knowledge.backend, "remove", refuse)
    with pytest.raises(InvalidInput, match="the store refused"):
        await knowledge.remove_sample_data(actor="alice")
    assert await listed(knowledge) == before
    assert len(knowledge.sample_collections()) == 3
    assert knowledge.list_requests(status="published")[1] == 3
    assert all(r.reason is None for r in knowledge.list_requests(status="published")[0])


async def test_a_removal_a_crash_interrupted_is_finished_at_start_up(
    knowledge: KnowledgeService,
) -> None:
    await knowledge.load_sample_data()
    marked = knowledge._start_removing("alice")  # the crash came before the store's update
    assert len(marked) == 3 and knowledge.sample_collections() == []

    assert await knowledge.recover() == 3
    assert await listed(knowledge) == []
    assert knowledge.list_requests(status="removed")[1] == 3
    assert await knowledge.load_sample_data() == 0


async def test_a_dkg_node_refuses_to_remove_collections() -> None:
    kb = DkgNodeKnowledgeBase("http://127.0.0.1:9", "otp:20430")
    with pytest.raises(InvalidInput, match="A DKG node cannot remove published collections"):
        await kb.remove([])
