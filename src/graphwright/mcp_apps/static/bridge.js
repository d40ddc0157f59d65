// The view's side of the MCP Apps bridge (io.modelcontextprotocol/ui, spec 2026-01-26).
//
// A view talks to its host with JSON-RPC 2.0 messages over window.postMessage. This is a small
// implementation of the messages graphwright's views use, written from the specification:
//
//   view -> host   ui/initialize (request)            {protocolVersion, appInfo, appCapabilities}
//   view -> host   ui/notifications/initialized       once the initialize result has arrived
//   host -> view   ui/notifications/tool-input        {arguments} of the tool call shown
//   host -> view   ui/notifications/tool-result       the CallToolResult
//   host -> view   ui/notifications/tool-cancelled    {reason}
//   host -> view   ui/notifications/host-context-changed  part of the host context
//   host -> view   ui/resource-teardown, ping (requests): answered with {}
//   view -> host   tools/call (request)               {name, arguments}: proxied to the server
//   view -> host   ui/open-link (request)             {url}: the host opens it
//   view -> host   ui/notifications/size-changed      {width, height} whenever the page resizes
//
// Only messages from the parent window are read. Requests time out after `timeoutMs`.

const PROTOCOL_VERSION = "2026-01-26";

class McpAppBridge {
  constructor({ name, version, handlers = {}, timeoutMs = 60000, target = window.parent }) {
    this.appInfo = { name, version };
    this.handlers = handlers; // toolInput, toolResult, toolCancelled, hostContext, teardown
    this.timeoutMs = timeoutMs;
    this.target = target;
    this.nextId = 1;
    this.pending = new Map();
    this.hostContext = {};
    this.hostCapabilities = {};
    this.lastSize = null;
    window.addEventListener("message", (event) => this.receive(event));
  }

  async connect() {
    const result = await this.request("ui/initialize", {
      protocolVersion: PROTOCOL_VERSION,
      appInfo: this.appInfo,
      appCapabilities: { availableDisplayModes: ["inline"] },
    });
    this.hostCapabilities = result.hostCapabilities || {};
    this.updateContext(result.hostContext || {});
    this.notify("ui/notifications/initialized", {});
    this.watchSize();
    return result;
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`The host did not answer ${method} in time`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.post({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method, params) {
    this.post({ jsonrpc: "2.0", method, params });
  }

  callTool(name, args) {
    return this.request("tools/call", { name, arguments: args });
  }

  openLink(url) {
    return this.request("ui/open-link", { url });
  }

  post(message) {
    this.target.postMessage(message, "*");
  }

  receive(event) {
    const message = event.data;
    if (event.source !== this.target || !message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined) {
      this.settle(message);
    } else if (message.id !== undefined) {
      this.answer(message);
    } else {
      this.dispatch(message.method, message.params || {});
    }
  }

  settle(message) {
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.error) {
      waiting.reject(new Error(message.error.message || "The host refused the request"));
    } else {
      waiting.resolve(message.result || {});
    }
  }

  answer(message) {
    const reply = (body) => this.post({ jsonrpc: "2.0", id: message.id, ...body });
    if (message.method === "ping") return reply({ result: {} });
    if (message.method === "ui/resource-teardown") {
      this.call("teardown", message.params || {});
      return reply({ result: {} });
    }
    reply({ error: { code: -32601, message: `Method not found: ${message.method}` } });
  }

  dispatch(method, params) {
    if (method === "ui/notifications/tool-input") this.call("toolInput", params.arguments || {});
    else if (method === "ui/notifications/tool-result") this.call("toolResult", params);
    else if (method === "ui/notifications/tool-cancelled") this.call("toolCancelled", params);
    else if (method === "ui/notifications/host-context-changed") this.updateContext(params);
  }

  updateContext(context) {
    this.hostContext = { ...this.hostContext, ...context };
    document.documentElement.dataset.theme = this.hostContext.theme || "light";
    const variables = (this.hostContext.styles || {}).variables || {};
    for (const [name, value] of Object.entries(variables)) {
      if (name.startsWith("--") && value) document.documentElement.style.setProperty(name, value);
    }
    this.call("hostContext", this.hostContext);
  }

  call(handler, value) {
    const fn = this.handlers[handler];
    if (fn) fn(value);
  }

  // The host sizes the iframe to the page: report the size whenever it changes.
  watchSize() {
    let queued = false;
    const report = () => {
      queued = false;
      const root = document.documentElement;
      const size = { width: Math.ceil(root.scrollWidth), height: Math.ceil(root.scrollHeight) };
      if (this.lastSize && this.lastSize.width === size.width && this.lastSize.height === size.height) return;
      this.lastSize = size;
      this.notify("ui/notifications/size-changed", size);
    };
    const schedule = () => {
      if (!queued) {
        queued = true;
        requestAnimationFrame(report);
      }
    };
    new ResizeObserver(schedule).observe(document.body);
    schedule();
  }
}

// Open a link through the host (a sandboxed view may not navigate), else in a new tab.
function openExternal(bridge, url) {
  bridge.openLink(url).catch(() => window.open(url, "_blank", "noopener,noreferrer"));
}

// A DOM element: el("a", {href: url, class: "x"}, "text", child, ...).
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) node.append(child);
  }
  return node;
}
