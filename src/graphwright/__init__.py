"""graphwright: turn AI tool calls into knowledge people can use."""

__version__ = "0.1.0"
