"""Errors of the external sources."""

from __future__ import annotations

from graphwright.errors import GraphwrightError


class SourceUnavailable(GraphwrightError):
    """A remote source did not answer usefully (network error, HTTP error, malformed reply)."""
