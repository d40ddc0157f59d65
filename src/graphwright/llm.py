"""The chat model: any LangChain chat model, named by `GRAPHWRIGHT_MODEL=provider:model`, with
`GRAPHWRIGHT_MODEL_BASE_URL` and `GRAPHWRIGHT_MODEL_API_KEY` passed to the provider.

A model that cannot start never stops the server: `load_chat_model` returns no model and one
line saying what is missing and how to set it, which `serve` prints and the web UI shows. The
chat then works through slash commands only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from pydantic import ValidationError

from graphwright.settings import Settings

SLASH_ONLY = "until then only slash commands work (/help lists them)"
NO_MODEL = (
    "No language model is configured: set GRAPHWRIGHT_MODEL=provider:model (for example "
    "openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or ollama:qwen2.5) and restart, "
    f"docs/chat.md shows each setup; {SLASH_ONLY}."
)
# The providers docs/chat.md documents, with the variable their LangChain class reads its key
# from; GRAPHWRIGHT_MODEL_API_KEY is passed instead when set.
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY",
    "google_genai": "GOOGLE_API_KEY",
    "mistralai": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
}
# Providers that have no endpoint of their own, with the variable their class reads it from.
ENDPOINT_VARIABLES = {"azure_openai": "AZURE_OPENAI_ENDPOINT"}
# Other variables a provider cannot start without, with an example value.
OTHER_VARIABLES = {"azure_openai": ("OPENAI_API_VERSION", "2024-10-21")}
# An OpenAI-compatible server that checks no key (vLLM, LM Studio, Ollama) still needs the
# OpenAI client to be given one.
UNCHECKED_KEY = "not-needed"


@dataclass(frozen=True)
class ModelSetup:
    """The configured model, or None and the one line that says what is missing and how to set
    it (`notice`)."""

    model: BaseChatModel | None
    notice: str | None = None


def load_chat_model(settings: Settings) -> ModelSetup:
    """The model `settings` name; never raises."""
    spec = (settings.model or "").strip()
    if not spec:
        return ModelSetup(None, NO_MODEL)
    provider = spec.split(":", 1)[0] if ":" in spec else None
    base_url = settings.model_base_url
    api_key = settings.model_api_key.get_secret_value() if settings.model_api_key else None
    named = f"GRAPHWRIGHT_MODEL={spec}"
    if missing := _missing_setting(provider, base_url, api_key):
        return ModelSetup(None, f"{named} {missing}; {SLASH_ONLY}.")
    options: dict[str, str] = {}
    if base_url:
        options["azure_endpoint" if provider == "azure_openai" else "base_url"] = base_url
    if api_key:
        options["api_key"] = api_key
    elif base_url and provider == "openai":
        options["api_key"] = UNCHECKED_KEY
    try:
        return ModelSetup(_chat_model(spec, provider, options))
    except ImportError as exc:
        return ModelSetup(None, f"{named}: {_first_line(exc)}; {SLASH_ONLY}.")
    except Exception as exc:  # each provider fails in its own way; all of them mean "no model"
        return ModelSetup(
            None,
            f"{named} could not start ({_first_line(exc)}); write it as provider:model, for "
            f"example openai:gpt-4o-mini, and see docs/chat.md; {SLASH_ONLY}.",
        )


def _chat_model(spec: str, provider: str | None, options: dict[str, str]) -> BaseChatModel:
    if provider == "openai":
        try:
            from graphwright.llm_openai import ChatOpenAISentAsBuilt
        except ImportError:  # no langchain-openai: init_chat_model says how to install it
            pass
        else:
            return ChatOpenAISentAsBuilt(model=spec.removeprefix("openai:"), **options)
    return init_chat_model(spec, **options)


def _missing_setting(provider: str | None, base_url: str | None, api_key: str | None) -> str:
    """What a provider we know needs and does not have, in words; "" when nothing is missing."""
    key_variable = KEY_VARIABLES.get(provider or "")
    openai_compatible = provider == "openai" and base_url
    if key_variable and not api_key and not os.environ.get(key_variable) and not openai_compatible:
        return f"has no API key: set GRAPHWRIGHT_MODEL_API_KEY (or {key_variable})"
    endpoint_variable = ENDPOINT_VARIABLES.get(provider or "")
    if endpoint_variable and not base_url and not os.environ.get(endpoint_variable):
        return f"has no endpoint: set GRAPHWRIGHT_MODEL_BASE_URL (or {endpoint_variable})"
    other = OTHER_VARIABLES.get(provider or "")
    if other and not os.environ.get(other[0]):
        return f"needs {other[0]}: set it, for example {other[0]}={other[1]}"
    return ""


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        text = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
    else:
        text = str(exc)
    lines = text.strip().splitlines()
    return lines[0].rstrip(".") if lines else type(exc).__name__
