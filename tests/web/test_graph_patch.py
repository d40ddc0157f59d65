"""A live change sends a patch of the ECharts option; applied as the browser applies it (splices
last first), the patch must give exactly the new option."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.drawing.graph import drawing
from graphwright.drawing.layout import place
from graphwright.drawing.options import DENSE_EDGES_FROM
from graphwright.drawing.patch import SPARSE_UP_TO, array_patch, option_patch


def applied(option: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """What gwGraph.patch does in the page, in Python."""
    series = [dict(one) for one in option["series"]]
    for change in patch:
        for key in ("data", "links"):
            items = list(series[change["index"]].get(key) or [])
            for start, removed, added in reversed(change.get(key, [])):
                items[start : start + removed] = added
            if key in change:
                series[change["index"]][key] = items
    return {**option, "series": series}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=40), st.lists(st.integers(0, 5), max_size=40))
def test_array_patch_turns_old_into_new(old: list[int], new: list[int]) -> None:
    items = list(old)
    for start, removed, added in reversed(array_patch(old, new)):
        items[start : start + removed] = added
    assert items == new


def test_a_few_changed_items_travel_alone() -> None:
    old = list(range(1000))
    new = [*old[:10], -1, *old[11:500], -2, *old[501:], 1000]
    assert array_patch(old, new) == [(10, 1, [-1]), (500, 1, [-2]), (1000, 0, [1000])]
    many = [-x for x in old]
    assert array_patch(old, many) == [(1, 999, many[1:])]  # 0 == -0 stays
    assert len(array_patch(old, many)) <= SPARSE_UP_TO


def graph(count: int, edges_per_node: int) -> tuple[list[dict], list[dict]]:
    nodes = [
        {"id": f"n{i}", "label": f"N{i}", "type": _kind(i), "position": {"x": i, "y": i % 9}}
        for i in range(count)
    ]
    edges = [
        {"id": f"e{i}-{k}", "source": f"n{i}", "target": f"n{(i * 7 + k + 1) % count}"}
        for i in range(count)
        for k in range(edges_per_node)
    ]
    return nodes, edges


def _kind(index: int) -> str:
    # Types of different sizes: the legend's order (commonest first) stays when one is added.
    return "gene" if index % 2 else ("disease" if index % 4 == 0 else "chemical")


def changes(nodes: list[dict], edges: list[dict]) -> list[tuple[str, list[dict], list[dict]]]:
    added = {"id": "new", "label": "new", "type": "gene"}
    linked = {"id": "e-new", "source": "new", "target": "n3"}
    return [
        ("add a node", [*nodes, added], edges),
        ("add a node and an edge", [*nodes, added], [*edges, linked]),
        ("rename a node", [{**nodes[4], "label": "renamed"}, *nodes[:4], *nodes[5:]], edges),
        ("remove a node", nodes[:7] + nodes[8:], [e for e in edges if "n7" not in e.values()]),
        ("remove an edge", nodes, edges[:5] + edges[6:]),
    ]


def test_patches_of_live_changes_on_small_and_dense_graphs() -> None:
    for count, per_node in ((40, 2), (1200, DENSE_EDGES_FROM // 1000)):
        nodes, edges = graph(count, per_node)
        before = drawing(nodes, edges, place(nodes, edges), version=1)
        for name, after_nodes, after_edges in changes(nodes, edges):
            after = drawing(
                after_nodes,
                after_edges,
                place(after_nodes, after_edges, before.placement.positions),
                version=2,
            )
            patch = option_patch(before.options, after.options)
            assert patch is not None, name
            assert applied(before.options, patch) == after.options, name
            if name.startswith("add"):  # a small patch: the change, not the graph
                assert len(str(patch)) < 2000, (name, len(str(patch)))


def test_a_new_type_changes_the_legend_and_needs_a_full_drawing() -> None:
    nodes, edges = graph(30, 1)
    before = drawing(nodes, edges, place(nodes, edges))
    grown = [*nodes, {"id": "p", "label": "P", "type": "pathway"}]
    after = drawing(grown, edges, place(grown, edges, before.placement.positions))
    assert option_patch(before.options, after.options) is None
