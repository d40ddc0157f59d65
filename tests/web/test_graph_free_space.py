"""Where a node that arrives without a position is drawn (issue 31, point 8): in free space near
its neighbours, or in the middle of the graph when it has none, clear of every other node's
symbol and label in the smallest view the graph is drawn in, with the nodes already drawn left
where they are. The browser test (test_browser_placement) measures the same on screen."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.drawing.free_space import Box, node_box, view_scale
from graphwright.drawing.layout import place
from graphwright.drawing.options import node_name, symbol_size

Rect = tuple[float, float, float, float]


def rects(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], positions: Any) -> dict:
    """Each node's box in layout units at the scale the nominal view shows the graph at."""
    degree: Counter[str] = Counter()
    for edge in edges:
        degree[edge["source"]] += 1
        degree[edge["target"]] += 1
    scale = view_scale(positions.values())
    out = {}
    for node in nodes:
        box: Box = node_box(node_name(node), symbol_size(degree[node["id"]]), labelled=True)
        x, y = positions[node["id"]]
        out[node["id"]] = (x + box.left / scale, y + box.top / scale,
                           x + box.right / scale, y + box.bottom / scale)  # fmt: skip
    return out


def overlap(a: Rect, b: Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def add_one_at_a_time(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], new: list[tuple[str, int | None]]
) -> tuple[dict, list[str]]:
    """Add each new node (with an edge to the node it names, if any) as a live change does: one
    version each, drawn with the positions of the version before. At each version, the nodes
    drawn before stay where they were, and the new node's box touches no other box (as drawn at
    that version: a node's symbol grows with its edges, so a later edge can make two touch)."""
    positions = place(nodes, edges).positions
    added = []
    for index, (label, neighbour) in enumerate(new):
        node_id = f"new{index}"
        nodes.append({"id": node_id, "label": label, "type": "gene"})
        if neighbour is not None:
            target = nodes[neighbour % len(nodes)]["id"]
            edges.append({"id": f"e-{node_id}", "source": node_id, "target": target})
        before = dict(positions)
        positions = place(nodes, edges, positions).positions
        assert {k: positions[k] for k in before} == before  # the rest stays where it was
        boxes = rects(nodes, edges, positions)
        clashes = [k for k, r in boxes.items() if k != node_id and overlap(boxes[node_id], r)]
        assert clashes == [], f"{node_id} overlaps {clashes}"
        added.append(node_id)
    return positions, added


labels = st.text("ABCDEFGHKMNPRSTXY0123456789-", min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(labels, st.floats(-1000, 1000), st.floats(-1000, 1000)), min_size=2, max_size=30
    ),
    st.lists(st.tuples(labels, st.none() | st.integers(0, 100)), min_size=1, max_size=10),
)
def test_new_nodes_go_where_no_box_overlaps_and_the_rest_stay(
    existing: list[tuple[str, float, float]], new: list[tuple[str, int | None]]
) -> None:
    nodes = [
        {"id": f"n{i}", "label": label, "type": "gene", "position": {"x": x, "y": y}}
        for i, (label, x, y) in enumerate(existing)
    ]
    edges: list[dict[str, Any]] = []
    first = place(nodes, edges).positions
    positions, _ = add_one_at_a_time(nodes, edges, new)
    # Room was left: the graph is drawn at the scale it had, so boxes apart stay apart.
    assert view_scale(positions.values()) == view_scale(first.values())


def test_nodes_with_no_links_are_not_put_in_a_line() -> None:
    """The defect: five unlinked nodes landed 24 px apart on one line, labels run together."""
    nodes = [{"id": f"n{i}", "label": f"GENE{i}", "type": "gene"} for i in range(20)]
    edges = [{"id": f"e{i}", "source": f"n{i}", "target": f"n{(i + 1) % 20}"} for i in range(20)]
    new = [(symbol, None) for symbol in ("MYC", "EGFR", "KRAS", "TP53", "BRCA1")]
    positions, added = add_one_at_a_time(nodes, edges, new)
    boxes = rects(nodes, edges, positions)  # no edges added: every box is as it was placed
    for node_id in added:
        assert not any(overlap(boxes[node_id], r) for k, r in boxes.items() if k != node_id)
    middle = sum(x for x, _ in positions.values()) / len(positions)
    assert all(abs(positions[k][0] - middle) < 1000 for k in added)  # in the graph, not beside it


def test_a_crowded_graph_grows_past_its_room_to_a_free_spot() -> None:
    # 10 rows of 25, as wide as the view: rows 24 px apart, labels 140 px wide, 24 px apart.
    nodes = [{"id": f"n{i}", "label": "A-VERY-LONG-LABEL", "type": "gene",
              "position": {"x": (i % 25) * 100.0, "y": (i // 25) * 100.0}}
             for i in range(250)]  # fmt: skip
    positions, _ = add_one_at_a_time(nodes, [], [("NEW", None)])  # its box clear, as checked
    x, y = positions["new0"]
    assert not (0 <= x <= 2400 and 0 <= y <= 900)  # beside the block, not in it


def test_a_neighbour_on_the_edge_gets_its_new_node_inside_the_picture() -> None:
    """The room ends at the right-hand node: its new neighbour goes beside it, inside, rather
    than beyond it, where the graph would be drawn smaller."""
    nodes = [
        {"id": node_id, "label": node_id, "type": "gene", "position": {"x": x, "y": 0.0}}
        for node_id, x in (("A", 0.0), ("B", 2500.0))
    ]
    before = view_scale(place(nodes, []).positions.values())
    positions, _ = add_one_at_a_time(nodes, [], [("NEW", 1)])
    assert view_scale(positions.values()) == before
    assert positions["new0"][0] < 2500
