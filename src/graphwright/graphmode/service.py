"""Graph Mode rules: one transaction and one new version per operation, undo/redo, time travel.

See docs/graph-mode.md for the change-log design. The REST API and the graph MCP server call these
methods; they never touch the repository themselves.
"""

from __future__ import annotations

from graphwright.graphmode.history import GraphHistory
from graphwright.graphmode.importing import GraphImports
from graphwright.graphmode.reads import GraphReads
from graphwright.graphmode.writes import GraphWrites


class GraphService(GraphReads, GraphWrites, GraphImports, GraphHistory):
    """Every Graph Mode operation; each concern lives in its own module (see the bases)."""
