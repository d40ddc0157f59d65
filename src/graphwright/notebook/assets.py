"""The widgets' front end, built from the MCP Apps views' own files (mcp_apps/static).

A widget's ES module is its view's script (`graph.js` or `bibliography.js`, with its
`mount(root, host)`), the bridge's helpers and a small anywidget entry. The graph's ECharts,
from the installed NiceGUI as for the views, is carried inside it as text and imported from a
blob URL, so nothing is fetched from the network. The views' stylesheet applies inside the
widget's shadow root only.
"""

from __future__ import annotations

from functools import cache

import orjson

from graphwright.mcp_apps.echarts import echarts_module
from graphwright.mcp_apps.views import STATIC

WIDGET_ENTRY = """
const VIEW = %(view)s;
const MARKUP = %(markup)s;
const STYLE = %(style)s;
const ECHARTS = %(echarts)s;

async function loadEcharts() {
  if (ECHARTS === null || globalThis.echarts) return;
  const url = URL.createObjectURL(new Blob([ECHARTS], { type: "text/javascript" }));
  try {
    await import(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

export default {
  async render({ model, el }) {
    await loadEcharts();
    const root = el.attachShadow ? el.attachShadow({ mode: "open" }) : el;
    root.innerHTML = `<style>${STYLE}</style>${MARKUP}`;
    const view = mount(root, {
      graphMode: false,
      callTool: async () => { throw new Error("Edit the graph from Python (graphwright.Client)"); },
      openLink: (url) => window.open(url, "_blank", "noopener,noreferrer"),
    });
    const show = () => {
      const payload = model.get("payload");
      if (payload && payload.view === VIEW) {
        view.draw(payload);
        view.setStatus("");
      }
    };
    show();
    model.on("change:payload", show);
    return () => model.off("change:payload", show);
  },
};
"""


def _static(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


@cache
def shadow_css() -> str:
    """view.css for a shadow root: what it sets on the page's root and body, on the host."""
    return _static("view.css").replace(":root", ":host").replace("body {", ":host {")


def _esm(view: str, markup: str, script: str, echarts: str | None) -> str:
    entry = WIDGET_ENTRY % {
        "view": orjson.dumps(view).decode(),
        "markup": orjson.dumps(markup).decode(),
        "style": orjson.dumps(shadow_css()).decode(),
        "echarts": orjson.dumps(echarts).decode(),
    }
    return "\n".join([_static("bridge.js"), _static(script), entry])


@cache
def graph_esm() -> str:
    markup = _static("graph.html").replace("{{ title }}", "Knowledge graph")
    return _esm("graph", markup, "graph.js", echarts_module())


@cache
def bibliography_esm() -> str:
    markup = _static("bibliography.html").replace("{{ title }}", "References")
    return _esm("bibliography", markup, "bibliography.js", None)
