"""The `graphwright` command. Each sub-command lives in its own module here and calls services."""

from __future__ import annotations

import atexit
import gc

import typer

from graphwright.cli import chat, demo, doctor, graph, kb, mcp, serve, token
from graphwright.cli.common import PlainCommand, PlainGroup

app = typer.Typer(
    name="graphwright",
    help="Turn AI tool calls into knowledge: merged graphs, bibliographies, versioned graphs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=PlainGroup,
)
app.add_typer(graph.app, name="graph")
app.command("demo", cls=PlainCommand)(demo.demo)
app.command("serve", cls=PlainCommand)(serve.serve)
app.add_typer(token.app, name="token")
app.add_typer(kb.app, name="kb")
app.command("mcp", cls=PlainCommand)(mcp.mcp)
app.command("chat", cls=PlainCommand)(chat.chat)
app.command("doctor", cls=PlainCommand)(doctor.doctor)


def main() -> None:
    """The `graphwright` command. At exit, what the command imported and made is frozen rather
    than collected: the interpreter's last garbage collection scanned every object of the
    modules (some 350,000 after `serve`'s imports), about a second of CPU that freed nothing a
    process ending then needs freed."""
    atexit.register(gc.freeze)
    app()
