"""Jupyter views of graphwright's artifacts (anywidget; offline, nothing fetched from a CDN)."""

from graphwright.notebook.widgets import BibliographyView, GraphView

__all__ = ["BibliographyView", "GraphView"]
