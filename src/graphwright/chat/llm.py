"""What the chat says when no language model is configured (`graphwright.llm` loads one)."""

from __future__ import annotations

ENABLE_MODEL_HINT = (
    "No language model is configured, so only slash commands work (type /help to list them). "
    "To chat in plain language, set GRAPHWRIGHT_MODEL=provider:model (for example "
    "openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or ollama:qwen2.5), install the provider's "
    "LangChain package (langchain-openai, langchain-anthropic, langchain-ollama) and restart."
)
