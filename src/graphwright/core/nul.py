"""NUL (U+0000) in text: PostgreSQL stores it in neither text nor JSON, so no backend takes it and
every backend gives the same answer. The refusal says where the NUL is."""

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
