"""The graph view: one knowledge graph drawn with ECharts' `graph` series (bundled with NiceGUI).

It is the one reusable component for graphs: artifacts and the Graph Mode editor use it. It draws
a `Drawing` (`graphwright.drawing`, shared with the MCP Apps views: nodes, edges, server-side
positions and the ECharts option built from them): zoom, pan, drag, colours by type with a
legend (click a type to hide it), labels (those that would overlap hidden), and a callback
when a node or an edge is clicked. Its root element carries `data-version` (the graph version
shown) and, once ECharts has finished drawing it, `data-drawn-version`, for tests and benchmarks.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any

import orjson
from nicegui import events, ui

from graphwright.drawing.graph import Drawing, Item, drawing
from graphwright.drawing.layout import Placement

# In the page: the option each chart shows, kept as a plain object. A patch splices its arrays
# and hands ECharts only the series that changed (merged, so zoom and pan stay); draws and
# patches that come before the chart exists are applied to the kept option and drawn once it
# does, in order. It is defined by the first call that needs it (views can appear after the
# page has loaded).
BROWSER_SIDE = """
window.gwGraph = window.gwGraph || (() => {
  const states = {};
  const splice = (items, splices) => {
    for (let k = splices.length - 1; k >= 0; k--) {
      const [start, removed, added] = splices[k];
      if (removed === 1 && added.length === 1) items[start] = added[0];
      else items = items.slice(0, start).concat(added, items.slice(start + removed));
    }
    return items;
  };
  const flush = (id) => {
    const state = states[id], element = getElement(id);
    if (!element || !element.chart) {
      if (!state.waiting) {
        state.waiting = true;
        setTimeout(() => { state.waiting = false; flush(id); }, 20);
      }
      return;
    }
    const html = getHtmlElement(id);
    html.dataset.version = state.version;
    if (state.full) {
      element.chart.setOption(state.option, {notMerge: true});
    } else if (state.changed.size) {
      const series = state.option.series.map((one, index) => {
        if (!state.changed.has(index)) return {};
        const changed = {data: one.data};
        if (one.links) changed.links = one.links;
        return changed;
      });
      element.chart.setOption({series});
    } else {
      html.dataset.drawnVersion = state.version;  // nothing to redraw: drawn as it is
    }
    state.full = false;
    state.changed.clear();
  };
  return {
    draw(id, option, version) {
      const waiting = states[id] ? states[id].waiting : false;
      states[id] = {option, version, full: true, changed: new Set(), waiting};
      flush(id);
    },
    patch(id, changes, version) {
      const state = states[id];
      if (!state) return;
      for (const change of changes) {
        const series = state.option.series[change.index];
        for (const key of ['data', 'links']) {
          if (change[key]) series[key] = splice(series[key] || [], change[key]);
        }
        state.changed.add(change.index);
      }
      state.version = version;
      flush(id);
    },
  };
})();
"""
Pick = Callable[[str], Any]
CLICK_ARGS = ["componentType", "seriesIndex", "dataIndex", "dataType", "data"]


def _version(shown: Drawing) -> str:
    return orjson.dumps("" if shown.version is None else str(shown.version)).decode()


class GraphView:
    def __init__(
        self,
        *,
        on_node: Pick | None = None,
        on_edge: Pick | None = None,
        height: str = "65vh",
    ) -> None:
        self.on_node = on_node
        self.on_edge = on_edge
        self.shown: Drawing | None = None
        with ui.column().classes("w-full gap-1") as self.root:
            self.note = (
                ui.label()
                .classes("text-sm bg-sky-100 text-sky-950 px-2 py-1 rounded")
                .mark("graph-note")
                .props('data-testid="graph-note"')
            )
            self.note.set_visibility(False)
            self.chart = (
                ui.echart({"series": []})
                .classes("w-full border rounded")
                .style(f"height: {height}; min-height: 320px")
                .props('role="img" aria-label="Knowledge graph; click a node for its details"')
                .mark("graph-chart")
                .props('data-testid="graph-chart"')
            )
            # What the chart shows is drawn in the page (BROWSER_SIDE), never through the
            # element's `options`. NiceGUI's update method would set those empty options with
            # notMerge, wiping the graph, each time the element reaches the page again, as every
            # chart created after the page loaded does (the page can run it after the drawing).
            self.chart._update_method = None
        # NiceGUI's on_point_click needs a `value`, which graph nodes have not: read the click
        # (only what tells the item apart) from ECharts' own event.
        self.chart.on("componentClick", self._clicked, CLICK_ARGS)
        # A right-click picks the item under the pointer first, so the context menu's actions
        # act on it and not on whatever was clicked before.
        self.chart.on("chart:contextmenu", self._clicked, CLICK_ARGS)
        self.chart.on(
            "chart:finished",
            js_handler=(
                f"() => {{ const el = getHtmlElement({self.chart.id}); "
                "if (el) el.dataset.drawnVersion = el.dataset.version || ''; }"
            ),
        )

    def draw(self, shown: Drawing) -> None:
        """Send the whole drawing to the browser and draw it there in one go.

        The option goes to ECharts as a plain object, not through the element's reactive
        `options` property: Vue would wrap tens of thousands of nodes and links in proxies,
        which costs the browser more than drawing them.
        """
        self._shown(shown)
        self._run(f"gwGraph.draw({self.chart.id}, {shown.option_json}, {_version(shown)})")

    def update(self, shown: Drawing) -> None:
        """Show `shown` in place of the drawing on screen, sending and redrawing only the nodes
        and edges that changed (zoom and pan stay); the whole drawing when more changed."""
        changes = shown.patch_from(self.shown) if self.shown else None
        if changes is None:
            self.draw(shown)
            return
        self._shown(shown)
        self._run(f"gwGraph.patch({self.chart.id}, {changes}, {_version(shown)})")

    def _run(self, call: str) -> None:
        self.chart.client.run_javascript(BROWSER_SIDE + call)

    def _shown(self, shown: Drawing) -> None:
        self.shown = shown
        note = shown.placement.note
        self.note.text = note or ""
        self.note.set_visibility(bool(note))

    def show(
        self,
        nodes: Sequence[Item],
        edges: Sequence[Item],
        placement: Placement,
        *,
        version: int | None = None,
        highlight: Collection[str] = (),
        hidden_types: Collection[str] = (),
    ) -> None:
        self.update(
            drawing(
                nodes,
                edges,
                placement,
                version=version,
                highlight=highlight,
                hidden_types=hidden_types,
            )
        )

    async def _clicked(self, event: events.GenericEventArguments) -> None:
        click = event.args if isinstance(event.args, dict) else {}
        if self.shown is None or click.get("componentType") != "series":
            return
        data_index = int(click.get("dataIndex", -1))
        if self.shown.series_node_ids is not None:
            members = self.shown.series_node_ids
            index = int(click.get("seriesIndex", 0)) - 1  # series 0 holds the edges
            found = members[index] if 0 <= index < len(members) else []
            item_id = found[data_index] if 0 <= data_index < len(found) else None
            callback = self.on_node
        elif click.get("dataType") == "edge":
            ids, callback = self.shown.link_ids, self.on_edge
            item_id = ids[data_index] if 0 <= data_index < len(ids) else None
        else:
            data = click.get("data")
            item_id, callback = (data.get("id") if isinstance(data, dict) else None), self.on_node
        if not item_id or callback is None:
            return
        result = callback(str(item_id))
        if inspect.isawaitable(result):
            await result
