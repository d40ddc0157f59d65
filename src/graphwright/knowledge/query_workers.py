"""Worker processes for untrusted SPARQL: the check, and the embedded store's queries.

A query from a person or a model is CPU work the server cannot interrupt from Python: Oxigraph
evaluates it in native code. So it runs in a worker process, one per slot, and a query past its
time limit stops because its worker is killed (and replaced on the next query), not because it
was asked to. The event loop only waits on a pipe.

Each worker leaves the network before it reads a query (a network namespace of its own, where
one is allowed), so that even a query the parser let through could not make the store fetch
from any address. The embedded store's queries read a read-only checkpoint of the store
(`EmbeddedStore.snapshot`), which no one writes while a worker reads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from graphwright.errors import InvalidInput
from graphwright.knowledge.query_check import CheckedQuery, InvalidQuery, QueryNotAllowed
from graphwright.knowledge.schemas import QueryAnswer
from graphwright.knowledge.sparql import QueryTimeout

logger = logging.getLogger(__name__)

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
# Where the idle scheduling class is not allowed, workers at least yield the CPU this much.
_WORKER_NICENESS = 10
_GROUP_NICENESS = 19  # of the workers' scheduling group (their autogroup): the lowest weight
_START_TIMEOUT = 60.0
_ERRORS: dict[str, type[InvalidInput]] = {
    "InvalidQuery": InvalidQuery,
    "QueryNotAllowed": QueryNotAllowed,
    "InvalidInput": InvalidInput,
}


class QueryWorkers:
    """At most `size` worker processes, each answering one request at a time.

    `start` starts them ahead of the first request, in a thread of its own; a request that
    finds none idle while they start waits for one of them instead of starting another.
    """

    def __init__(self, size: int = 2) -> None:
        self._size = size
        self._idle: list[_Worker] = []
        self._slots: asyncio.Semaphore | None = None
        self._busy: set[_Worker] = set()
        self._starting: set[_Worker] = set()
        self._launching = 0  # places taken by workers being started
        self._closed = False
        # Guards the sets and the count: the start ahead changes them from its own thread.
        self._changed = threading.Condition()

    def start(self) -> None:
        """Start up to `size` idle workers in a background thread, one after another (they
        compete for the CPU with what the server is doing). Returns at once."""
        threading.Thread(target=self._start_idle, name="query-workers-start", daemon=True).start()

    async def check(self, text: str, *, timeout: float) -> CheckedQuery:
        """The query, checked by the parser in a worker (see query_check.check_query)."""
        reply = await self._ask(("check", text, None, 0), timeout)
        return CheckedQuery(**{**reply, "variables": tuple(reply["variables"])})

    async def run(self, text: str, snapshot: Path, *, limit: int, timeout: float) -> QueryAnswer:
        """Check the query, then answer it from the store checkpoint at `snapshot`."""
        reply = await self._ask(("run", text, str(snapshot), limit), timeout)
        return QueryAnswer.model_validate(reply)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            workers = [*self._idle, *self._busy]
            starting = list(self._starting)
            self._idle.clear()
            self._busy.clear()
            self._changed.notify_all()
        for worker in starting:  # its starter sees it end, and cleans up
            worker.process.kill()
        for worker in workers:
            worker.kill()

    async def _ask(self, request: tuple[Any, ...], timeout: float) -> Any:
        """The worker's reply. The time limit counts from the call, so waiting for a free slot
        counts too; starting a worker does not (the server's cost, seconds on a busy machine)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._size)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            async with asyncio.timeout_at(deadline):
                await self._slots.acquire()
        except TimeoutError:
            raise QueryTimeout(timeout) from None
        try:
            # Not under the limit: a worker half started would be left behind.
            taking_since = loop.time()
            worker = self._take_idle() or await self._take_in_thread()
            deadline += loop.time() - taking_since
            try:
                async with asyncio.timeout_at(deadline):
                    reply = await worker.ask(request)
            except BaseException as exc:  # past the limit, or the caller went away: it stops
                self._put_back(worker, alive=False)
                await asyncio.to_thread(worker.kill)
                if isinstance(exc, TimeoutError):
                    raise QueryTimeout(timeout) from None
                raise
            self._put_back(worker, alive=True)
        finally:
            self._slots.release()
        if reply[0] == "ok":
            return reply[1]
        _, kind, message, details = reply
        error = _ERRORS.get(kind, InvalidInput)(message)
        if details:
            error.details = details  # type: ignore[attr-defined]
        raise error

    def _take_idle(self) -> _Worker | None:
        with self._changed:
            return self._busy_idle()

    def _busy_idle(self) -> _Worker | None:
        """An idle worker, now marked busy, or None. The caller holds `_changed`."""
        if not self._idle:
            return None
        worker = self._idle.pop()
        self._busy.add(worker)
        return worker

    async def _take_in_thread(self) -> _Worker:
        """`_take`, off the event loop. A caller that goes away meanwhile leaves the worker it
        would have had idle, not counted as busy for ever."""
        taking = asyncio.ensure_future(asyncio.to_thread(self._take))
        try:
            return await asyncio.shield(taking)
        except asyncio.CancelledError:

            def give_back(done: asyncio.Future[_Worker]) -> None:
                if not done.cancelled() and done.exception() is None:
                    self._put_back(done.result(), alive=True)

            taking.add_done_callback(give_back)
            raise

    def _take(self) -> _Worker:
        """An idle worker, marked busy; else a new one, unless the workers started ahead already
        fill every place: then the first of them that is ready. Blocks: run it in a thread."""
        with self._changed:
            while not self._idle and self._launching and self._count() >= self._size:
                self._changed.wait()
            if worker := self._busy_idle():
                return worker
            self._launching += 1
        return self._launch(busy=True)

    def _put_back(self, worker: _Worker, *, alive: bool) -> None:
        with self._changed:
            self._busy.discard(worker)
            if alive and not self._closed:
                self._idle.append(worker)
            self._changed.notify_all()

    def _start_idle(self) -> None:
        while True:
            with self._changed:
                if self._closed or self._count() >= self._size:
                    return
                self._launching += 1
            try:
                self._launch(busy=False)
            except InvalidInput as exc:  # the first query starts one again
                if not self._closed:
                    logger.warning("A query worker could not be started ahead: %s", exc)
                return

    def _launch(self, *, busy: bool) -> _Worker:
        """A new worker, in the place the caller reserved (`_launching`), then busy or idle.
        While it starts, `close` can stop it; after `close`, none starts."""
        try:
            worker = _Worker()
        except BaseException:
            self._give_up_place(None)
            raise
        with self._changed:
            self._starting.add(worker)
            if self._closed:
                worker.process.kill()
        try:
            worker.wait_ready()
        except BaseException:
            self._give_up_place(worker)
            raise
        with self._changed:
            self._launching -= 1
            self._starting.discard(worker)
            closed = self._closed
            if not closed:
                (self._busy.add if busy else self._idle.append)(worker)
            self._changed.notify_all()
        if closed:
            worker.kill()
            raise InvalidInput("The query workers are stopping")
        return worker

    def _give_up_place(self, worker: _Worker | None) -> None:
        with self._changed:
            self._launching -= 1
            if worker is not None:
                self._starting.discard(worker)
            self._changed.notify_all()

    def _count(self) -> int:
        return len(self._idle) + len(self._busy) + self._launching


class _Worker:
    """One worker process, started as `python -m graphwright.knowledge.query_workers` (never
    by multiprocessing, which would run the caller's main script again), and its pipes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            start_new_session=True,  # a scheduling group of its own: see `_yield_the_cpu`
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._to = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.conn = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()

    def wait_ready(self) -> None:
        """Until the worker's imports are done, so that starting one (seconds on a busy
        machine) never counts against a query's time limit; killed if it does not start."""
        try:
            ready = self.conn.poll(_START_TIMEOUT) and self.conn.recv() == ("ready",)
        except (EOFError, OSError):  # it ended first (killed by `close`)
            ready = False
        if not ready:
            self.kill()
            raise InvalidInput("A query worker did not start; try again")

    async def ask(self, request: tuple[Any, ...]) -> Any:
        loop = asyncio.get_running_loop()
        readable = loop.create_future()
        fd = self.conn.fileno()
        loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
        try:
            self._to.send(request)
            await readable
        finally:
            loop.remove_reader(fd)
            # uvloop (under `graphwright serve`) leaves a watched descriptor non-blocking, and
            # a reply longer than the pipe's buffer is then read half-way
            os.set_blocking(fd, True)
        try:
            return await asyncio.to_thread(self.conn.recv)
        except (EOFError, OSError):  # the worker died (out of memory, killed from outside)
            raise InvalidInput("The query stopped its worker; make it more selective") from None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(5)
        self._to.close()
        self.conn.close()


