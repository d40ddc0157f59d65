"""`token list` shows what its help says (the active tokens people made), hides the tokens
graphwright mints for itself (each has a purpose, and an expiry or a reason to need none), and
`--all` shows every token; `token create --name` names a token."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from graphwright.app import create_app
from graphwright.auth.service import AuthService
from graphwright.db import Database
from graphwright.settings import Settings
from tests.web.conftest import lifespan_in_own_task


def cli(
    home: Path, *args: str, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRAPHWRIGHT_HOME": str(home), "COLUMNS": "80"}
    if database_url:
        env["GRAPHWRIGHT_DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, "-m", "graphwright", *args],
        env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip


def test_the_list_holds_active_tokens_people_made_and_all_holds_every_one(
    database: Database,
) -> None:
    auth = AuthService(database)
    auth.mint(label="gone soon", ttl=timedelta(milliseconds=50))
    time.sleep(0.1)
    auth.revoke(auth.authenticate(auth.mint(label="revoked one")).token_id)
    auth.mint(label="ada")
    auth.mint(label="ada", conversation_id="c1", ttl=timedelta(minutes=30), purpose="a turn")
    # Not authenticated here: on a busy machine 50 ms can pass between minting and checking it.
    auth.mint(label="later gone", ttl=timedelta(milliseconds=50))
    time.sleep(0.1)
    assert [info.label for info in auth.list_tokens()] == ["ada"]
    listed = list(auth.list_tokens(everything=True))
    assert [info.label for info in listed] == ["later gone", "ada", "ada", "revoked one"]
    states = [info.state(info.created_at + timedelta(seconds=1)) for info in listed]
    assert states == ["expired", "active", "active", "revoked"]
    assert listed[0].state(listed[0].created_at) == "active"
    assert [info.internal for info in listed] == [False, True, False, False]


def test_graphwrights_own_tokens_say_why_and_expire_or_say_why_not(tmp_path: Path) -> None:
    app = create_app(Settings(_env_file=None, home=tmp_path, offline=True))  # type: ignore[call-arg]
    auth: AuthService = app.state.auth_service

    async def started() -> None:
        async with lifespan_in_own_task(app):
            chat = app.state.chat_service
            chat._database_context("c1", "ada")  # what a Graph Mode turn mints
            internal = [info for info in auth.list_tokens(everything=True) if info.internal]
            assert len(internal) == 2 and not auth.list_tokens()
            for info in internal:
                assert info.expires_at is not None or "revoked when the server stops" in (
                    info.purpose or ""
                )

    import anyio

    anyio.run(started)


def test_the_cli_names_tokens_lists_them_at_80_columns_and_all_adds_the_rest(
    tmp_path: Path,
) -> None:
    named = cli(tmp_path, "token", "create", "--name", "Ada Lovelace").stdout.splitlines()[-1]
    unnamed = cli(tmp_path, "token", "create").stdout.splitlines()[-1]
    old = cli(tmp_path, "token", "create", "--name", "old laptop").stdout.splitlines()[-1]
    db = Database(f"sqlite:///{tmp_path / 'graphwright.db'}")
    try:
        auth = AuthService(db)
        assert auth.authenticate(named).label == "Ada Lovelace"
        assert auth.authenticate(unnamed).label == getpass.getuser()
        auth.mint(label="ada", conversation_id="c1", ttl=timedelta(minutes=30), purpose="a turn")
        auth.revoke(auth.authenticate(old).token_id)
    finally:
        db.dispose()
    listed = cli(tmp_path, "token", "list").stdout
    assert "Ada Lovelace" in listed and "2 tokens" in listed
    assert "old laptop" not in listed and "a turn" not in listed
    assert "…" not in listed
    everything = cli(tmp_path, "token", "list", "--all").stdout
    assert "…" not in everything and "4 tokens" in everything
    assert "old laptop" in everything and "revoked" in everything and "a turn" in everything
