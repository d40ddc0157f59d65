"""Tokens: minted once, stored hashed, scoped, expiring; `graphwright token create`."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from graphwright.auth.models import AuthToken
from graphwright.auth.service import AuthService, hash_token
from graphwright.db import Database
from graphwright.errors import Forbidden, InvalidInput, NotFound, Unauthorized


def test_token_is_stored_only_as_its_hash(database: Database) -> None:
    service = AuthService(database)
    token = service.mint(label="ci")
    with database.read() as session:
        stored = session.scalars(select(AuthToken)).one()
    assert stored.token_hash == hash_token(token) and token not in stored.token_hash
    principal = service.authenticate(token)
    assert principal.conversation_id is None and principal.actor == "ci"


def test_unknown_missing_and_revoked_tokens_are_refused(database: Database) -> None:
    service = AuthService(database)
    with pytest.raises(Unauthorized, match="required"):
        service.authenticate(None)
    with pytest.raises(Unauthorized, match="not valid"):
        service.authenticate("gw_guess")
    token = service.mint()
    service.revoke(service.authenticate(token).token_id)
    with pytest.raises(Unauthorized):
        service.authenticate(token)
    with pytest.raises(NotFound):
        service.revoke(999)


def test_expired_token_is_refused(database: Database) -> None:
    service = AuthService(database)
    token = service.mint(ttl=timedelta(microseconds=1))
    with pytest.raises(Unauthorized, match="expired"):
        service.authenticate(token)
    with pytest.raises(InvalidInput):
        service.mint(ttl=timedelta(0))
    assert service.authenticate(service.mint(ttl=timedelta(hours=1))).token_id > 0


def test_minting_drops_expired_tokens_and_keeps_the_rest(database: Database) -> None:
    service = AuthService(database)
    service.mint(conversation_id="c1", ttl=timedelta(microseconds=1))
    lasting = service.mint(conversation_id="c1", ttl=timedelta(hours=1))
    forever = service.mint()
    with database.read() as session:
        kept = set(session.scalars(select(AuthToken.token_hash)))
    assert kept == {hash_token(lasting), hash_token(forever)}


def test_scoped_token_only_reaches_its_conversation(database: Database) -> None:
    service = AuthService(database)
    principal = service.authenticate(service.mint(conversation_id="c1", ttl=timedelta(minutes=5)))
    AuthService.authorize(principal, "c1")
    with pytest.raises(Forbidden, match="'c1'"):
        AuthService.authorize(principal, "c2")


def test_cli_prints_the_token_alone_on_its_last_line(tmp_path: Path) -> None:
    env = {"GRAPHWRIGHT_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphwright",
            "token",
            "create",
            "--conversation",
            "c9",
            "--ttl",
            "2h",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    token = result.stdout.strip().splitlines()[-1]
    assert token.startswith("gw_") and " " not in token
    db = Database(f"sqlite:///{tmp_path / 'graphwright.db'}")
    try:
        principal = AuthService(db).authenticate(token)
    finally:
        db.dispose()
    assert principal.conversation_id == "c9"
    bad = subprocess.run(
        [sys.executable, "-m", "graphwright", "token", "create",
         "--ttl", "soon"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "--ttl" in bad.stderr