# -- in the worker process --------------------------------------------------------------------


def serve() -> None:
    """A worker's life: leave the network, then answer requests on stdin and stdout until
    stdin closes. What else writes to stdout goes to stderr."""
    requests = Connection(os.dup(0), writable=False)
    conn = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    _leave_network()  # first: a user namespace needs a process with one thread
    _die_with_the_server()
    import pyoxigraph  # noqa: F401  (imported before "ready", not during a query)

    from graphwright.knowledge import sparql  # noqa: F401
    from graphwright.knowledge.query_check import check_query

    check_query("ASK {}")  # the parser builds its grammar on first use: not within a limit
    stores: dict[str, Any] = {}
    _yield_the_cpu()  # only the queries are untrusted: the start runs at the server's priority
    conn.send(("ready",))
    while True:
        try:
            op, text, snapshot, limit = requests.recv()
        except (EOFError, OSError):
            return
        try:
            checked = check_query(text)
            if op == "check":
                conn.send(("ok", asdict(checked)))
                continue
            answer = _answer(stores, Path(snapshot), checked, limit)
            conn.send(("ok", answer.model_dump()))
        except InvalidInput as exc:
            conn.send(("error", type(exc).__name__, str(exc), getattr(exc, "details", None)))
        except SyntaxError as exc:  # Oxigraph's parser refused what rdflib's accepted
            conn.send(("error", "InvalidQuery", f"SPARQL syntax error: {exc}", None))


