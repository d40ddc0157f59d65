"""NUL (U+0000) in text: PostgreSQL stores it in neither text nor JSON, so no backend takes it and
every backend gives the same answer. The refusal says where the NUL is.

Text graphwright did not take from a person (a model's answer) is not refused but mended:
`storable_text` shows NUL and lone surrogates (not UTF-8, which PostgreSQL also refuses) as
U+FFFD."""

from __future__ import annotations

from typing import Any

import orjson

NUL = "\x00"


def nul_path(value: Any, where: str = "") -> str | None:
    """Where a JSON-like `value` (strings, dicts, lists) holds a NUL, as a dotted path with list
    indexes (`message.parts[0].text`; a key is named as such), or None when it holds none."""
    # An explicit stack: a hostile value may be nested deeper than Python's recursion limit.
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if NUL in item:
                return path or "the value"
        elif isinstance(item, dict):
            for key, child in item.items():
                if NUL in str(key):
                    return f"a key of {path or 'the object'}"
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(item))
    return None


def nul_refusal(where: str) -> str:
    """The message that refuses a value with a NUL at `where`."""
    return f"{where} contains a NUL character (\\u0000), which cannot be stored; remove it"


REPLACEMENT = "\ufffd"


def storable_text(text: str) -> str:
    """`text` with what no backend stores shown as U+FFFD: NUL, and surrogates that pair with
    none. A pair split across a stream's chunks, joined again, becomes its one character."""
    if NUL in text:
        text = text.replace(NUL, REPLACEMENT)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def storable(value: Any) -> Any:
    """A JSON-like value (a model's tool arguments, a tool's result) with `storable_text` applied
    to every string in it, keys included; the value itself when nothing needs it."""
    if _needs_nothing(value):
        return value
    # An explicit stack: a server's JSON may be nested deeper than Python's recursion limit.
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = storable_text(item)
        elif isinstance(item, dict):
            mended = {storable_text(str(name)): child for name, child in item.items()}
            container[key] = mended
            stack.extend((mended, name) for name in mended)
        elif isinstance(item, list):
            copied = list(item)
            container[key] = copied
            stack.extend((copied, index) for index in range(len(copied)))
    return root[0]


def _needs_nothing(value: Any) -> bool:
    """Whether `value` surely holds no NUL and no lone surrogate, asked of orjson's C encoder
    (a large tool result is walked in milliseconds): it refuses a lone surrogate, and writes a
    NUL as `\\u0000`. A false "maybe" (that text written out, a key that is not a string) only
    costs the walk."""
    try:
        encoded = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is one
        return False
    return b"\\u0000" not in encoded
