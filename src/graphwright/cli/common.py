"""Shared CLI plumbing: one clear line on stderr and exit status 2 for bad input."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from graphwright.errors import GraphwrightError

console = Console()
err_console = Console(stderr=True)

EXIT_BAD_INPUT = 2


def fail(message: str) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_BAD_INPUT)


@contextmanager
def bad_input_exits(label: str = "") -> Iterator[None]:
    """Turn a GraphwrightError into one line naming `label` (a file, say) and exit status 2."""
    try:
        yield
    except GraphwrightError as exc:
        raise fail(f"{label}: {exc}" if label else str(exc)) from None
