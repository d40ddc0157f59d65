"""Chat orchestration: MCP clients, the LLM tool loop, Graph Mode routing, the chat API."""
