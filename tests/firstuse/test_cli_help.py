"""Help shows no Typer type markers: a flag shows nothing, an option its name, an argument its
name (not its Python type)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from graphwright.cli import app

COMMANDS = [
    [], ["graph"], ["graph", "merge"], ["graph", "convert"], ["graph", "stats"],
    ["graph", "export"], ["token"], ["token", "create"], ["token", "list"], ["token", "revoke"],
    ["demo"], ["serve"], ["mcp"], ["chat"],
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "graphwright")
def test_help_has_no_type_markers(command: list[str]) -> None:
    outcome = CliRunner().invoke(app, [*command, "--help"], terminal_width=120)
    assert outcome.exit_code == 0, outcome.output
    for marker in ("<bool>", "<str>", "<int>", "<list[", "<Path>"):
        assert marker not in outcome.output, outcome.output
    options = outcome.output.split("─ Options ─", 1)[1].split("─ Commands ─", 1)[0]
    if command == ["graph", "merge"]:
        assert "-o" in options and "OUTPUT" in options
