"""`graphwright doctor`: one line per check of this setup, with the fix for each failure."""

from __future__ import annotations

import typer
from rich.markup import escape

from graphwright.cli.common import console
from graphwright.settings import get_settings

MARKS = {"ok": "[green]✓[/]", "note": "[yellow]○[/]", "failed": "[red]✗[/]"}


def doctor() -> None:
    """Check the home folder, database, knowledge base, model, MCP servers, port and Chromium;
    exits with status 1 when a check fails."""
    from graphwright.doctor import Status, run_checks  # loads every room: only when it runs

    checks = run_checks(get_settings())
    width = max(len(check.name) for check in checks)
    for check in checks:
        fix = f" [dim]→ {escape(check.fix)}[/]" if check.fix else ""
        console.print(
            f"{MARKS[check.status.value]} {check.name:<{width}}  {escape(check.detail)}{fix}",
            highlight=False,
            soft_wrap=True,
        )
    failed = [check.name for check in checks if check.status is Status.FAILED]
    if failed:
        console.print(f"[red]{len(failed)} failed:[/] {', '.join(failed)}", highlight=False)
        raise typer.Exit(1)
