// The MCP Apps graph views: the graph view (graph.js) mounted on the page, fed by the host.

const graphView = mount(document.body, {
  graphMode: document.body.dataset.view === "graph-mode",
  callTool: (name, args) => graphBridge.callTool(name, args),
  openLink: (url) => openExternal(graphBridge, url),
});
const graphBridge = new McpAppBridge({
  name: "graphwright-graph",
  version: "1.0.0",
  handlers: {
    toolInput: (args) => graphView.toolInput(args),
    toolResult: (result) => graphView.render(result),
    toolCancelled: (params) => graphView.cancelled(params),
  },
});
graphBridge.connect().catch((error) =>
  graphView.setStatus(`Not connected to an MCP Apps host: ${error.message}`, true));
