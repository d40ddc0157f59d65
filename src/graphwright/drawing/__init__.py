"""Graphs drawn on the server for the browser to render: where each node goes (`layout`), the
ECharts option (`options`), the patch between two options (`patch`) and the `Drawing` of a graph
version (`graph`). Pure: no UI framework, so the web UI and the MCP Apps servers share it.
"""
