"""Shared CLI plumbing: one clear line on stderr and exit status 2 for bad input."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

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


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Rows as a table when it fits the terminal; otherwise each row as a block of `column
    value` lines (as psql's expanded display), so that no value is ever cut to "stat…"."""
    widths = [
        max([len(column), *(_width(row[index]) for row in rows)])
        for index, column in enumerate(columns)
    ]
    if sum(widths) + 3 * len(columns) + 1 <= console.width:  # padding and borders of each cell
        table = Table(*columns)
        for row in rows:
            table.add_row(*map(escape, row))
        console.print(table)
        return
    name_width = max(len(column) for column in columns)
    for number, row in enumerate(rows):
        record = Table.grid(padding=(0, 2))
        record.add_column(style="bold", no_wrap=True, min_width=name_width)
        record.add_column(overflow="fold")
        for column, value in zip(columns, row, strict=True):
            record.add_row(column, escape(value))
        if number:
            console.print()
        console.print(record)


def _width(value: str) -> int:
    return max((len(line) for line in value.splitlines()), default=0)


def _plain_metavars(params: list[Any]) -> list[Any]:
    """Help without Typer's `<bool>` and `<str>` markers: a flag shows nothing, an option that
    takes a value shows its long name (`--output OUTPUT`) unless it has a metavar of its own,
    and an argument shows its name (`FILE...`), not its Python type (`<list[Path]>`)."""
    for param in params:
        if isinstance(param, TyperOption) and param.metavar is None:
            long = max(param.opts, key=len).lstrip("-") or param.name or "value"
            param.metavar = "" if param.is_flag else long.upper().replace("-", "_")
        elif isinstance(param, TyperArgument):
            param.display_type_rich = _no_type  # type: ignore[method-assign]
    return params


def _no_type(ctx: Any) -> None:
    return None


class PlainCommand(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_metavars(super().get_params(ctx))


class PlainGroup(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_metavars(super().get_params(ctx))