def _answer(stores: dict[str, Any], snapshot: Path, checked: CheckedQuery, limit: int) -> Any:
    import pyoxigraph as ox

    from graphwright.knowledge.sparql import Deadline, answer_from_oxigraph

    key = str(snapshot)
    if key not in stores:
        stores.clear()  # an older checkpoint is not read again
        stores[key] = ox.Store.read_only(key)
    # The default graph is the union of the named graphs, as on a DKG node: every graph in the
    # store is public (private triples never reach it). Naming the assets' graphs one by one
    # instead costs a scan of them all in every query.
    result = stores[key].query(checked.text, use_default_graph_as_union=True)
    return answer_from_oxigraph(result, limit=limit, deadline=Deadline(float("inf")))


def _yield_the_cpu() -> None:
    """Run only on CPU the server leaves idle (SCHED_IDLE), so that /health and edits answer
    while queries run. A nice value is not enough: a niced worker still keeps a core for a slice
    each time the server wakes, and an edit wakes a dozen times (benchmarks/load_bench.py, with
    the shared Oxigraph server run each way: edits p99 with hostile queries 400 ms niced, 173 ms
    idle-class).

    The class yields only within the worker's scheduling group. Left in the server's group, a
    busy worker keeps that group's full share against the groups of other processes, PostgreSQL
    among them, whose backends then wait for a CPU: 77 ms in the slowest 1% of edits with hostile
    queries, 16 ms with the store and the workers in groups of their own (benchmarks/load_bench.py,
    one 60 s run each). So the worker starts a session, which is an autogroup of its own, and
    gives that group the lowest weight. A server in a cgroup of its own (a systemd unit, a
    container) has no autogroups: there the unit's CPU weight decides (docs/knowledge.md)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):  # refused, or not Linux
        with contextlib.suppress(OSError):
            os.nice(_WORKER_NICENESS)
    with contextlib.suppress(OSError):  # a kernel without autogroups, or not Linux
        Path("/proc/self/autogroup").write_text(str(_GROUP_NICENESS))


def _die_with_the_server() -> None:
    """End when the server process ends, even in the middle of a query. A thread watches the
    parent: PR_SET_PDEATHSIG fires when the thread that started the worker ends, which in a
    server's thread pool can be long before the server does."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=watch, name="watch-the-server", daemon=True).start()


def _leave_network() -> bool:
    """Move this process into a network namespace of its own (no interface but a down
    loopback), so that nothing it runs can open a connection. True when that worked; where
    namespaces are not allowed, the parser's refusal of SERVICE is the guard."""
    libc = ctypes.CDLL(None, use_errno=True)
    if os.geteuid() == 0:
        return libc.unshare(_CLONE_NEWNET) == 0
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    try:  # keep our own uid and gid inside, so the store's files stay readable
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    except OSError:
        return True  # the namespace holds; files we cannot read fail loudly
    return True


if __name__ == "__main__":
    serve()
