"""`graphwright demo`: merge the sample tool results that ship with the package."""

from __future__ import annotations


def demo() -> None:
    """Merge the bundled sample tool results and print a summary table."""
    raise NotImplementedError
