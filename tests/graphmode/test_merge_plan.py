"""A node merge is prepared outside its write transaction, change log included (issue 29, M7).

The prepared change log must be the one applying its ops one run at a time records (`OpsPlanner`,
the rules of each op, which reads every row it touches): undo, redo and time travel replay it.
"""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from graphwright.db import Database
from graphwright.graphmode.change import Change
from graphwright.graphmode.merge_plan import plan_merge
from graphwright.graphmode.ops_plan import OpsPlanner, apply_plan
from graphwright.graphmode.repository import GraphRepository
from graphwright.graphmode.service import GraphService

IDS = [f"X:{i}" for i in range(6)]
ACTOR = "hypothesis"

links = st.lists(
    st.tuples(
        st.sampled_from(IDS), st.sampled_from(IDS), st.sampled_from(["r", "s"]),
        st.lists(st.sampled_from(["PMID:1", "PMID:2", "PMID:3"]), max_size=2, unique=True),
    ),
    max_size=14,
)  # fmt: skip
removals = st.lists(st.sampled_from(IDS[1:]), min_size=1, max_size=5, unique=True)


class RolledBack(Exception):
    """Ends a write transaction without committing it."""


def _graph(edges: list[tuple[str, str, str, list[str]]]) -> dict[str, Any]:
    return {
        "nodes": [
            {"id": i, "name": f"n{n}", "category": "Gene", "evidence": [f"PMID:{n}"],
             "synonyms": [f"s{n}"]}
            for n, i in enumerate(IDS)
        ],
        "links": [
            {"source": s, "target": t, "label": label, "evidence": evidence}
            for s, t, label, evidence in edges
        ],
    }  # fmt: skip


def _snapshot(service: GraphService, conversation: str) -> tuple[Any, Any]:
    graph = service.to_graph(conversation)
    return (
        sorted(graph["nodes"], key=lambda node: node["id"]),
        sorted(graph["links"], key=lambda link: link["id"]),
    )


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edges=links, remove=removals)
def test_a_prepared_merge_logs_what_applying_its_ops_one_by_one_logs(
    service: GraphService, database: Database, edges: list[Any], remove: list[str]
) -> None:
    conversation = f"m-{uuid.uuid4().hex[:10]}"
    service.import_graph(conversation, _graph(edges), actor=ACTOR)
    before = _snapshot(service, conversation)
    plan = service._planned(conversation, partial(plan_merge, keep_id=IDS[0], remove_ids=remove))
    with pytest.raises(RolledBack), database.write() as session:
        repo = GraphRepository(session)
        project = repo.lock_project(conversation, plan.now)
        planner = OpsPlanner(repo, project.id, project.version, plan.now)
        planner.run_all(plan.forward)
        ops_plan = planner.plan(None)
        assert ops_plan.inverse == plan.inverse
        apply_plan(Change(repo, project.id, project.version + 1, plan.now), ops_plan)
        one_by_one = (repo.all_nodes(project.id), repo.all_edges(project.id))
        raise RolledBack
    service.merge_nodes(conversation, IDS[0], remove, actor=ACTOR)
    with database.read() as session:
        repo = GraphRepository(session)
        project = repo.project(conversation)
        assert project is not None
        prepared = (repo.all_nodes(project.id), repo.all_edges(project.id))
    # The real merge planned again, at its own time: the rows differ only in `updated_at`.
    assert _without_updates(prepared) == _without_updates(one_by_one)
    service.undo(conversation, actor=ACTOR)
    assert _snapshot(service, conversation) == before


def _without_updates(rows: tuple[list[Any], list[Any]]) -> tuple[list[Any], list[Any]]:
    nodes, edges = rows
    return (
        sorted(({**n, "updated_at": None} for n in nodes), key=lambda n: n["id"]),
        sorted(({**e, "updated_at": None} for e in edges), key=lambda e: e["id"]),
    )


def test_rows_changed_without_a_new_version_make_the_merge_plan_again(
    service: GraphService, database: Database, monkeypatch: Any
) -> None:
    """The transaction writes what the plan read; if the rows are not what it read, although
    the version is, the counts of the rows written tell, and the merge is planned again."""
    service.import_graph("g", _graph([("X:1", "X:2", "r", ["PMID:1"])]), actor=ACTOR)
    plan = GraphService._planned
    calls: list[int] = []

    def plan_then_change_rows(self: GraphService, *args: Any, **kwargs: Any) -> Any:
        planned = plan(self, *args, **kwargs)
        if not calls:  # a row goes behind the version's back
            with database.write() as session:
                session.execute(text("DELETE FROM graph_edges"))
        calls.append(1)
        return planned

    monkeypatch.setattr(GraphService, "_planned", plan_then_change_rows)
    service.merge_nodes("g", "X:0", ["X:1"], actor=ACTOR)
    assert len(calls) == 2
    graph_after = service.to_graph("g")
    assert "X:1" not in {node["id"] for node in graph_after["nodes"]}
    assert graph_after["links"] == []
