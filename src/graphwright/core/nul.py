"""NUL (U+0000) in text: PostgreSQL stores it in neither text nor JSON, so no backend takes it and
every backend gives the same answer. The refusal says where the NUL is.

Text graphwright did not take from a person (a model's answer) is not refused but mended:
`storable_text` shows NUL and lone surrogates (not UTF-8, which PostgreSQL also refuses) as
U+FFFD."""

from __future__ import annotations

from typing import Any

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
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def storable(value: Any) -> Any:
    """A JSON-like value (a model's tool arguments) with `storable_text` applied to every string
    in it, keys included."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_text(str(key)): storable(child) for key, child in value.items()}
    if isinstance(value, list):
        return [storable(child) for child in value]
    return value
