"""Free space for a node that arrives without a position: the spot nearest its neighbours (the
middle of the graph when it has none) where its symbol and label touch no other node's.

Positions are layout units, and ECharts fits the nodes' bounding box into the chart, so a label
of a fixed size in pixels covers more units on a spread-out graph. Boxes are sized in pixels for
a nominal view no bigger than any graph view at 1280 px wide (`VIEW`), and turned into units at
the scale that view would show the graph at. A bigger view shows everything larger, so boxes apart
in the nominal view stay apart on screen.

A spot is taken inside the *room* when there is one: the area the bounding box can grow into
without the view shrinking the graph. Nodes placed there leave the scale as it was, so the boxes
of the nodes placed before stay apart too. Only a graph with no room left grows beyond it.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from graphwright.drawing.options import LABEL_LINE, LABEL_PADDING

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # left, top, right, bottom

VIEW = (600.0, 240.0)  # px: the chat's graph at 1280 px wide is about 620 x 250
CHAR = 7.0  # px per character of an 11 px label in a wide sans (DejaVu Sans is about 6.5)
GAP = 5.0  # px between a symbol and its label (ECharts' label distance)
MARGIN = 2.0  # px kept clear around each box
STEP = 8.0  # px between the spots tried
CELL = 64.0  # px: the grid that finds the boxes near a spot
MIN_SPAN = 1000.0  # units: a graph narrower than this is scaled as if it were this wide


@dataclass(frozen=True, slots=True)
class Box:
    """The pixels a node covers around its centre: its symbol, and its label on the right."""

    left: float
    top: float
    right: float
    bottom: float


def node_box(label: str, symbol: float, *, labelled: bool) -> Box:
    return _box(len(label) if labelled else 0, symbol, labelled)


@functools.lru_cache(maxsize=4096)  # a graph has few distinct label lengths and degrees
def _box(chars: int, symbol: float, labelled: bool) -> Box:
    half = symbol / 2
    if not labelled:
        return Box(-half - MARGIN, -half - MARGIN, half + MARGIN, half + MARGIN)
    reach = max(half, LABEL_LINE / 2)
    width = half + GAP + 2 * LABEL_PADDING + CHAR * chars
    return Box(-half - MARGIN, -reach - MARGIN, width + MARGIN, reach + MARGIN)


def view_scale(points: Iterable[Point]) -> float:
    """Pixels per layout unit when the nominal view shows these points."""
    listed = list(points) or [(0.0, 0.0)]
    xs, ys = [x for x, _ in listed], [y for _, y in listed]
    width = max(max(xs) - min(xs), MIN_SPAN)
    height = max(max(ys) - min(ys), MIN_SPAN)
    return min(VIEW[0] / width, VIEW[1] / height)


class FreeSpace:
    """The boxes of the nodes drawn so far, indexed by grid cell, and spots free of them."""

    def __init__(self, positions: Mapping[str, Point], boxes: Mapping[str, Box]) -> None:
        self._points = dict(positions)
        self._boxes = dict(boxes)
        self._index()

    def _index(self) -> None:
        points = list(self._points.values())
        self.scale = view_scale(points)
        self._cell = CELL / self.scale
        self._grid: dict[tuple[int, int], list[Rect]] = defaultdict(list)
        xs = [x for x, _ in points] or [0.0]
        ys = [y for _, y in points] or [0.0]
        self._bounds = [min(xs), min(ys), max(xs), max(ys)]
        boxes = self._boxes
        for node_id, point in self._points.items():  # the loop a big graph pays for: kept lean
            self._mark(self._rect(point, boxes[node_id]))

    @property
    def middle(self) -> Point:
        left, top, right, bottom = self._bounds
        return (left + right) / 2, (top + bottom) / 2

    def add(self, node_id: str, box: Box, near: Point) -> Point:
        """Place `node_id` at the free spot nearest `near`, and keep its box clear from now on."""
        spot, inside = self._spot(box, near)
        self._points[node_id], self._boxes[node_id] = spot, box
        if inside:
            self._mark(self._rect(spot, box))
            left, top, right, bottom = self._bounds
            self._bounds = [min(left, spot[0]), min(top, spot[1]),
                            max(right, spot[0]), max(bottom, spot[1])]  # fmt: skip
        else:  # the graph grew past its room: it is drawn smaller, and boxes cover more units
            self._index()
        return spot

    def _spot(self, box: Box, near: Point) -> tuple[Point, bool]:
        """The nearest free spot in the room, else the nearest free one outside it."""
        room = self._room()
        step = STEP / self.scale
        # Rings further out than the room's farthest edge from `near` hold no spot in it.
        last = max(near[0] - room[0], room[2] - near[0], near[1] - room[1], room[3] - near[1])
        outside: Point | None = None
        for radius, ring in enumerate(_rings()):
            if outside is not None and radius * step > last:
                return outside, False
            for dx, dy in ring:
                # Rounded before it is tried: the box tried is the box kept.
                spot = (round(near[0] + dx * step, 2), round(near[1] + dy * step, 2))
                rect = self._rect(spot, box)
                inside = _within(rect, room)
                if (inside or outside is None) and self._free(rect):
                    if inside:
                        return spot, True
                    outside = spot
        raise AssertionError("unreachable: rings go on")  # pragma: no cover

    def _room(self) -> Rect:
        left, top, right, bottom = self._bounds
        wide, tall = VIEW[0] / self.scale, VIEW[1] / self.scale
        return right - wide, bottom - tall, left + wide, top + tall

    def _rect(self, point: Point, box: Box) -> Rect:
        (x, y), scale = point, self.scale
        return (
            x + box.left / scale,
            y + box.top / scale,
            x + box.right / scale,
            y + box.bottom / scale,
        )

    def _cells(self, rect: Rect) -> Iterator[tuple[int, int]]:
        cell = self._cell
        for i in range(math.floor(rect[0] / cell), math.floor(rect[2] / cell) + 1):
            for j in range(math.floor(rect[1] / cell), math.floor(rect[3] / cell) + 1):
                yield i, j

    def _mark(self, rect: Rect) -> None:
        cell = self._cell
        left, top = math.floor(rect[0] / cell), math.floor(rect[1] / cell)
        right, bottom = math.floor(rect[2] / cell), math.floor(rect[3] / cell)
        if left == right and top == bottom:
            self._grid[left, top].append(rect)
            return
        for key in self._cells(rect):
            self._grid[key].append(rect)

    def _free(self, rect: Rect) -> bool:
        left, top, right, bottom = rect
        for key in self._cells(rect):
            for other in self._grid.get(key, ()):
                if left < other[2] and other[0] < right and top < other[3] and other[1] < bottom:
                    return False
        return True


def _within(rect: Rect, room: Rect) -> bool:
    return room[0] <= rect[0] and room[1] <= rect[1] and rect[2] <= room[2] and rect[3] <= room[3]


def _rings() -> Iterator[list[tuple[int, int]]]:
    """Grid offsets ring by ring (all at Chebyshev distance r), nearest first in each ring."""
    yield [(0, 0)]
    radius = 1
    while True:
        ring = [(dx, dy) for dx in range(-radius, radius + 1) for dy in (-radius, radius)]
        ring += [(dx, dy) for dx in (-radius, radius) for dy in range(-radius + 1, radius)]
        ring.sort(key=lambda offset: offset[0] ** 2 + offset[1] ** 2)
        yield ring
        radius += 1
