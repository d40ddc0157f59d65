// The MCP Apps bibliography view: the view (bibliography.js) mounted on the page, fed by the host.

const bibliographyView = mount(document.body, {
  openLink: (url) => openExternal(bibliographyBridge, url),
});
const bibliographyBridge = new McpAppBridge({
  name: "graphwright-bibliography",
  version: "1.0.0",
  handlers: {
    toolInput: () => bibliographyView.toolInput(),
    toolResult: (result) => bibliographyView.render(result),
    toolCancelled: (params) => bibliographyView.cancelled(params),
  },
});
bibliographyBridge.connect().catch((error) =>
  bibliographyView.setStatus(`Not connected to an MCP Apps host: ${error.message}`, true));
