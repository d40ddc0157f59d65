"""The pure model shared by every room: graphs, merge, formats, bibliography, artifact parts.

Nothing here does I/O or imports from the rooms.
"""
