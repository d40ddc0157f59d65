"""One help style for every command: no Typer type markers (a flag shows nothing, an option its
name, an argument its name, not its Python type). The commands are found by walking the CLI, so
a new one is checked without being listed here."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from graphwright.cli import app


def every_command(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group (Typer ships its own click)
            found.extend(every_command(command, (*path, name)))
        else:
            found.append((*path, name))
    return found


COMMANDS = every_command(typer.main.get_command(app))


def test_the_walk_finds_the_kb_commands() -> None:
    assert ("kb", "requests") in COMMANDS and ("token", "list") in COMMANDS


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "graphwright")
def test_help_has_no_type_markers(command: tuple[str, ...]) -> None:
    outcome = CliRunner().invoke(app, [*command, "--help"], terminal_width=120)
    assert outcome.exit_code == 0, outcome.output
    for marker in ("<bool>", "<str>", "<int>", "<list[", "<Path>", "<path>", "<float>"):
        assert marker not in outcome.output, outcome.output
    options = outcome.output.split("─ Options ─", 1)[1].split("─ Commands ─", 1)[0]
    if command == ("graph", "merge"):
        assert "-o" in options and "OUTPUT" in options
