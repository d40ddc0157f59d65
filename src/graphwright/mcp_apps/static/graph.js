// The graph view, drawn by the MCP Apps views (ui://graphwright/knowledge-graph and
// ui://graphwright/graph-mode, booted by graph_page.js) and by the notebook widget
// (graphwright.notebook): `mount(root, host)` draws into `root`, which holds graph.html's markup.
//
// The server sends everything drawn: the ECharts option (positions, colours by category, the
// legend) and the nodes' and links' details, under the result's _meta["graphwright/view"]. This
// script renders it, searches it, shows a clicked node's or link's details with evidence links,
// and in Graph Mode calls undo, redo and getGraphState through the host.
//
// host: {graphMode: bool, callTool(name, args) -> Promise<result>, openLink(url)}.
// mount returns {render(result), draw(payload), toolInput(args), cancelled({reason})}.

const VIEW_META = "graphwright/view";
const MAX_MATCHES = 20;
const MAX_LINKS_LISTED = 50;
export function mount(root, host) {
const graphMode = Boolean(host.graphMode);
const find = (name) => root.querySelector(`[data-testid="${name}"]`);
const chartElement = find("graph-chart");
const search = find("graph-search");
const details = find("node-details");
const matches = find("graph-matches");
const actions = [...root.querySelectorAll("[data-action]")];

let chart = null;
let shown = null; // the payload drawn
let indexOf = new Map(); // node id -> data index in the graph series
let toolArguments = {};

function toolInput(args) {
  toolArguments = args;
  setStatus("Running the tool…");
}

function cancelled({ reason }) {
  setStatus(`The tool call was cancelled${reason ? `: ${reason}` : ""}.`, true);
}

function setStatus(text, error = false) {
  const status = find("view-status");
  status.textContent = text;
  status.classList.toggle("error", error);
}

function textOf(result) {
  return (result.content || []).filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

function render(result) {
  if (result.isError) {
    setStatus(textOf(result) || "The tool failed.", true);
    return;
  }
  const payload = (result._meta || {})[VIEW_META];
  if (!payload) {
    setStatus(`${textOf(result).split("\n")[0]} (this result carries no graph to draw)`);
    return;
  }
  draw(payload);
  setStatus(graphMode ? textOf(result).split("\n")[0] : "");
}

function draw(payload) {
  shown = payload;
  find("view-title").textContent = payload.title;
  const version = payload.version === null || payload.version === undefined ? "" : ` · version ${payload.version}`;
  find("graph-summary").textContent = `${payload.nodeCount} nodes · ${payload.edgeCount} links${version}`;
  const note = find("graph-note");
  note.textContent = payload.note || "";
  note.hidden = !payload.note;
  details.hidden = true;
  chartElement.hidden = Boolean(payload.tooLarge);
  if (payload.tooLarge) return;
  const series = payload.option.series[0];
  indexOf = new Map(payload.seriesNodeIds ? [] : series.data.map((item, index) => [item.id, index]));
  chartElement.dataset.version = String(payload.version ?? "");
  if (chart === null) {
    chart = echarts.init(chartElement);
    chart.on("click", clicked);
    chart.on("finished", () => {
      chartElement.dataset.drawnVersion = chartElement.dataset.version;
    });
    window.addEventListener("resize", () => chart.resize());
  }
  chart.setOption(payload.option, { notMerge: true });
  applySearch();
}

function clicked(event) {
  if (shown.seriesNodeIds) {
    const ids = shown.seriesNodeIds[event.seriesIndex - 1] || []; // series 0 draws the links
    showNode(ids[event.dataIndex]);
  } else if (event.dataType === "edge") {
    showEdge(shown.linkIds[event.dataIndex]);
  } else if (event.data && event.data.id) {
    showNode(event.data.id);
  }
}

function nameOf(id) {
  return (shown.nodes[id] || {}).name || id;
}

function evidenceLinks(edge) {
  return edge.evidence.map((item) =>
    el("a", { href: item.url, "data-testid": "evidence-link", onclick: (event) => {
      event.preventDefault();
      host.openLink(item.url);
    } }, item.text),
  );
}

function edgeLine(edge) {
  const links = evidenceLinks(edge);
  return el("li", {}, `${nameOf(edge.source)} —${edge.label}→ ${nameOf(edge.target)}`,
    links.length ? " · evidence: " : "", links.flatMap((link, i) => (i ? [", ", link] : [link])));
}

function showNode(id) {
  const node = shown.nodes[id];
  if (!node) return;
  const touching = shown.edges.filter((edge) => edge.source === id || edge.target === id);
  const properties = Object.entries(node.properties).map(([key, value]) => [
    el("dt", {}, key), el("dd", {}, typeof value === "string" ? value : JSON.stringify(value)),
  ]);
  details.replaceChildren(
    el("h2", {}, node.name),
    el("p", { class: "meta" }, `${id} · ${node.type}`),
    properties.length ? el("dl", {}, properties) : "",
    el("p", {}, `${touching.length} link${touching.length === 1 ? "" : "s"}`),
    el("ul", {}, touching.slice(0, MAX_LINKS_LISTED).map(edgeLine)),
  );
  details.hidden = false;
}

function showEdge(id) {
  const edge = shown.edges.find((item) => item.id === id);
  if (!edge) return;
  details.replaceChildren(el("h2", {}, edge.label || "link"), el("ul", {}, edgeLine(edge)));
  details.hidden = false;
}

function applySearch() {
  const text = search.value.trim().toLowerCase();
  const hits = !text || !shown || shown.tooLarge ? [] : Object.entries(shown.nodes)
    .filter(([id, node]) => id.toLowerCase().includes(text) || node.name.toLowerCase().includes(text))
    .map(([id]) => id);
  if (chart !== null && !shown.seriesNodeIds) {
    chart.dispatchAction({ type: "downplay", seriesIndex: 0 });
    const dataIndex = hits.map((id) => indexOf.get(id)).filter((index) => index !== undefined);
    if (dataIndex.length) chart.dispatchAction({ type: "highlight", seriesIndex: 0, dataIndex });
  }
  matches.replaceChildren(...hits.slice(0, MAX_MATCHES).map((id) =>
    el("li", {}, el("button", { type: "button", "data-testid": "graph-match", onclick: () => showNode(id) }, nameOf(id)))));
  if (text) matches.append(el("li", { class: "status" }, `${hits.length} match${hits.length === 1 ? "" : "es"}`));
  matches.hidden = !text;
}

async function act(button) {
  const tool = button.dataset.action;
  const args = tool === "getGraphState" ? { tokenBudget: 1000 } : {};
  if (toolArguments.databaseContext) args.databaseContext = toolArguments.databaseContext;
  actions.forEach((item) => { item.disabled = true; });
  setStatus(`${button.textContent}…`);
  try {
    render(await host.callTool(tool, args));
  } catch (error) {
    setStatus(error.message, true);
  } finally {
    actions.forEach((item) => { item.disabled = false; });
  }
}

search.addEventListener("input", applySearch);
find("graph-actions").hidden = !graphMode;
actions.forEach((button) => button.addEventListener("click", () => act(button)));
return { render, draw, toolInput, cancelled, setStatus };
}
