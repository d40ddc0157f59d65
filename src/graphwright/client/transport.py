"""One way to reach the REST API, for a server over HTTP or the app in this process.

Requests run on a private event loop in a thread of its own, so the synchronous client works
inside Jupyter's running loop too. In-process, the FastAPI app is called through httpx's ASGI
transport (no port), with its lifespan entered on that loop: the client has one code path, the
REST API, in both cases.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import httpx
import orjson

from graphwright.client.errors import error_for
from graphwright.errors import GraphwrightError

T = TypeVar("T")
TIMEOUT = httpx.Timeout(300.0, connect=10.0)  # a chat turn with tools can take minutes
_END = object()


class Transport:
    """The REST API on a private event loop: `call` answers a request's envelope `data`."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="graphwright-client", daemon=True
        )
        self._thread.start()
        self._app_task: asyncio.Future[None] | None = None
        self._stop_app = asyncio.Event()
        try:
            if lifespan is not None:
                started: concurrent.futures.Future[None] = concurrent.futures.Future()
                self._app_task = asyncio.run_coroutine_threadsafe(
                    self._hold(lifespan, started), self._loop
                )
                started.result()
            self._client: httpx.AsyncClient = self.run(self._open(transport))
        except BaseException:
            self._stop()
            raise

    async def _hold(
        self,
        lifespan: Callable[[], AbstractAsyncContextManager[Any]],
        started: concurrent.futures.Future[None],
    ) -> None:
        """Hold the app's lifespan open, in one task (its task groups must exit where they
        entered), until `close`."""
        try:
            async with lifespan():
                started.set_result(None)
                await self._stop_app.wait()
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc)
            raise

    async def _open(self, transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=TIMEOUT, transport=transport
        )

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the client's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def set_token(self, token: str) -> None:
        self.token = token
        self._client.headers["Authorization"] = f"Bearer {token}"

    def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        envelope: bool = True,
    ) -> Any:
        """The `data` of the API's envelope (or the raw text when not `envelope`); a failure
        raises its typed GraphwrightError."""
        response = self.run(self._send(method, path, json=json, params=params))
        if not response.is_success:
            raise error_for(response.status_code, _json(response))
        if not envelope:
            return response.text
        return _json(response).get("data")

    def call_with_version(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None
    ) -> tuple[Any, int | None]:
        """The envelope's `data` and `version` (the graph's version after a write)."""
        return self.answer(self.start(method, path, json=json, params=params))

    def start(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None
    ) -> concurrent.futures.Future[httpx.Response]:
        """Send a request without waiting for it, so the caller works while the server does;
        `answer` waits for it."""
        coroutine = self._send(method, path, json=json, params=params)
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    @staticmethod
    def answer(sent: concurrent.futures.Future[httpx.Response]) -> tuple[Any, int | None]:
        """A started request's envelope `data` and `version`, or its typed GraphwrightError."""
        response = sent.result()
        body = _json(response)
        if not response.is_success:
            raise error_for(response.status_code, body)
        return body.get("data"), body.get("version")

    async def _send(
        self, method: str, path: str, *, json: Any, params: Mapping[str, Any] | None
    ) -> httpx.Response:
        content = orjson.dumps(json) if json is not None else None
        headers = {"Content-Type": "application/json"} if content is not None else None
        try:
            return await self._client.request(
                method, path, content=content, params=params, headers=headers
            )
        except httpx.HTTPError as exc:
            raise GraphwrightError(
                f"Cannot reach graphwright at {self.base_url}: {exc or type(exc).__name__}"
            ) from None

    def events(
        self, method: str, path: str, *, json: Any = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Server-sent events of one request, as `(event, data)` pairs, as they arrive."""
        inbox: queue.Queue[Any] = queue.Queue()
        future = asyncio.run_coroutine_threadsafe(
            self._pump(self._sse(method, path, json), inbox.put), self._loop
        )
        try:
            while (item := inbox.get()) is not _END:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            future.cancel()

    async def _pump(
        self, events: AsyncIterator[tuple[str, dict[str, Any]]], put: Callable[[Any], None]
    ) -> None:
        try:
            async for event in events:
                put(event)
        except BaseException as exc:
            put(exc)
        finally:
            put(_END)

    async def _sse(
        self, method: str, path: str, json: Any
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        content = orjson.dumps(json) if json is not None else None
        async with self._client.stream(method, path, content=content, headers=headers) as reply:
            if not reply.is_success:
                await reply.aread()
                raise error_for(reply.status_code, _json(reply))
            event, data = "message", []
            async for line in reply.aiter_lines():
                if not line:
                    if data:
                        yield event, orjson.loads("\n".join(data))
                    event, data = "message", []
                elif line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))

    def close(self) -> None:
        """Close the connection, leave the app's lifespan (in-process) and stop the loop."""
        if not self._thread.is_alive():
            return
        try:
            self.run(self._client.aclose())
            if self._app_task is not None:
                self._loop.call_soon_threadsafe(self._stop_app.set)
                self._app_task.result()
        finally:
            self._stop()

    def _stop(self) -> None:
        self.run(_cancel_others())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


async def _cancel_others() -> None:
    """Cancel what the app left running (sse-starlette's watcher) before the loop stops."""
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = orjson.loads(response.content)  # a few times faster than json on large pages
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
