"""A server keeps the tokens it checked, on PostgreSQL, only while it hears every revocation.

Every request checks its token; asking the database each time cost a thread hand-off and a round
trip per request, most of a small request's work under load (benchmarks/load_bench.py). A
revocation sends a NOTIFY with its commit, so every server forgets what it kept; while a server's
listener is away it keeps nothing. SQLite has no notifications: there every check reads the
file, so that a token revoked by another process (`graphwright token revoke`) is refused at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, text

from graphwright.auth.checked import CheckedTokens, revocation_notice
from graphwright.auth.models import Principal
from graphwright.auth.repository import TokenRepository
from graphwright.auth.service import AuthService, create_auth_service
from graphwright.db import Database
from graphwright.errors import Unauthorized

HEARD_WITHIN = 2.0  # seconds a revocation may take to reach another process


@pytest.fixture
def server(database: Database) -> Iterator[AuthService]:
    """The auth service of a running server, listening for revocations where it can."""
    auth = create_auth_service(database)
    auth.start()
    yield auth
    auth.close()


@pytest.fixture
def elsewhere(database_url: str) -> Iterator[AuthService]:
    """Another process's auth service on the same database (the CLI, another server)."""
    other = Database(database_url)
    yield AuthService(other)
    other.dispose()


@pytest.fixture
def statements(database: Database) -> Iterator[list[str]]:
    """The SQL statements the server's engine sends meanwhile."""
    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    event.listen(database.engine, "before_cursor_execute", record)
    yield sent
    event.remove(database.engine, "before_cursor_execute", record)


def until(condition: Callable[[], bool], seconds: float = HEARD_WITHIN) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def refused(auth: AuthService, token: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            auth.authenticate(token)
        except Unauthorized:
            return True
        return False

    return check


def test_a_checked_token_is_read_again_only_on_sqlite(
    database: Database, server: AuthService, statements: list[str]
) -> None:
    token = server.mint(label="reader")
    first = server.authenticate(token)
    statements.clear()
    assert server.authenticate(token) == first
    assert server.checked(token) == (None if database.is_sqlite else first)
    reads = [s for s in statements if "FROM auth_tokens" in s]
    assert len(reads) == (1 if database.is_sqlite else 0)


def test_a_token_revoked_by_another_process_is_refused(
    server: AuthService, elsewhere: AuthService
) -> None:
    token = server.mint(label="reader")
    server.authenticate(token)
    server.authenticate(token)
    elsewhere.revoke_token(token)
    assert until(refused(server, token))
    with pytest.raises(Unauthorized, match="revoked"):
        server.authenticate(token)
    assert server.checked(token) is None


def test_a_token_revoked_by_id_or_name_is_refused(
    server: AuthService, elsewhere: AuthService
) -> None:
    by_id, by_name = server.mint(label="a"), server.mint(label="b", purpose="reader")
    for token in (by_id, by_name):
        server.authenticate(token)
    elsewhere.revoke(server.authenticate(by_id).token_id)
    elsewhere.revoke_named("b", purpose="reader")
    assert until(refused(server, by_id)) and until(refused(server, by_name))


def test_a_revocation_forgets_only_the_tokens_it_names(
    database: Database, server: AuthService, elsewhere: AuthService, statements: list[str]
) -> None:
    """The chat revokes a token at the end of every Graph Mode turn: the others stay kept."""
    revoked, other = server.mint(label="turn"), server.mint(label="person")
    for token in (revoked, other):
        server.authenticate(token)
    elsewhere.revoke_token(revoked)
    assert until(refused(server, revoked))
    statements.clear()
    server.authenticate(other)
    reads = [s for s in statements if "FROM auth_tokens" in s]
    assert len(reads) == (1 if database.is_sqlite else 0)


def test_a_notice_naming_too_many_tokens_forgets_every_token() -> None:
    checked, now = CheckedTokens(), datetime.now(UTC)
    checked.hearing(True)
    for index in range(3):
        checked.keep(f"h{index}", Principal(index, None, None), None, checked.generation)
    checked.heard(revocation_notice(["h0"]))
    assert [checked.get(f"h{i}", now) is not None for i in range(3)] == [False, True, True]
    many = [f"{index:064x}" for index in range(200)]  # 200 hashes: past one NOTIFY's payload
    assert revocation_notice(many) == ""
    checked.heard(revocation_notice(many))
    assert [checked.get(f"h{i}", now) for i in range(3)] == [None, None, None]


def test_a_token_revoked_here_is_refused_at_once(server: AuthService) -> None:
    token = server.mint(label="reader")
    server.authenticate(token)
    server.revoke_token(token)
    with pytest.raises(Unauthorized, match="revoked"):
        server.authenticate(token)


def test_a_kept_token_past_its_expiry_is_refused(server: AuthService) -> None:
    # 2 s to be checked and kept in: a busy machine has taken more than 50 ms between two calls.
    token = server.mint(label="brief", ttl=timedelta(seconds=2))
    server.authenticate(token)
    time.sleep(2.1)
    with pytest.raises(Unauthorized, match="expired"):
        server.authenticate(token)


def test_nothing_is_kept_while_the_listener_is_away(
    database: Database, server: AuthService, elsewhere: AuthService, statements: list[str]
) -> None:
    """A revocation sent while the listener reconnects is never delivered: so a server that is
    not listening reads every token, and forgets what it kept before."""
    if database.is_sqlite:
        pytest.skip("nothing is kept on SQLite")
    token = server.mint(label="reader")
    server.authenticate(token)
    with database.engine.connect() as admin:
        admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": server.listener_pid})
    assert until(lambda: server.listener_pid is None)
    elsewhere.revoke_token(token)  # while nobody listens: the NOTIFY is lost
    with pytest.raises(Unauthorized, match="revoked"):
        server.authenticate(token)
    fresh = server.mint(label="fresh")
    assert until(lambda: server.listener_pid is not None, seconds=10)
    server.authenticate(fresh)
    statements.clear()
    server.authenticate(fresh)
    assert statements == []  # listening again, it keeps tokens again


def test_a_check_that_raced_a_revocation_is_not_kept(
    database: Database, server: AuthService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token read just before its revocation, whose NOTIFY arrives before the read is kept,
    must not be kept: the next check reads the database again."""
    token = server.mint(label="reader")
    real = TokenRepository.by_hash

    def read_then_revoked(repository: TokenRepository, token_hash: str) -> Any:
        row = real(repository, token_hash)
        server.forget_checked()  # what hearing a revocation does, meanwhile
        return row

    monkeypatch.setattr(TokenRepository, "by_hash", read_then_revoked)
    server.authenticate(token)
    assert server.checked(token) is None
    monkeypatch.setattr(TokenRepository, "by_hash", real)
    server.authenticate(token)
    assert server.checked(token) == (None if database.is_sqlite else server.authenticate(token))
