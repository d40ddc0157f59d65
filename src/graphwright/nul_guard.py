"""One NUL rule at every REST boundary: a NUL (U+0000) in a path parameter, a query parameter or
any string of a JSON body is refused with 422 naming where it is, before any route runs, so
SQLite and PostgreSQL (which cannot store NUL) give the same answer (`core.nul`)."""

from __future__ import annotations

import anyio
import orjson
from fastapi import Request

from graphwright.core.nul import NUL, nul_path, nul_refusal
from graphwright.errors import InvalidInput

# JSON spells NUL only as this escape (a raw NUL byte is a syntax error): the bytes are searched
# for it only to skip parsing clean bodies; the parser decides, as `\\u0000` is no NUL.
_ESCAPED_NUL = b"\\u0000"


async def refuse_nul(request: Request) -> None:
    """The app-wide dependency: raise InvalidInput at the first NUL the request carries."""
    for name, value in request.path_params.items():
        if NUL in str(value):
            raise InvalidInput(nul_refusal(f"The path parameter '{name}'"))
    for name, value in request.query_params.multi_items():
        if NUL in name or NUL in value:
            raise InvalidInput(nul_refusal(f"The query parameter '{name}'"))
    if not _is_json(request.headers.get("content-type", "")):
        return
    body = await request.body()
    if _ESCAPED_NUL not in body:
        return
    try:
        # A body may be large: parsing it is not for the event loop.
        document = await anyio.to_thread.run_sync(orjson.loads, body)
    except orjson.JSONDecodeError:
        return  # the route's own validation answers a syntax error
    where = nul_path(document)
    if where is not None:
        raise InvalidInput(nul_refusal(f"The body field '{where}'"))


def _is_json(content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")
