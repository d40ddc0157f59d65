"""The OpenAI provider's chat model, with the request body handed to the SDK as it is.

The OpenAI SDK walks every request's `messages` and `tools` against its typed dicts before it
sends them (`openai._utils._transform`): pure Python, on the event loop, in time that grows with
the conversation, and for these fields it changes nothing (they have no aliases and no formats).
With the server's other requests waiting for that loop and for the interpreter, it was the
largest part of a chat turn's time holding the interpreter (18% of it, sampled with py-spy
--gil under the load benchmark's chat turns). So they go in `extra_body`, which the SDK merges
into the JSON body unwalked; the rest of the request is built and checked as before.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_openai import ChatOpenAI

UNWALKED = ("messages", "tools")


class ChatOpenAISentAsBuilt(ChatOpenAI):
    """ChatOpenAI, with messages and tools sent as LangChain builds them (see the module)."""

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        # The Responses API sends `input`, and a structured answer is parsed from its request:
        # both as LangChain sends them.
        if "messages" not in payload or "response_format" in payload:
            return payload
        unwalked = {key: payload.pop(key) for key in UNWALKED if key in payload}
        extra_body = {**(payload.pop("extra_body", None) or {}), **unwalked}
        return {**payload, "messages": [], "extra_body": extra_body}
