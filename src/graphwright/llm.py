"""The language model every room that needs one loads: any LangChain chat model, named by
`GRAPHWRIGHT_MODEL=provider:model` (shared infrastructure, like `db.py`)."""

from __future__ import annotations

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

from graphwright.errors import InvalidInput


def load_chat_model(spec: str | None) -> BaseChatModel | None:
    """The model named by `spec`, or None when no model is configured."""
    if not spec or not spec.strip():
        return None
    try:
        return init_chat_model(spec.strip())
    except ImportError as exc:
        raise InvalidInput(f"GRAPHWRIGHT_MODEL={spec}: {exc}") from None
    except ValueError as exc:
        first_line = str(exc).strip().splitlines()[0]
        raise InvalidInput(
            f"GRAPHWRIGHT_MODEL={spec} is not a model LangChain can start ({first_line}); "
            "write it as provider:model, for example openai:gpt-4o-mini"
        ) from None
