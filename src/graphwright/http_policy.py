"""Headers and methods every response of the app follows, API and web pages alike.

- No page may be framed by another site: `Content-Security-Policy: frame-ancestors 'self'`
  (same-origin frames, as the web UI's MCP Apps views use, keep working).
- The session cookie is `Secure` when the request came over HTTPS (`scope["scheme"]`, which
  uvicorn sets from `X-Forwarded-Proto` only for the proxies `GRAPHWRIGHT_TRUSTED_PROXIES` names)
  or always with `GRAPHWRIGHT_SECURE_COOKIES`.
- A method no route takes anywhere (TRACE, CONNECT, ...) gets 405 with `Allow`, never the UI's
  HTML 404; so does a method that the routes taking a path do not take (`wrong_method`, which
  the web UI's mount asks first: RFC 9110 wants `Allow` on every 405).
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphwright.envelope import failure

FRAME_ANCESTORS = "frame-ancestors 'self'"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class ResponsePolicy:
    def __init__(self, app: ASGIApp, *, secure_cookies: bool = False) -> None:
        self.app = app
        self.secure_cookies = secure_cookies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] not in METHODS:
            await self._refuse_method(scope, receive, send)
            return
        secure = self.secure_cookies or scope.get("scheme") == "https"

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                _frame_ancestors(headers)
                if secure:
                    _secure_cookies(headers)
            await send(message)

        await self.app(scope, receive, send_with_policy)

    async def _refuse_method(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app's own 405 (its `Allow` names the route's methods), or ours for any other
        answer, such as the web UI's HTML 404 for a path only its catch-all matches."""
        refused = False

        async def send_405(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start":
                refused = message["status"] != 405
                _frame_ancestors(MutableHeaders(scope=message))
            if not refused:
                await send(message)

        await self.app(scope, receive, send_405)
        if refused:
            response = method_not_allowed(
                f"{scope['method']} is not allowed on this server", METHODS
            )
            response.headers["Content-Security-Policy"] = FRAME_ANCESTORS
            await response(scope, receive, send)


def wrong_method(routes: Iterable[BaseRoute], scope: Scope) -> Response | None:
    """405 naming the methods the routes take at this request's path, when they take the path
    but not the request's method; None otherwise (a route takes it, or none takes the path)."""
    if allowed := _methods_taken(routes, scope):
        return method_not_allowed(f"{scope['method']} is not allowed on this route", allowed)
    return None


def _methods_taken(routes: Iterable[BaseRoute], scope: Scope) -> set[str]:
    """The methods the routes (mounts aside) take at this request's path; empty when one takes
    the request as it is. Each method is tried against the routes' own matching, which sees into
    included routers."""

    routes = [route for route in routes if not isinstance(route, Mount)]
    found = {route.matches(scope)[0] for route in routes}
    if Match.FULL in found or Match.PARTIAL not in found:  # one pass for the UI's own paths
        return set()

    def taken(method: str) -> bool:
        probe = {**scope, "method": method}
        return any(route.matches(probe)[0] is Match.FULL for route in routes)

    return {method for method in METHODS if taken(method)}


def method_not_allowed(message: str, allowed: Iterable[str]) -> Response:
    """405 in the envelope, with `Allow` naming `allowed` (in METHODS order)."""
    response = failure(405, "method_not_allowed", message)
    allowed = set(allowed)
    response.headers["Allow"] = ", ".join(m for m in METHODS if m in allowed)
    return response


def _frame_ancestors(headers: MutableHeaders) -> None:
    policy = headers.get("content-security-policy")
    if policy is None:
        headers["Content-Security-Policy"] = FRAME_ANCESTORS
    elif "frame-ancestors" not in policy:
        headers["Content-Security-Policy"] = f"{policy.rstrip('; ')}; {FRAME_ANCESTORS}"


def _secure_cookies(headers: MutableHeaders) -> None:
    cookies = headers.getlist("set-cookie")
    if not cookies:
        return
    del headers["set-cookie"]
    for cookie in cookies:
        attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
        headers.append("set-cookie", cookie if "secure" in attributes else f"{cookie}; Secure")
