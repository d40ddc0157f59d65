"""A thread that listens on one PostgreSQL notification channel for this process.

PostgreSQL delivers a `NOTIFY` only to connections listening when it commits: what is sent while
the listener reconnects is lost. So the listener says when it starts hearing and when it stops,
and whoever relies on hearing everything (a cache of checked tokens) keeps nothing meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5  # how often the thread looks up from the socket to see if it must stop
PING_SECONDS = 5.0  # a ping gives the TCP timeout below something to time out on
# A database that vanished without closing the connection (a host gone, a cable pulled) is
# noticed within about 10 s, not after the kernel's retransmissions (some 15 minutes).
CONNECTION_OPTIONS = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}


class PostgresListener:
    """LISTEN on `channel` in a daemon thread, handing each payload to `heard`, and reconnecting
    when the connection is lost. `hearing(True)` is called once the channel is listened to (again),
    `hearing(False)` as soon as it is not."""

    def __init__(
        self,
        url: str,
        channel: str,
        heard: Callable[[str], None],
        hearing: Callable[[bool], None] = lambda _listening: None,
    ) -> None:
        self._conninfo = make_url(url).set(drivername="postgresql").render_as_string(False)
        self.channel = channel
        self._heard = heard
        self._hearing = hearing
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # The server process of the connection, once it listens; None while it does not.
        self.backend_pid: int | None = None

    def start(self, wait: float = 10.0) -> None:
        """Start listening, and return once the channel is listened to, or after `wait` seconds
        if it cannot be yet (the thread goes on trying); a later call returns at once."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name=self.channel, daemon=True)
            self._thread.start()
        self._ready.wait(timeout=wait)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except psycopg.Error:
                log.warning("No connection listening on %s; retrying", self.channel, exc_info=True)
            finally:
                self.backend_pid = None
                self._hearing(False)
            self._stop.wait(1.0)

    def _listen(self) -> None:
        with psycopg.connect(self._conninfo, autocommit=True, **CONNECTION_OPTIONS) as connection:
            connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
            self._hearing(True)
            self.backend_pid = connection.info.backend_pid
            self._ready.set()
            pinged = time.monotonic()
            while not self._stop.is_set():
                for notice in connection.notifies(timeout=POLL_SECONDS):
                    self._heard(notice.payload)
                if time.monotonic() - pinged > PING_SECONDS:
                    connection.execute("SELECT 1")
                    pinged = time.monotonic()
