"""`graphwright mcp NAME`: run one MCP server over stdio; `graphwright mcp list` names them."""

from __future__ import annotations

import typer

from graphwright import mcp_registry
from graphwright.cli.common import bad_input_exits, console

LIST = "list"
STORE_READERS = frozenset({"knowledge", "miner"})  # the servers that open the knowledge base


def mcp(
    name: str = typer.Argument(
        ..., help=f"Server to run over stdio ({', '.join(mcp_registry.names())}), or 'list'."
    ),
) -> None:
    """Run the MCP server NAME over stdio (for Claude Desktop, MCP Inspector, any MCP client)."""
    if name == LIST:
        for server_name in mcp_registry.names():
            console.print(server_name, highlight=False)
        return
    from graphwright import mcpkit  # the MCP SDK, for this command only
    from graphwright.knowledge.beside import through_running_server
    from graphwright.settings import get_settings

    if name not in STORE_READERS:
        with bad_input_exits():
            server = mcp_registry.create(name)
        mcpkit.run_stdio(server)
        return
    with through_running_server(get_settings(), actor=f"mcp {name}") as settings:
        with bad_input_exits():
            server = mcp_registry.create(name, settings=settings)
        mcpkit.run_stdio(server)
