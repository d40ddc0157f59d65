"""Tokens a server has checked, kept only while it hears of every revocation.

Every request checks its token. Reading the database each time cost a thread hand-off and a
round trip per request: under load, most of a small request's time (benchmarks/load_bench.py).
On PostgreSQL each revocation sends a NOTIFY with its commit, and every server's listener forgets
all it kept when one arrives. A NOTIFY sent while a listener reconnects is lost, so a server keeps
nothing while it is not listening, and forgets everything when it starts again. SQLite cannot
tell another process of a revocation (`graphwright token revoke`): there nothing is kept.

A check that read the database before a revocation, and would keep its answer after hearing of
it, must not: each check notes the generation it started in, and every forgetting starts a new
one. An answer is also kept at most `KEEP_SECONDS`, so that a token changed by other means than
graphwright's (an operator's SQL) is read again soon.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime

from graphwright.auth.models import Principal

REVOCATIONS = "graphwright_token_revocations"  # channels are per database: one name for all
NOTICE_LIMIT = 7000  # PostgreSQL refuses NOTIFY payloads of 8000 bytes or more
KEEP_SECONDS = 60.0
MOST_KEPT = 10_000  # past it, everything is forgotten: memory stays bounded


def revocation_notice(token_hashes: list[str]) -> str:
    """The NOTIFY payload naming revoked tokens: their hashes, or "" (forget every token) when
    they are too many for one notice."""
    notice = ",".join(token_hashes)
    return notice if len(notice) <= NOTICE_LIMIT else ""


@dataclass(frozen=True)
class _Kept:
    principal: Principal
    expires_at: datetime | None
    kept_at: float


class CheckedTokens:
    """Token hash -> the principal it stood for when checked, while `hearing` revocations."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}
        self._generation = 0
        self._hearing = False
        self._forgot_all = 0  # the generation in which everything was last forgotten
        self._forgot: dict[str, int] = {}  # token hash -> the generation it was last forgotten in

    @property
    def generation(self) -> int:
        """Note it before reading a token: `keep` takes the answer only if that token was not
        forgotten meanwhile."""
        return self._generation

    def get(self, token_hash: str, now: datetime) -> Principal | None:
        """The principal, if the token was checked, is still kept and has not expired since."""
        kept = self._kept.get(token_hash)
        if kept is None or time.monotonic() - kept.kept_at > KEEP_SECONDS:
            return None
        if kept.expires_at is not None and kept.expires_at <= now:
            return None  # the database says why: it has expired
        return kept.principal

    def keep(
        self, token_hash: str, principal: Principal, expires_at: datetime | None, generation: int
    ) -> None:
        with self._lock:
            forgot = max(self._forgot_all, self._forgot.get(token_hash, 0))
            if not self._hearing or forgot > generation:
                return
            if len(self._kept) >= MOST_KEPT:
                self._kept.clear()
            self._kept[token_hash] = _Kept(principal, expires_at, time.monotonic())

    def forget(self, token_hashes: list[str] | None = None) -> None:
        """These tokens (None: every token) were revoked, here or by a process that told us.
        A check of one of them under way meanwhile keeps nothing."""
        with self._lock:
            self._generation += 1
            if token_hashes is None or len(self._forgot) + len(token_hashes) > MOST_KEPT:
                self._forget_all()
                return
            for token_hash in token_hashes:
                self._kept.pop(token_hash, None)
                self._forgot[token_hash] = self._generation

    def heard(self, notice: str) -> None:
        """A revocation notice (see `revocation_notice`)."""
        self.forget(notice.split(",") if notice else None)

    def hearing(self, listening: bool) -> None:
        """The listener started (True) or stopped (False) hearing revocations."""
        with self._lock:
            self._hearing = listening
            self._generation += 1
            self._forget_all()

    def _forget_all(self) -> None:
        self._kept.clear()
        self._forgot.clear()
        self._forgot_all = self._generation
