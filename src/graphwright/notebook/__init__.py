"""Jupyter views of graphwright's artifacts (anywidget; offline, nothing fetched from a CDN)."""

from graphwright.notebook.widgets import GraphView

__all__ = ["GraphView"]
