// The bibliography view (ui://graphwright/bibliography, booted by bibliography_page.js, and the
// notebook's BibliographyView): a citation table sorted by any column, with the BibTeX and RIS
// the server wrote (core.citation_formats) to copy or download. `mount(root, host)` draws into
// `root`, which holds bibliography.html's markup; host: {openLink(url)}.
// mount returns {render(result), draw(payload), toolInput(), cancelled({reason}), setStatus}.

const VIEW_META = "graphwright/view";
export function mount(root, host) {
const find = (name) => root.querySelector(`[data-testid="${name}"]`);
const body = find("bibliography").querySelector("tbody");
const sorters = [...root.querySelectorAll("[data-sort]")];

let shown = null;
let order = { key: null, direction: 1 };
let downloadUrl = null;

function toolInput() {
  setStatus("Searching…");
}

function cancelled({ reason }) {
  setStatus(`The search was cancelled${reason ? `: ${reason}` : ""}.`, true);
}

function setStatus(text, error = false) {
  const status = find("view-status");
  status.textContent = text;
  status.classList.toggle("error", error);
}

function render(result) {
  const text = (result.content || []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
  if (result.isError) return setStatus(text || "The search failed.", true);
  const payload = (result._meta || {})[VIEW_META];
  if (!payload) return setStatus(text.split("\n")[0] || "No articles found.");
  draw(payload);
}

function draw(payload) {
  shown = payload;
  find("view-title").textContent = payload.title;
  find("bibliography-summary").textContent = `${payload.citations.length} references`;
  find("exports").replaceChildren(...Object.entries(payload.exports).map(([format, item]) =>
    el("button", { type: "button", "data-testid": `export-${format}`, onclick: () => showExport(format) }, item.label)));
  setStatus("");
  drawRows();
}

function compare(a, b) {
  const key = order.key;
  if (key === "year" || key === "pmid") return (Number(a[key]) || 0) - (Number(b[key]) || 0);
  return a[key].localeCompare(b[key], undefined, { sensitivity: "base" });
}

function drawRows() {
  const rows = [...shown.citations];
  if (order.key) rows.sort((a, b) => order.direction * compare(a, b));
  body.replaceChildren(...rows.map((row) => el("tr", { "data-testid": "citation" },
    el("td", {}, row.title),
    el("td", {}, row.authors),
    el("td", {}, row.journal),
    el("td", {}, row.year),
    el("td", {},
      row.pubmed ? link(row.pubmed, `PMID ${row.pmid}`) : "",
      row.doi ? [" ", link(row.doi, "DOI")] : "",
      row.synthetic ? el("span", { class: "badge" }, "synthetic") : ""),
  )));
  for (const sorter of sorters) {
    const active = sorter.dataset.sort === order.key;
    sorter.setAttribute("aria-sort", active ? (order.direction > 0 ? "ascending" : "descending") : "none");
  }
}

function link(url, text) {
  return el("a", { href: url, onclick: (event) => {
    event.preventDefault();
    host.openLink(url);
  } }, text);
}

function showExport(format) {
  const item = shown.exports[format];
  find("export-text").value = item.text;
  const download = find("export-download");
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  downloadUrl = URL.createObjectURL(new Blob([item.text], { type: "text/plain" }));
  download.href = downloadUrl;
  download.download = `references.${format === "bibtex" ? "bib" : "ris"}`;
  find("export-panel").hidden = false;
}

find("export-copy").addEventListener("click", async () => {
  const text = find("export-text");
  try {
    await navigator.clipboard.writeText(text.value);
    setStatus("Copied.");
  } catch {
    text.select();
    setStatus("Select the text and copy it (this host does not let views use the clipboard).");
  }
});

for (const sorter of sorters) {
  sorter.addEventListener("click", () => {
    const key = sorter.dataset.sort;
    order = { key, direction: order.key === key ? -order.direction : 1 };
    if (shown) drawRows();
  });
}

return { render, draw, toolInput, cancelled, setStatus };
}
