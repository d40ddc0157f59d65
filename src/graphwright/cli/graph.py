"""`graphwright graph ...`: merge, convert and inspect knowledge-graph files."""

from __future__ import annotations

import typer

app = typer.Typer(help="Merge, convert and inspect knowledge-graph files.", no_args_is_help=True)
