"""A model's reply as a turn keeps it: any OpenAI-compatible server may answer text that no
backend stores (NUL, lone surrogates, which its SDK's JSON parser lets through). The reply is not
refused, as a person's message would be, but mended, before anyone sees, stores or calls it."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from graphwright.core.nul import storable, storable_text


def storable_reply(message: AIMessage) -> AIMessage:
    """`message` with NUL and lone surrogates in its text and its tool calls shown as U+FFFD."""
    content = message.content
    mended = storable_text(content) if isinstance(content, str) else storable(content)
    calls = [storable(call) for call in message.tool_calls]
    return message.model_copy(update={"content": mended, "tool_calls": calls})
